"""IDs drawn so that no two read alike: `shown_id` and `plain_id`.

An instance ID or event ID is any text the runner accepts, so one can carry a line
break, a right-to-left override (U+202E turns "evil-rtl" into what reads as
"live-rtl"), a zero-width character or a space at either end, and read as another
ID. Where a page draws an ID, every control, format and line- or paragraph-separator
character is written as its escape (`\\n`, `\\t`, `\\u202e`), a space at either end
as `␠`, and the whole is isolated in `<bdi>` so that it cannot reorder the text
around it either. Links keep the ID itself (`layout.instance_href`).
"""

from __future__ import annotations

import unicodedata

from markupsafe import Markup

ESCAPES = {"\n": "\\n", "\r": "\\r", "\t": "\\t"}
"""The escapes written as in JSON and Python; any other such character is `\\uXXXX`."""
HIDDEN_CATEGORIES = frozenset(["Cc", "Cf", "Zl", "Zp", "Cs", "Co", "Cn"])
"""Unicode categories whose characters cannot be seen or move the text around them."""
EDGE_SPACE = "␠"


def plain_id(text: str) -> str:
    """`text` with its hidden characters escaped and its edge spaces as `␠` (module
    docstring); a text with neither is returned as it is. For titles, where no markup
    may go."""
    shown = "".join(_visible(c) for c in text)
    body = shown.strip(" ")
    if body == shown:
        return shown
    start = len(shown) - len(shown.lstrip(" "))
    end = len(shown) - len(shown.rstrip(" "))
    return EDGE_SPACE * start + body + EDGE_SPACE * end if body else EDGE_SPACE * len(shown)


def shown_id(text: str) -> Markup:
    """`plain_id(text)`, escaped, isolated in `<bdi>`."""
    return Markup('<bdi class="id">{}</bdi>').format(plain_id(text))


def _visible(char: str) -> str:
    if char in ESCAPES:
        return ESCAPES[char]
    if unicodedata.category(char) in HIDDEN_CATEGORIES:
        code = ord(char)
        return f"\\u{code:04x}" if code <= 0xFFFF else f"\\U{code:08x}"
    return char


BREAK_AFTER = frozenset("._(@/")
"""The characters after which a drawn identifier may wrap (never inside a word:
`PAY_SUCCESS` stays whole or breaks after its `_`)."""


def identifier(name: str) -> Markup:
    """`name` (a state path, an event type, a timer ID), escaped, with a `<wbr>` after
    each of `BREAK_AFTER`: a narrow cell wraps it there and nowhere else."""
    return Markup("").join(
        Markup("{}<wbr>").format(c) if c in BREAK_AFTER else Markup("{}").format(c) for c in name
    )
