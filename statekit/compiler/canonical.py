"""The canonical JSON text: the one form statekit hashes and stores.

Every text that is hashed, compared or stored (the chart digest, an event's
payload and its hash, the evidence, a context, the outbox's payloads, a
snapshot, the IR of `statekit compile`) is `canonical_json` of its value. The
form is defined in docs/canonical-json.md; in short it is exactly what
`json.JSONEncoder(sort_keys=True, separators=(",", ":"), ensure_ascii=False,
allow_nan=False)` writes: keys sorted by code point, no insignificant white
space, characters kept as they are (only `"`, `\\` and the controls below
U+0020 escaped), integers of any size in decimal, floats as Python's `repr`,
NaN and the infinities refused.

It is written by orjson (a C-backed encoder, its Rust in a CPython extension),
which writes these same bytes for almost every value and about 8 times faster than
the standard library (`bench/canonical_encoders.py`: 8.2 µs → 1.0 µs for the
task chart's evidence record). Where orjson writes something else or refuses,
the standard library's encoder writes the text, so the bytes never change:

- a float below 1e-4 (orjson writes `0.00001` and `1e-6` where `repr` writes
  `1e-05` and `1e-06`): seen in orjson's output as `e-` or `0.0000`;
- NaN and the infinities (orjson writes `null`): seen as `null`, and refused
  by the standard library's encoder;
- what orjson refuses and the standard library writes: integers beyond 64
  bits, strings with a lone surrogate, keys that are not strings, float
  subclasses, values nested deeper than 254 levels.

A value that holds one of those marks in a string (`"time-out"`, `"null"`)
takes the slower path too, and gets the same bytes. msgspec was measured as
well (1.5 µs) and writes floats from 1e16 up without the exponent's sign
(`1e16` for `1e+16`), which would need more of its output re-encoded.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from typing import Any

import orjson

_OPTIONS = orjson.OPT_SORT_KEYS | orjson.OPT_PASSTHROUGH_DATACLASS | orjson.OPT_PASSTHROUGH_DATETIME
"""Sorted keys; dataclasses and dates go to `_refused` (the standard library refuses them)
instead of being written as orjson writes them."""

_CHECKED = json.JSONEncoder(sort_keys=True, separators=(",", ":"), ensure_ascii=False)
"""The definition of the canonical form, and the encoder of every value orjson cannot
write in it."""


def _refused(value: object) -> Any:
    raise TypeError(f"Object of type {type(value).__name__} is not JSON serializable")


def canonical_json(value: Any) -> str:
    """The canonical JSON of `value` as a text: sorted keys, no insignificant white space,
    UTF-8 kept (see the module docstring); TypeError for a value JSON cannot hold,
    ValueError for a value that contains itself."""
    try:
        out = orjson.dumps(value, _refused, _OPTIONS)
    except TypeError:  # orjson.JSONEncodeError is a TypeError
        return _CHECKED.encode(value)
    if (b"e-" in out or b"0.0000" in out) and _SMALL_FLOAT.search(out) is not None:
        return _CHECKED.encode(value)
    if b"null" in out and _holds_non_finite(value):
        return _CHECKED.encode(value)
    return out.decode()


_SMALL_FLOAT = re.compile(rb"[0-9]e-[0-9]|0\.0000")
"""How orjson writes a float below 1e-4 (`1e-6`, `0.00001`), where `repr` writes `1e-06`
and `1e-05` (a string that holds the same characters takes the slower path as well)."""


def _holds_non_finite(value: Any) -> bool:
    """Whether a NaN or an infinity is anywhere in `value` (which orjson writes as `null`).

    Iterative, and only run when the text holds a `null`: 0.7 µs for the task chart's
    context, 3.5 µs for an evidence record with a null in it, against 2.4 µs and 4.9 µs
    for the standard library's encoder (`bench/canonical_encoders.py`)."""
    stack = [value]
    pop, push = stack.pop, stack.extend
    while stack:
        item = pop()
        cls = item.__class__
        if cls is str or cls is int or cls is bool or item is None:
            continue
        if cls is float:
            if item - item != 0.0:  # NaN - NaN and inf - inf are NaN
                return True
        elif cls is dict:
            push(item.values())
        elif cls is list or cls is tuple:
            push(item)
        elif isinstance(item, dict):
            push(item.values())
        elif isinstance(item, list | tuple):
            push(item)
    return False


canonical_string: Callable[[str], str] = json.encoder.encode_basestring
"""`canonical_json` of a string, without going through the encoder (the same C function
the standard library's encoder writes strings with when `ensure_ascii=False`)."""
