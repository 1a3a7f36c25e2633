"""A plain scalar's type and value: YAML 1.1 as PyYAML resolves it, with the surprises off.

Only true/false (three spellings each) are booleans, so `on:`/`yes:` stay strings;
timestamps stay strings (no `=` value tag either); integers in any YAML 1.1 notation
are bounded by `INTEGER_BOUND` before and after they are built.
"""

from __future__ import annotations

import re
from typing import Final

import yaml
from yaml.constructor import SafeConstructor

from statekit.compiler.source.limits import INTEGER_BOUND, MAX_INTEGER_DIGITS
from statekit.compiler.source.nodes import Scalar

TAG_PREFIX: Final = "tag:yaml.org,2002:"
STR, INT, FLOAT, BOOL, NULL, MERGE, MAP, SEQ = (
    TAG_PREFIX + name for name in ("str", "int", "float", "bool", "null", "merge", "map", "seq")
)
SCALAR_TAGS: Final = frozenset({STR, INT, FLOAT, BOOL, NULL})
_BOOL_RE: Final = re.compile(r"^(?:true|True|TRUE|false|False|FALSE)$")

IMPLICIT: Final[dict[str, list[tuple[str, re.Pattern[str]]]]] = {
    first: [(tag, rx) for tag, rx in resolvers if tag in {INT, FLOAT, NULL, MERGE}]
    for first, resolvers in yaml.resolver.Resolver.yaml_implicit_resolvers.items()
}
"""Plain-scalar resolvers by first character: PyYAML's own YAML 1.1 int, float, null and
merge resolvers, with our narrow booleans first. A first character not here: a string."""
for _first in "tTfF":
    IMPLICIT.setdefault(_first, []).insert(0, (BOOL, _BOOL_RE))
_CONSTRUCTOR: Final = SafeConstructor()
_TOO_MANY_DIGITS: Final = f"more than {MAX_INTEGER_DIGITS} digits (the limit for chart integers)"


def short_tag(tag: str) -> str:
    """`!!int` for the core schema's tags, any other tag as written."""
    return "!!" + tag.removeprefix(TAG_PREFIX) if tag.startswith(TAG_PREFIX) else tag


def unsupported(tag: str) -> str:
    """The message for a tag beyond the core schema."""
    allowed = "!!str, !!int, !!float, !!bool, !!null, !!map, !!seq"
    return f"the tag {short_tag(tag)} is not supported (allowed: {allowed})"


def implicit_tag(value: str) -> str:
    """The tag of a plain, untagged scalar (`STR` when no resolver matches)."""
    resolvers = IMPLICIT.get(value[:1])
    if not resolvers:
        return STR
    return next((t for t, rx in resolvers if rx.match(value)), STR)


def typed_value(tag: str, value: str) -> Scalar:
    """The value of a scalar of the core schema's `tag` (the text itself for `STR`, `!`
    and `MERGE`); ValueError, OverflowError or IndexError when the text is not one."""
    if tag == NULL:
        return None
    if tag == BOOL:
        if _BOOL_RE.match(value):
            return value.lower() == "true"
        raise ValueError("only true and false (any case) are booleans")
    if tag == INT:
        return _integer(value)
    if tag == FLOAT:
        number: float = _CONSTRUCTOR.construct_yaml_float(yaml.ScalarNode(tag, value))
        return number
    return value


def _integer(value: str) -> int:
    """The integer of a `!!int` scalar in any YAML 1.1 notation, within `INTEGER_BOUND`;
    ValueError otherwise. The literal's own digits are counted before anything is
    built (a long sexagesimal literal would cost quadratic time), the value after."""
    body = value.lstrip("+-").replace("_", "")
    if not body:
        raise ValueError("no digits")
    if len(body) - 2 * (body[:2].lower() in ("0x", "0o", "0b")) > MAX_INTEGER_DIGITS:
        raise ValueError(_TOO_MANY_DIGITS)
    number = _CONSTRUCTOR.construct_yaml_int(yaml.ScalarNode(INT, value))
    if not isinstance(number, int) or not -INTEGER_BOUND < number < INTEGER_BOUND:
        raise ValueError(_TOO_MANY_DIGITS)
    return number
