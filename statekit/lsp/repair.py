"""The index of a document whose YAML does not parse (the normal state while typing).

Hover, definition and references keep answering on the intact parts of such a
document: its index is built from the same text with the lines the YAML error
spans blanked (emptied, so that every other line keeps its line number and
columns, and every range in the index is a range of the text the editor shows;
nothing is answered from an older text). Which lines: first those that differ from
the last text of the document that parsed (the edit broke it), then, failing that
or without such a text, the line where what the parser was reading began (an
unclosed `{`, a key without its colon), the line above the one it complains about
and that line, each alone (of those that parse, the one that keeps the most
names), then the first and the last together, for up to `MAX_ROUNDS` errors. A
left-out line that is a bare name with deeper lines under it (a key whose colon was
deleted) is not emptied but gets its colon, so that the lines under it keep their
place, unless it sits right under a key with no value at its own indentation (then
it is a new line typed there, and the deeper lines are that key's). A text no such
repair makes parse has an empty index, as before.
"""

from __future__ import annotations

import difflib
import re
from dataclasses import dataclass

import yaml

from statekit.lsp.index import build_index
from statekit.lsp.names import Index

MAX_ROUNDS = 3
"""YAML errors repaired one after the other before the document is given up on."""
_BARE_KEY = re.compile(r"^ *[A-Za-z_][\w.-]* *$")
_EMPTY_KEY = re.compile(r"^ *[^\s#][^#]*: *(#.*)?$")
MAX_CHANGED_LINES = 40
"""An edit touching more lines than this is not blanked whole (a paste, a reformat)."""

try:
    from yaml import CSafeLoader as _Loader
except ImportError:  # pragma: no cover - PyYAML without libyaml
    from yaml import SafeLoader as _Loader  # type: ignore[assignment]


@dataclass(frozen=True, slots=True)
class RepairedIndex:
    """An index and the 0-based lines left out to build it (none: the text parsed)."""

    index: Index
    blanked: frozenset[int]


def repaired_index(text: str, parsed_before: str | None = None) -> RepairedIndex:
    """The index of `text`, or of `text` with the lines its YAML error spans blanked.

    `parsed_before` is the last text of the document that parsed, if any."""
    index = build_index(text)
    if index.root is not None:
        return RepairedIndex(index, frozenset())
    lines = text.split("\n")
    if parsed_before is not None:
        changed = _changed_lines(parsed_before.split("\n"), lines)
        if changed and len(changed) <= MAX_CHANGED_LINES:
            found = _try(lines, changed)
            if found is not None:
                return found
    blanked: frozenset[int] = frozenset()
    for _ in range(MAX_ROUNDS):
        marks = _error_lines(_blank(lines, blanked))
        if marks is None:
            break
        problem, context = marks
        before = _line_before(lines, problem, blanked)
        singles = [{n} for n in dict.fromkeys((context, before, problem)) if n is not None]
        for tries in (singles, [{problem, context}] if context is not None else []):
            repairs = [_try(lines, blanked | lines_to_blank) for lines_to_blank in tries]
            parsed = [r for r in repairs if r is not None]
            if parsed:
                return max(parsed, key=_names_kept)  # the first of the best, on a tie
        blanked |= {context if context is not None else problem}
    return RepairedIndex(index, frozenset())


def _names_kept(repaired: RepairedIndex) -> int:
    return len(repaired.index.declarations) + len(repaired.index.references)


def _try(lines: list[str], blanked: frozenset[int] | set[int]) -> RepairedIndex | None:
    index = build_index(_blank(lines, blanked))
    return RepairedIndex(index, frozenset(blanked)) if index.root is not None else None


def _line_before(lines: list[str], line: int, blanked: frozenset[int]) -> int | None:
    """The last line above `line` with something on it (the one a parser reads past)."""
    for n in range(min(line, len(lines)) - 1, -1, -1):
        if n not in blanked and lines[n].strip() and not lines[n].lstrip().startswith("#"):
            return n
    return None


def _blank(lines: list[str], blanked: frozenset[int] | set[int]) -> str:
    return "\n".join(_mended(lines, n) if n in blanked else line for n, line in enumerate(lines))


def _mended(lines: list[str], n: int) -> str:
    """A left-out line: empty, or a key whose colon is not typed yet (a bare name with
    deeper lines under it) with its colon, so that the lines under it keep their place."""
    line = lines[n]
    if not _BARE_KEY.match(line):
        return ""
    below = next((b for b in lines[n + 1 :] if _has_content(b)), "")
    above = next((a for a in reversed(lines[:n]) if _has_content(a)), "")
    if _indent(below) <= _indent(line):
        return ""  # nothing under it
    if _EMPTY_KEY.match(above) and _indent(above) == _indent(line):
        return ""  # a line typed under a key with no value yet: the deeper lines are that key's
    return line.rstrip() + ":"


def _has_content(line: str) -> bool:
    return bool(line.strip()) and not line.lstrip().startswith("#")


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip())


def _changed_lines(before: list[str], after: list[str]) -> frozenset[int]:
    """The lines of `after` that are not lines of `before` kept by the edit."""
    kept: set[int] = set()
    matcher = difflib.SequenceMatcher(None, before, after, autojunk=False)
    for block in matcher.get_matching_blocks():
        kept.update(range(block.b, block.b + block.size))
    return frozenset(n for n in range(len(after)) if n not in kept and after[n].strip())


def _error_lines(text: str) -> tuple[int, int | None] | None:
    """The 0-based lines of the YAML error of `text`: where the parser complains, and
    where what it was reading began (None: no such place, or no YAML error)."""
    try:
        for _ in yaml.parse(text, Loader=_Loader):
            pass
    except yaml.MarkedYAMLError as error:
        mark = error.problem_mark or error.context_mark
        if mark is None:
            return None
        last = max(text.count("\n"), 0)
        problem = min(mark.line, last)
        context = error.context_mark.line if error.context_mark is not None else None
        return problem, context if context != problem else None
    except yaml.YAMLError:
        return None
    return None
