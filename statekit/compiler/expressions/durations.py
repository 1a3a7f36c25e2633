"""Duration literals inside expressions: `now + 15m`, `ctx.deadline - 2h`, `500ms`, `1h30m`.

Python's parser refuses `15m`, and nothing from a chart is ever evaluated, so
the literals are found in the text before `ast.parse`: a word outside string
literals that starts with a digit and is a delay literal of the timers' grammar
(`statekit.compiler.delay_literals`: units `d h m s ms`, each at most once and
in that order) is replaced by an identifier of underscores of the same length.
Every column of the expression is therefore unchanged: the checker looks the
identifier up by its column (`DurationLiterals.at`) and reads it as the integer
number of milliseconds, and every diagnostic keeps its position.

A word in the grammar whose value does not fit a signed 64-bit integer of
milliseconds is a problem at its own columns (`DurationLiterals.problems`). A
word outside the grammar is left to Python's parser; where it fails on a word
that starts with a digit and has a letter (`15min`, `1.5h`, `1m1h`), the
diagnostic names the accepted forms (`duration_mistake`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from statekit.compiler.delay_literals import DELAY_LITERAL, parse_delay

_WORD = re.compile(r"(?<![\w.])[0-9][0-9A-Za-z]*(?![\w.])")
"""A word that starts with a digit and is not part of a name or of a decimal number."""
_MISTAKE = re.compile(r"(?<![\w.])[0-9][0-9.]*[A-Za-z][0-9A-Za-z]*")
"""A word that starts with a digit and has a letter (`15min`, `1.5h`): a duration meant."""
DURATION_FORMS = (
    "a whole number of units d, h, m, s, ms, each at most once and in that order"
    " (15m, 1h30m, 500ms, 7d)"
)
_QUOTES = ("'''", '"""', "'", '"')


@dataclass(frozen=True, slots=True)
class DurationProblem:
    """A duration literal that cannot be kept: its columns `start:end` and why."""

    start: int
    end: int
    message: str


@dataclass(frozen=True, slots=True)
class DurationLiterals:
    """The expression's text with each duration literal replaced, and what was replaced."""

    text: str
    values: dict[int, int] = field(default_factory=dict)
    sources: dict[int, str] = field(default_factory=dict)
    problems: tuple[DurationProblem, ...] = ()

    def at(self, column: int) -> int | None:
        """The milliseconds of the duration literal that starts at `column`, or None."""
        return self.values.get(column)


def find_durations(text: str) -> DurationLiterals:
    """Replace every duration literal of `text` outside string literals (see the module)."""
    if not any(c.isdigit() for c in text):
        return DurationLiterals(text)
    chars = list(text)
    values: dict[int, int] = {}
    sources: dict[int, str] = {}
    problems: list[DurationProblem] = []
    for start, end in _code_stretches(text):
        for match in _WORD.finditer(text, start, end):
            word = match.group()
            begin = match.start()
            if DELAY_LITERAL.fullmatch(word) is None:
                continue
            literal = parse_delay(word)
            if literal is None:
                message = f"duration {word} does not fit in a signed 64-bit integer of milliseconds"
                problems.append(DurationProblem(begin, match.end(), message))
                continue
            values[begin] = literal.ms
            sources[begin] = word
            chars[begin : match.end()] = "_" * len(word)
    return DurationLiterals("".join(chars), values, sources, tuple(problems))


def duration_mistake(text: str, column: int) -> tuple[int, int, str] | None:
    """The word meant as a duration literal (`15min`, `1.5h`, `1m1h`) where Python's parser
    stopped at `column` of `text`'s first line: its columns and the message, or None."""
    line = text.split("\n", 1)[0]
    for match in _MISTAKE.finditer(line):
        if match.start() <= column < match.end() + 1:
            word = match.group()
            return match.start(), match.end(), f"{word} is not a duration literal: {DURATION_FORMS}"
    return None


def _code_stretches(text: str) -> list[tuple[int, int]]:
    """The `(start, end)` stretches of `text` outside string literals; an unterminated
    string ends the scan (Python's parser reports it)."""
    stretches: list[tuple[int, int]] = []
    i = start = 0
    n = len(text)
    while i < n:
        c = text[i]
        if c not in "'\"":
            i += 1
            continue
        stretches.append((start, i))
        quote = next(q for q in _QUOTES if text.startswith(q, i))
        i += len(quote)
        while i < n and not text.startswith(quote, i):
            i += 2 if text[i] == "\\" else 1
        if i >= n:
            return stretches
        i += len(quote)
        start = i
    stretches.append((start, n))
    return stretches
