"""Text in Graphviz DOT: the one escaping function of DOT labels and ids, and line wrapping.

Every value from a chart that lands in DOT text goes through `html` (an
HTML-like label) or `quoted` (a double-quoted string); `lines` wraps and
escapes in one call.
"""

from __future__ import annotations

from statekit.compiler.terminal_text import is_unsafe

WRAP = 24
"""Edge labels and state bodies wrap at this many characters (`--wrap`)."""

# Controls draw as a space; a surrogate or a noncharacter (which Graphviz refuses: "in label
# of node") as U+FFFD, the replacement character.
_CONTROL: dict[str, str] = {
    **{chr(code): " " for code in (*range(0x20), *range(0x7F, 0xA0))},
    **{chr(code): "\ufffd" for code in range(0xD800, 0xE000)},
    **{chr(code): "\ufffd" for code in range(0xFDD0, 0xFDF0)},
    **{
        chr(plane + low): "\ufffd"
        for plane in range(0, 0x110000, 0x10000)
        for low in (0xFFFE, 0xFFFF)
    },
}
_HTML = str.maketrans({**_CONTROL, "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;"})
_QUOTED = str.maketrans({**_CONTROL, "\n": "\\n", "\\": "\\\\", '"': '\\"'})


def html(text: str) -> str:
    """Escape text for a Graphviz HTML-like label: the one escaping function of DOT labels
    (controls become spaces, surrogates and noncharacters U+FFFD, format characters such
    as a bidirectional override entity references, so the DOT text is safe on a terminal)."""
    return _entities(text.translate(_HTML))


def quoted(text: str) -> str:
    """A DOT double-quoted string (for tooltips and ids): backslashes and quotes escaped, lines
    kept, other characters as `html` writes them."""
    return '"' + _entities(text.translate(_QUOTED)) + '"'


def _entities(text: str) -> str:
    if text.isprintable():
        return text
    return "".join(f"&#{ord(c)};" if c != "\n" and is_unsafe(c) else c for c in text)


def wrap_lines(text: str, width: int, longest: int = 0) -> list[str]:
    """`text` in lines of at most `width` characters (greedy, at spaces); a word longer
    than `longest` (default `width`) is cut, a shorter one keeps a line of its own."""
    longest = max(longest, width)
    lines: list[str] = []
    line = ""
    for word in text.split():
        while len(word) > longest:
            if line:
                lines.append(line)
                line = ""
            lines.append(word[:longest])
            word = word[longest:]
        if not line:
            line = word
        elif len(line) + 1 + len(word) <= width:
            line += " " + word
        else:
            lines.append(line)
            line = word
    if line or not lines:
        lines.append(line)
    return lines


def wrapped(texts: str | list[str], width: int) -> str:
    """Each text wrapped and escaped, all lines joined with `<BR/>`."""
    texts = [texts] if isinstance(texts, str) else texts
    return "<BR/>".join(html(line) for text in texts for line in wrap_lines(text, width))


LONGEST_WORD = 36
"""Label words up to this long are kept whole (an event or a field name), longer ones cut."""


def label_rows(trigger: str, guard: str, effects: str, note: str, width: int) -> list[str]:
    """The lines of an edge label: the trigger alone on the first line (drawn bold: no
    second font on a line whose widths a browser could measure apart), then `[guard]`,
    `/ effects` and `(note)`, each wrapped at `width` characters."""
    texts = [trigger]
    texts += [f"[{guard}]"] if guard else []
    texts += [f"/ {effects}"] if effects else []
    texts += [f"({note})"] if note else []
    return [row for text in texts for row in wrap_lines(text, width, LONGEST_WORD)]
