"""A `<data>`'s value given as content rather than `expr`: inline text, or the file
its `src` names.

SCXML reads such content as a value, not an expression: JSON when it parses as
JSON, XML when it is XML, else a string with its white space normalized (each run
of spaces and line breaks one space, none at either end). Statekit's values are
JSON's scalars and lists, so a JSON scalar or list becomes the literal of that
value and other text a string; XML (a DOM value) and a JSON object (a record) have
no statekit value and are refused. A `src` is read once, at import, from a file
beside the document or below its folder (`file:values.json`, `values.json`);
another scheme, an absolute path or one that leaves the folder is refused, so a
document cannot pull in a file its reader did not hand over with it.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

from statekit.compiler.value_types import out_of_range
from statekit.scxml.context import literal
from statekit.scxml.document import Element, ScxmlError
from statekit.scxml.expressions import CONTENT_FIELD

Refuse = Callable[[Element, str], ScxmlError]
MAX_SRC_BYTES = 1_000_000
"""The largest file a `src` may name (its value becomes part of the chart)."""
_JSON_CONSTANTS = {"NaN", "Infinity", "-Infinity"}


def content_value(element: Element, document: str, refuse: Refuse) -> str | None:
    """The expression of the value of a `<data>` with inline content or a `src` (a
    literal); None when it is empty (SCXML's undefined)."""
    name = element.attrs.get("id", "")
    if element.children:
        raise refuse(element, f"<data id={name!r}> with XML content: an XML (DOM) value")
    text = element.text if "src" not in element.attrs else _read_src(element, document, refuse)
    text = text.strip()
    if not text:
        return None
    if text.startswith("<"):
        raise refuse(element, f"<data id={name!r}> with XML content: an XML (DOM) value")
    try:
        value = json.loads(text, parse_constant=_no_constant)
    except ValueError:
        return literal(re.sub(r"\s+", " ", text))
    except RecursionError:
        raise refuse(element, f"<data id={name!r}>: its JSON is nested too deeply") from None
    if value is None:
        return None
    return _literal_of(element, value, refuse)


def _no_constant(word: str) -> Any:
    raise ValueError(word)  # JSON has no NaN or Infinity: the text is a string


def _literal_of(element: Element, value: Any, refuse: Refuse) -> str:
    if isinstance(value, dict):
        raise refuse(element, f"<{element.tag}> with a JSON object: a record value")
    if isinstance(value, list):
        return "[" + ", ".join(_literal_of(element, item, refuse) for item in value) + "]"
    if value is None:
        return "null"
    problem = out_of_range(value)
    if problem is not None:
        raise refuse(element, f"<{element.tag}> with the JSON number {value!r}: it {problem}")
    return literal(value)


def _read_src(element: Element, document: str, refuse: Refuse) -> str:
    src = element.attrs["src"].strip()
    relative = src.removeprefix("file:")
    if re.match(r"^[A-Za-z][A-Za-z0-9+.-]*:", relative) or not relative:
        raise refuse(element, f"<data src={src!r}>: only a file beside the document is read")
    folder = Path(document).resolve().parent
    path = (folder / relative).resolve()
    if Path(relative).is_absolute() or not path.is_relative_to(folder):
        raise refuse(element, f"<data src={src!r}>: a file outside the document's folder")
    try:
        if path.stat().st_size > MAX_SRC_BYTES:
            raise refuse(element, f"<data src={src!r}>: larger than {MAX_SRC_BYTES} bytes")
        return path.read_text(encoding="utf-8-sig")
    except (OSError, UnicodeDecodeError) as error:
        reason = getattr(error, "strerror", None) or str(error)
        raise refuse(element, f"<data src={src!r}>: cannot be read ({reason})") from None


def structured_payload(content: Element, text: str, refuse: Refuse) -> dict[str, str]:
    """A `<send>`'s `<content>` of JSON as the payload (field → literal): an object's
    members are the payload's fields (`_event.data.x`, `_event.data['x']`), a list is
    the one field `content`. XML, a nested object (a record) and text that is not JSON
    are refused."""
    if content.children or text.startswith("<"):
        raise refuse(content, "<send> with XML <content>: an XML (DOM) value")
    try:
        value = json.loads(text, parse_constant=_no_constant)
    except ValueError:
        raise refuse(content, "<send> with <content> that is not JSON (an error)") from None
    except RecursionError:
        raise refuse(content, "<send> with <content>: its JSON is nested too deeply") from None
    if not isinstance(value, dict):
        return {CONTENT_FIELD: _literal_of(content, value, refuse)}
    payload: dict[str, str] = {}
    for name, member in value.items():
        if not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", name):
            raise refuse(content, f"<send> with JSON <content>: {name!r} is no field name")
        if member is None:
            raise refuse(content, f"<send> with JSON <content>: {name!r} is null (no type)")
        payload[name] = _literal_of(content, member, refuse)
    return payload
