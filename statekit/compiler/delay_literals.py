"""Delay literals: `<digits><unit>` groups with the units `d h m s ms`, in milliseconds.

A delay literal is one or more `<digits><unit>` with the units `d h m s ms`,
each at most once and in that order (`250ms`, `30s`, `1h30m`, `7d`); its value
in milliseconds must fit a signed 64-bit integer. Timers' `after:` keys and
`delay:` values use them (`statekit.compiler.model.timers`), and so do the
duration literals of expressions (`now + 15m`,
`statekit.compiler.expressions.durations`): one grammar, one parser.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

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

DELAY_LITERAL = re.compile(
    r"(?:(?P<d>[0-9]+)d)?(?:(?P<h>[0-9]+)h)?(?:(?P<m>[0-9]+)m(?!s))?"
    r"(?:(?P<s>[0-9]+)s)?(?:(?P<ms>[0-9]+)ms)?"
)
_MAX_DIGITS = 30  # more significant digits cannot fit MAX_DELAY_MS; refused before int()


@dataclass(frozen=True, slots=True)
class DelayLiteral:
    """A parsed delay literal: its value in milliseconds and its normalised text."""

    ms: int
    normalised: str


def parse_delay(text: str) -> DelayLiteral | None:
    """The literal's value and normalised form, or None when `text` is not a delay literal
    (wrong grammar, or a value past `MAX_DELAY_MS`)."""
    match = DELAY_LITERAL.fullmatch(text)
    if match is None or not text:
        return None
    total = 0
    parts: list[str] = []
    for unit, length in UNIT_MS:
        digits = match.group(unit)
        if digits is None:
            continue
        if len(digits.lstrip("0")) > _MAX_DIGITS:
            return None
        value = int(digits)
        total += value * length
        if value:
            parts.append(f"{value}{unit}")
    if total > MAX_DELAY_MS:
        return None
    return DelayLiteral(ms=total, normalised="".join(parts) or "0ms")
