"""Chart text made safe for Markdown: the one escaping function of Markdown output.

`markdown_text` for prose and names (the generated docs pages, the language
server's hovers), `markdown_code` for an inline code span. Both keep a value on
one line, so it can sit in a table cell.
"""

from __future__ import annotations

import re

_CODE_SPAN = re.compile(r"(?<!`)(`+)(?!`)(.+?)(?<!`)\1(?!`)")
_SPECIAL = re.compile(r"[\\`*\[\]<&!|~#@]|(?<![A-Za-z0-9])_|_(?![A-Za-z0-9])|://|(?<=www)\.")
_ENTITY = {"<": "&lt;", "&": "&amp;"}
_LINE_START = re.compile(r"^([-+=>]|\d+(?=[.)]))")


def markdown_text(value: str | None) -> str:
    """Chart text (a description, a name) as Markdown that renders as that text, on one line.

    Code spans written in the text (`like this`) stay code spans; everywhere else each
    character Markdown or GitHub would read as syntax is backslash-escaped: no HTML, no
    link or autolink, no emphasis, no table cell break, no list or heading. The one
    escaping function for Markdown: every value from a chart goes through it or
    `markdown_code`."""
    if not value:
        return ""
    value = " ".join(value.split())
    out: list[str] = []
    end = 0
    for span in _CODE_SPAN.finditer(value):
        out.append(_escaped(value[end : span.start()], at_start=end == 0))
        out.append(markdown_code(span.group(2).strip() or span.group(2)))
        end = span.end()
    out.append(_escaped(value[end:], at_start=end == 0))
    return "".join(out)


def _escaped(value: str, *, at_start: bool) -> str:
    value = _SPECIAL.sub(_escape_one, value)
    if at_start:
        value = _LINE_START.sub(
            lambda m: m.group() + "\\" if m.group()[0].isdigit() else "\\" + m.group(), value
        )
    return value


def _escape_one(match: re.Match[str]) -> str:
    found = match.group()
    if found == "://":
        return ":\\//"
    return _ENTITY.get(found) or "\\" + found


def markdown_code(value: str) -> str:
    """An inline code span holding `value` on one line, whatever backticks or pipes it holds."""
    value = " ".join(value.split()).replace("|", "\\|")
    longest = max((len(run) for run in re.findall(r"`+", value)), default=0)
    fence = "`" * (longest + 1)
    if longest or value.startswith(" ") or value.endswith(" "):
        return f"{fence} {value} {fence}"
    return f"{fence}{value}{fence}"
