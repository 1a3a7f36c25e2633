"""`_event.raw.search(x) !== -1` (ECMAScript) as `x in _event.raw` (statekit).

The W3C tests look for text in the raw HTTP request of an event
(`statekit.scxml.http_sends`) with `String.search`, whose result is -1 when the text
is absent. `search('text') !== -1` and `search(/text/) !== -1` are rewritten to
`('text' in _event.raw)`, `=== -1` to `not in`, before the expression is translated;
a regular expression with metacharacters (`/this+is/`) is `NotPlainText`, since the
expression language matches no regular expressions.
"""

from __future__ import annotations

import re

_SEARCH = re.compile(
    r"_event\s*\.\s*raw\s*\.\s*search\s*\(\s*('[^'\\]*'|\"[^\"\\]*\"|/[^/\\]*/)\s*\)"
    r"\s*(!==|===|!=|==)\s*-\s*1\b"
)
_REGEX_SPECIAL = re.compile(r"[.*+?^${}()|\[\]\\]")


class NotPlainText(ValueError):
    """A regular expression that is more than plain text."""


def raw_searches(text: str) -> str:
    """`text` with each `_event.raw.search(x) !== -1` rewritten (module docstring)."""

    def rewrite(match: re.Match[str]) -> str:
        needle, operator = match.group(1), match.group(2)
        if needle.startswith("/"):
            if _REGEX_SPECIAL.search(needle[1:-1]):
                raise NotPlainText(f"the regular expression {needle} (not plain text)")
            needle = "'" + needle[1:-1].replace("'", "\\'") + "'"
        return f"({needle} {'in' if operator.startswith('!') else 'not in'} _event.raw)"

    return _SEARCH.sub(rewrite, text)
