r"""confusable-name: a state, event or guard name that may not read as what it is.

A name can look like another, or like nothing, and still be a different
string: a reviewer then approves a chart that does something else than it
reads. Compilers warn about such identifiers in source code; this rule does
the same for the names a chart declares. It warns when a name contains

- a bidirectional control character (U+202A-U+202E, U+2066-U+2069, U+200E,
  U+200F, U+061C), which reorders how the text around it is displayed;
- an invisible character: a format character (zero-width space and joiners,
  U+2060, U+FEFF, the soft hyphen...), a control character, a space other
  than U+0020, or a filler that draws as nothing (U+3164, U+115F, U+1160,
  U+FFA0), or a noncharacter (U+FDD0-U+FDEF, U+FFFE, U+FFFF and their
  like in every plane);
- letters of several scripts (a Cyrillic `a`, U+0430, among Latin letters; a
  Greek omicron, U+03BF, in `stop`), except the combinations one language
  writes together: Latin with Han, Hiragana and Katakana (Japanese), with Han
  and Bopomofo (Chinese), with Han and Hangul (Korean);
- a character that is not in its normal form (NFKC): fullwidth or
  mathematical letters that look like ASCII ones, or a letter and its
  accent written as two characters where one exists.

A letter's script is read from its Unicode name (`unicodedata`). Names in one
script (plain ASCII, all-Cyrillic, CJK) are never flagged. A warning by
default; the finding names the character, its code point and Unicode name.

Failing::

    events:
      "P\u0410Y": {}       # YAML's escape for U+0410 CYRILLIC CAPITAL LETTER A
    states:
      pending: {on: {"P\u0410Y": paid}}
      paid: {final: true}

Passing::

    events:
      PAY: {}
    states:
      pending: {on: {PAY: paid}}
      paid: {final: true}
"""

from __future__ import annotations

import unicodedata
from collections.abc import Iterator
from typing import Final

from statekit.analysis.facts import ChartFacts
from statekit.compiler.diagnostics import Diagnostic, Severity, SourceSpan
from statekit.compiler.ir import CompiledChart
from statekit.compiler.terminal_text import is_noncharacter

SLUG = "confusable-name"
DEFAULT_SEVERITY = Severity.WARNING
STAGE = "chart"

_BIDI: Final = frozenset("\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069\u200e\u200f\u061c")
_FILLERS: Final = frozenset("\u3164\u115f\u1160\uffa0")
_WIDTHS: Final = ("FULLWIDTH ", "HALFWIDTH ")
_SCRIPT_ALIASES: Final = {"CJK": "HAN", "KANGXI": "HAN", "IDEOGRAPHIC": "HAN"}
_TOGETHER: Final = (
    frozenset({"LATIN", "HAN", "HIRAGANA", "KATAKANA"}),
    frozenset({"LATIN", "HAN", "BOPOMOFO"}),
    frozenset({"LATIN", "HAN", "HANGUL"}),
)


def _described(char: str) -> str:
    return f"{char!r} (U+{ord(char):04X} {unicodedata.name(char, 'unnamed')})"


def _invisible(char: str) -> str | None:
    """Why `char` reorders or hides text, or None."""
    if char in _BIDI:
        return "a bidirectional control character"
    category = unicodedata.category(char)
    if category == "Cf":
        return "an invisible format character"
    if category == "Cc":
        return "a control character"
    if category in ("Zs", "Zl", "Zp") and char != " ":
        return "a space character"
    if char in _FILLERS:
        return "a character that draws as nothing"
    if is_noncharacter(char):
        return "a noncharacter (never to be interchanged; Graphviz refuses it)"
    return None


def _script(char: str) -> str | None:
    """The script of a letter, read from its Unicode name (None for anything else)."""
    category = unicodedata.category(char)
    if not category.startswith("L") or category == "Lm":  # modifier letters: any script
        return None
    name = unicodedata.name(char, "")
    for prefix in _WIDTHS:
        name = name.removeprefix(prefix)
    if not name:
        return None
    first = name.split()[0]
    return _SCRIPT_ALIASES.get(first, first)


def problem(name: str) -> str | None:
    """Why `name` may be confused with another or hide part of itself, or None."""
    for char in name:
        why = _invisible(char)
        if why is not None:
            return f"contains {why}, {_described(char)}"
    if name.isascii():
        return None
    scripts: dict[str, str] = {}  # script -> its first letter in the name
    for char in name:
        script = _script(char)
        if script is not None:
            scripts.setdefault(script, char)
    if len(scripts) > 1 and not any(set(scripts) <= allowed for allowed in _TOGETHER):
        first, *others = scripts
        shown = ", ".join(f"{s.title()} {_described(scripts[s])}" for s in others)
        return f"mixes scripts: {first.title()} with {shown}"
    normal = unicodedata.normalize("NFKC", name)
    if normal != name:
        odd = next(
            (c for c in name if unicodedata.normalize("NFKC", c) != c),
            next((c for c in name if unicodedata.combining(c)), name[0]),
        )
        return f"is not in normal form (NFKC: {normal!r}): it contains {_described(odd)}"
    return None


def _names(chart: CompiledChart) -> Iterator[tuple[str, str, SourceSpan]]:
    for state in chart.states[1:]:
        yield "state", state.name, state.span
    for event in chart.events.values():
        yield "event", event.name, event.span
    for guard in chart.guards.values():
        yield "guard", guard.name, guard.span


def check(chart: CompiledChart, facts: ChartFacts) -> Iterator[Diagnostic]:
    """One finding per declared state, event or guard name that may be confused."""
    for kind, name, span in _names(chart):
        why = problem(name)
        if why is not None:
            yield Diagnostic(SLUG, DEFAULT_SEVERITY, f"{kind} name {name!r} {why}", span)
