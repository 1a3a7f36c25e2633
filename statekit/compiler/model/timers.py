"""Delay literals and the names of timer events.

A delay literal is one or more `<digits><unit>` with the units `d h m s ms`,
each at most once and in that order (`250ms`, `30s`, `1h30m`, `7d`); its value
in milliseconds must fit a signed 64-bit integer. Its normalised form keeps the
units in that order, drops zero units and writes zero as `0ms`; it does not
carry (`90m` stays `90m`), so a literal is written back as its author wrote it
minus leading zeros and zero units.

A timer event is named after its `after` entry and owning state:
`after(<normalised literal>)@<path>`, `after(<expression source>)@<path>` for
`delay: expr`, `at(<expression source>)@<path>` for `at: expr` (the root's path
is ""). Identifiers contain neither `(` nor `@`, so a timer event never
collides with a declared event.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from statekit.compiler.ir import TimerKind

DELAY_FORMS = "250ms, 30s, 15m, 2h, 7d or combinations such as 1h30m"
"""The accepted forms, as every diagnostic about a delay literal names them."""

UNIT_MS: tuple[tuple[str, int], ...] = (
    ("d", 86_400_000),
    ("h", 3_600_000),
    ("m", 60_000),
    ("s", 1_000),
    ("ms", 1),
)
"""The units in the one order a literal may use them, with their length in milliseconds."""

MAX_DELAY_MS = 2**63 - 1
"""The largest delay: the runner stores due times as signed 64-bit integers."""

# `ms` before `m` in the alternation would not matter: each group is tried in turn
# and `m` must not be followed by `s` (else `1ms` would parse as minutes then `s`).
DELAY_PATTERN = r"(?:[0-9]+d)?(?:[0-9]+h)?(?:[0-9]+m(?!s))?(?:[0-9]+s)?(?:[0-9]+ms)?"
"""The grammar of a delay literal as a regular expression (the JSON Schema uses it too)."""

_LITERAL = re.compile(
    r"(?:(?P<d>[0-9]+)d)?(?:(?P<h>[0-9]+)h)?(?:(?P<m>[0-9]+)m(?!s))?"
    r"(?:(?P<s>[0-9]+)s)?(?:(?P<ms>[0-9]+)ms)?"
)
_MAX_DIGITS = 30  # longer digit runs cannot fit MAX_DELAY_MS; refused before int()


@dataclass(frozen=True, slots=True)
class DelayLiteral:
    """A parsed delay literal: its value in milliseconds and its normalised text."""

    ms: int
    normalised: str


def parse_delay(text: str) -> DelayLiteral | None:
    """The literal's value and normalised form, or None when `text` is not a delay literal
    (wrong grammar, or a value past `MAX_DELAY_MS`)."""
    match = _LITERAL.fullmatch(text)
    if match is None or not text:
        return None
    total = 0
    parts: list[str] = []
    for unit, length in UNIT_MS:
        digits = match.group(unit)
        if digits is None:
            continue
        if len(digits) > _MAX_DIGITS:
            return None
        value = int(digits)
        total += value * length
        if value:
            parts.append(f"{value}{unit}")
    if total > MAX_DELAY_MS:
        return None
    return DelayLiteral(ms=total, normalised="".join(parts) or "0ms")


def timer_event_name(kind: TimerKind, spec: str, path: str) -> str:
    """The timer event's name: `spec` is the normalised literal (AFTER) or the expression's
    source with its white space collapsed (DELAY, AT)."""
    spec = spec if kind is TimerKind.AFTER else " ".join(spec.split())
    word = "at" if kind is TimerKind.AT else "after"
    return f"{word}({spec})@{path}"


def format_delay(ms: int) -> str:
    """A millisecond count as the shortest literal with carrying (`5400000` → `1h30m`),
    for people (diagrams of `send` delays written as literals use their own text)."""
    if ms == 0:
        return "0ms"
    parts: list[str] = []
    rest = ms
    for unit, length in UNIT_MS:
        value, rest = divmod(rest, length)
        if value:
            parts.append(f"{value}{unit}")
    return "".join(parts)
