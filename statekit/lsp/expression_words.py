"""The expression language's own words in the editor: `now`, `str()`, `format()`, the
text functions and duration literals, completed where an expression is written and
explained on hover."""

from __future__ import annotations

import re

from statekit.compiler.delay_literals import UNIT_MS, parse_delay
from statekit.compiler.markdown_text import markdown_code as code
from statekit.compiler.model.timers import format_delay
from statekit.lsp.records import CompletionItem, CompletionKind, Hover, Position, Range, TextEdit

NOW_DOC = (
    "**`now`**: the step's clock reading, an integer of epoch milliseconds (the `now_ms` "
    "the step was given, which the runner records and replays). A step that reads it "
    "without one is rejected with `CLOCK_REQUIRED`."
)
STR_DOC = (
    "**`str(x)`**: an integer in decimal, a string as it is, a boolean as `true` or "
    "`false`; e.g. `'inv-' + str(ctx.period)`."
)
FORMAT_DOC = (
    "**`format('inv-{}', x, ...)`**: the template (a string literal) with each `{}` "
    "filled by its argument written as `str()` writes it; `{{` and `}}` are braces; "
    "as many arguments as placeholders (at most 32)."
)
STARTS_WITH_DOC = (
    "**`starts_with(s, prefix)`**: whether the string `s` begins with `prefix`; "
    "`false` when `s` is null."
)
ENDS_WITH_DOC = (
    "**`ends_with(s, suffix)`**: whether the string `s` ends with `suffix`; "
    "`false` when `s` is null."
)
MATCHES_DOC = (
    "**`matches(s, 'pattern')`**: whether the regular expression (a string literal, "
    "RE2's syntax, checked when the chart compiles) is found anywhere in `s` "
    "(`^...$` for the whole string); linear time; `false` when `s` is null."
)
_WORDS: tuple[tuple[str, str, CompletionKind, str, str], ...] = (
    ("now", "now", CompletionKind.CONSTANT, "integer: the step's clock, epoch ms", NOW_DOC),
    ("str(", "str", CompletionKind.FUNCTION, "str(x) -> string", STR_DOC),
    ("format(", "format", CompletionKind.FUNCTION, "format('…{}…', x, ...) -> string", FORMAT_DOC),
    (
        "starts_with(",
        "starts_with",
        CompletionKind.FUNCTION,
        "(s, prefix) -> boolean",
        STARTS_WITH_DOC,
    ),
    ("ends_with(", "ends_with", CompletionKind.FUNCTION, "(s, suffix) -> boolean", ENDS_WITH_DOC),
    ("matches(", "matches", CompletionKind.FUNCTION, "(s, 'pattern') -> boolean", MATCHES_DOC),
)
_NUMBER = re.compile(r"[0-9]+(?:d|h|m|s|ms)?")
_WORD_AT = re.compile(r"[A-Za-z0-9_]+")


def expression_word_items(typed: str, rng: Range) -> list[CompletionItem]:
    """Completions for the word `typed` in an expression: duration units after digits
    (`15` → `15m`, `15s`...), else the words `now`, `str(`, `format(` and the text
    functions it begins."""
    if _NUMBER.fullmatch(typed):
        digits = typed.rstrip("dhms")
        return [
            CompletionItem(
                label=f"{digits}{unit}",
                kind=CompletionKind.UNIT,
                detail=f"duration: {int(digits) * length:,} ms",
                edit=TextEdit(range=rng, new_text=f"{digits}{unit}"),
                documentation=duration_doc(f"{digits}{unit}"),
            )
            for unit, length in UNIT_MS
        ]
    return [
        CompletionItem(
            label=label,
            kind=kind,
            detail=detail,
            edit=TextEdit(range=rng, new_text=label),
            documentation=doc,
        )
        for label, name, kind, detail, doc in _WORDS
        if name.startswith(typed) or not typed
    ]


def duration_doc(text: str) -> str | None:
    """Hover text of a duration literal, or None when `text` is not one."""
    literal = parse_delay(text)
    if literal is None or text.isdigit():
        return None
    shown = format_delay(literal.ms)
    same = "" if shown == text else f" ({code(shown)})"
    return (
        f"**duration** {code(text)}{same}: the integer {literal.ms:,} (milliseconds), "
        "as in `now + 15m`"
    )


def expression_word_hover(line: str, position: Position) -> Hover | None:
    """Hover on `now`, `str`, `format`, a text function or a duration literal at
    `position` of `line` (a line of an expression)."""
    for match in _WORD_AT.finditer(line):
        if not match.start() <= position.character < max(match.end(), match.start() + 1):
            continue
        word = match.group()
        before = line[match.start() - 1] if match.start() > 0 else ""
        if before == "." or _in_quotes(line, match.start()):
            return None
        docs = {name: doc for _, name, _, _, doc in _WORDS}
        markdown = docs.get(word) if not word[0].isdigit() else duration_doc(word)
        if markdown is None:
            return None
        rng = Range(Position(position.line, match.start()), Position(position.line, match.end()))
        return Hover(markdown=markdown, range=rng)
    return None


def _in_quotes(line: str, column: int) -> bool:
    """Whether `column` of `line` is inside a quoted string of the expression (a YAML
    scalar quoted as a whole counts as outside)."""
    text = line[:column]
    body = re.sub(r"^[^:]*:\s*[\"']?", "", text)
    return body.count("'") % 2 == 1
