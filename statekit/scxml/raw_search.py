"""`_event.raw.search(x) !== -1` (ECMAScript) as a substring test or `matches()` (statekit).

The W3C tests look for text in the raw HTTP request of an event
(`statekit.scxml.http_sends`) with `String.search`, whose result is -1 when the text
is absent. `search('text') !== -1` and `search(/text/) !== -1` (a regular expression
that is plain text) are rewritten to `('text' in _event.raw)`, `=== -1` to `not in`,
before the expression is tokenized. A regular expression with metacharacters
(`/this+is/`) becomes statekit's `matches(_event.data.raw, 'this+is')`, a search in
linear time by RE2, whose syntax agrees with ECMAScript's on such patterns; the
compiler checks the pattern like any chart's. That call is statekit text already:
it stands in the expression as a placeholder string (`'\\x00<n>'`, which no XML
document can hold) that the translation replaces.
"""

from __future__ import annotations

import re

_SEARCH = re.compile(
    r"_event\s*\.\s*raw\s*\.\s*search\s*\(\s*('[^'\\]*'|\"[^\"\\]*\"|/[^/\\]*/)\s*\)"
    r"\s*(!==|===|!=|==)\s*-\s*1\b"
)
_REGEX_SPECIAL = re.compile(r"[.*+?^${}()|\[\]\\]")
_PLACEHOLDER = "'\x00{}'"


def raw_searches(text: str) -> tuple[str, dict[str, str]]:
    """`text` with each `_event.raw.search(x) !== -1` rewritten (module docstring), and
    each placeholder string token → the statekit text it stands for."""
    computed: dict[str, str] = {}

    def rewrite(match: re.Match[str]) -> str:
        needle, operator = match.group(1), match.group(2)
        found = operator.startswith("!")
        if needle.startswith("/") and _REGEX_SPECIAL.search(needle[1:-1]):
            placeholder = _PLACEHOLDER.format(len(computed))
            call = f"matches(_event.data.raw, {needle[1:-1]!r})"
            computed[placeholder] = f"({call})" if found else f"(not {call})"
            return placeholder
        if needle.startswith("/"):
            needle = "'" + needle[1:-1].replace("'", "\\'") + "'"
        return f"({needle} {'in' if found else 'not in'} _event.raw)"

    return _SEARCH.sub(rewrite, text), computed
