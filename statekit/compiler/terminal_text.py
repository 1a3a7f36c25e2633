"""Text from a chart made safe for a terminal: the one escaping function of terminal output.

A chart's names may hold any character but `.`, white space and a leading `*`:
an escape character (U+001B) would start a terminal control sequence, a
bidirectional override (U+202E) would reorder the line around it, a C1 control
(U+009B) is a control sequence introducer to some terminals. `terminal_text`
writes each such character as its Python escape (`\x1b`, `\u202e`), as the
`confusable-name` finding names it, and leaves every other character alone.
"""

from __future__ import annotations

import unicodedata

_UNSAFE_CATEGORIES = frozenset({"Cc", "Cf", "Cs", "Zl", "Zp"})


def is_noncharacter(char: str) -> bool:
    """Whether `char` is one of Unicode's 66 noncharacters (U+FDD0-U+FDEF, U+xFFFE, U+xFFFF):
    code points that are never to be interchanged (Graphviz refuses them)."""
    point = ord(char)
    return 0xFDD0 <= point <= 0xFDEF or point & 0xFFFE == 0xFFFE


def is_unsafe(char: str) -> bool:
    """Whether a terminal (or another reader) may act on `char` instead of showing it: a
    control, format or surrogate character, a line or paragraph separator, a noncharacter."""
    return unicodedata.category(char) in _UNSAFE_CATEGORIES or is_noncharacter(char)


def _escape(char: str) -> str:
    point = ord(char)
    if point < 0x100:
        return f"\\x{point:02x}"
    if point < 0x10000:
        return f"\\u{point:04x}"
    return f"\\U{point:08x}"


def terminal_text(text: str) -> str:
    """`text` with every character a terminal could act on written as its escape (`\\x1b`)."""
    if text.isprintable():  # no control, format, surrogate, separator or unassigned point
        return text
    return "".join(_escape(c) if is_unsafe(c) else c for c in text)
