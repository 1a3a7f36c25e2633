"""Reading JSON text the runner did not write itself: input lines and stored columns.

`parse_json` is `json.loads` with bounds: nesting at most `MAX_DEPTH` deep
(deeper text is refused before Python's recursion limit is reached anywhere
later, by the parser, the canonical encoder or a comparison), and no lone
surrogate (`"\\ud800"`) in any key or string, which no UTF-8 text, database
column or hash can hold. Every refusal is a `ValueError` saying what is wrong.
"""

from __future__ import annotations

import json
from typing import Any

MAX_DEPTH = 64
"""How deeply arrays and objects may nest in a JSON text the runner reads (an input
line or a stored column); a valid line nests 2 deep (a payload holds scalars)."""


def parse_json(text: object) -> Any:
    """The value of the JSON `text`; ValueError when it is not JSON, nests deeper than
    `MAX_DEPTH` or holds a lone surrogate (or is not a text at all: a damaged column)."""
    if not isinstance(text, str):
        raise ValueError(f"not a text but {type(text).__name__}")
    try:
        value = json.loads(text)
    except RecursionError:
        raise ValueError(f"JSON nested deeper than {MAX_DEPTH} levels") from None
    problem = check_value(value)
    if problem is not None:
        raise ValueError(problem)
    return value


def check_value(value: Any) -> str | None:
    """Why the parsed JSON `value` cannot be used (too deep, a lone surrogate), or None.

    Iterative, so that it never recurses however deep the value is.
    """
    stack: list[tuple[Any, int]] = [(value, 0)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, str):
            if not _encodable(item):
                return f"a string holds a lone surrogate: {_shown(item)}"
            continue
        if not isinstance(item, (dict, list)):
            continue
        if depth >= MAX_DEPTH:
            return f"JSON nested deeper than {MAX_DEPTH} levels"
        if isinstance(item, dict):
            for key, member in item.items():
                if not _encodable(key):
                    return f"a key holds a lone surrogate: {_shown(key)}"
                stack.append((member, depth + 1))
        else:
            stack.extend((member, depth + 1) for member in item)
    return None


def _encodable(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def _shown(text: str) -> str:
    shown = json.dumps(text[:40])
    return shown if len(text) <= 40 else shown[:-1] + '…"'
