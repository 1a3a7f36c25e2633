"""The difference between two contexts, by key path: what a step changed, field by field.

A context is JSON data (objects, arrays, scalars). `context_diff(before, after)`
walks both and lists every leaf that was added, removed or changed, with its
path written as the chart's expressions read it (`refund.amount`, `items[2]`);
an object key that is not an identifier is quoted (`labels["a b"]`). Objects
are compared key by key and arrays position by position, so a change deep in
a large value is one line, not the whole value twice.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any

ADDED, REMOVED, CHANGED = "added", "removed", "changed"
_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_ABSENT = object()


@dataclass(frozen=True, slots=True)
class ContextChange:
    """One leaf that differs: its key path, `added`/`removed`/`changed`, and its value
    before and after (None where it is absent: `kind` says which)."""

    path: str
    kind: str
    before: Any
    after: Any


def context_diff(before: Mapping[str, Any], after: Mapping[str, Any]) -> tuple[ContextChange, ...]:
    """Every leaf of `before` and `after` that differs, in key order (see the module
    docstring)."""
    return tuple(_walk("", before, after))


def _walk(path: str, old: Any, new: Any) -> Iterator[ContextChange]:
    if isinstance(old, Mapping) and isinstance(new, Mapping):
        for key in sorted(set(old) | set(new), key=str):
            yield from _walk(
                _key_path(path, str(key)), old.get(key, _ABSENT), new.get(key, _ABSENT)
            )
        return
    if isinstance(old, list) and isinstance(new, list):
        for index in range(max(len(old), len(new))):
            yield from _walk(
                f"{path}[{index}]",
                old[index] if index < len(old) else _ABSENT,
                new[index] if index < len(new) else _ABSENT,
            )
        return
    if _same(old, new):
        return
    if old is _ABSENT:
        yield ContextChange(path, ADDED, None, new)
    elif new is _ABSENT:
        yield ContextChange(path, REMOVED, old, None)
    else:
        yield ContextChange(path, CHANGED, old, new)


def _same(old: Any, new: Any) -> bool:
    """Equal as JSON values (scalars, or containers of different kinds): `1` and `1.0`
    are the same number, `true` is not `1`."""
    if old is _ABSENT or new is _ABSENT:
        return old is new
    if type(old) is bool or type(new) is bool:
        return type(old) is type(new) and old == new
    return bool(old == new)


def _key_path(path: str, key: str) -> str:
    if _IDENTIFIER.fullmatch(key):
        return f"{path}.{key}" if path else key
    return f"{path}[{json.dumps(key, ensure_ascii=False)}]"
