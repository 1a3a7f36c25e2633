"""The text functions of the expression language: `starts_with`, `ends_with`, `matches`.

`matches(s, 'pattern')` searches `s` for a regular expression written as a string
literal. The pattern is compiled once, when the chart compiles, by RE2 (the
`google-re2` package), never by Python's `re`: `re` backtracks, so a pattern such as
`(a+)+$` takes time exponential in the length of an input like `'aaa...ab'` (every
extra `a` doubles it; 40 of them take hours), and a guard over a payload field a sender
controls would let that sender stall every step. RE2 compiles the pattern to an
automaton and searches in time linear in the input, whatever the pattern; it refuses
what only backtracking can do (backreferences `\\1`, look-around `(?=...)`), and that
refusal is the chart's compile error, quoting RE2's message.

Each function takes a null first argument as a string that starts, ends and matches
nothing: the result is `false`, as `==` finds null unequal to every string.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import lru_cache
from typing import Any

import re2

TEXT_FUNCTIONS = ("starts_with", "ends_with", "matches")
"""The names of the text functions, as an expression calls them."""


class PatternError(ValueError):
    """A pattern RE2 does not accept; the message is RE2's."""


@lru_cache(maxsize=512)
def _compiled(pattern: str) -> Any:
    options = re2.Options()
    options.log_errors = False  # the error is reported as a diagnostic, not on stderr
    try:
        return re2.compile(pattern, options=options)
    except re2.error as error:
        detail = error.args[0] if error.args else "not a regular expression"
        text = detail.decode("utf-8", "replace") if isinstance(detail, bytes) else str(detail)
        raise PatternError(text) from None


def pattern_problem(pattern: str) -> str | None:
    """RE2's message when it does not accept `pattern`, else None."""
    try:
        _compiled(pattern)
    except PatternError as error:
        return str(error)
    return None


def pattern_search(pattern: str) -> Callable[[str | None], bool]:
    """Whether the (checked) `pattern` is found anywhere in a string; false for null.
    Anchor it (`^...$`) to match the whole string."""
    search = _compiled(pattern).search
    return lambda text: text is not None and search(text) is not None


def starts_with(text: str | None, prefix: str) -> bool:
    """Whether `text` begins with `prefix`; false for a null `text`."""
    return text is not None and text.startswith(prefix)


def ends_with(text: str | None, suffix: str) -> bool:
    """Whether `text` ends with `suffix`; false for a null `text`."""
    return text is not None and text.endswith(suffix)
