"""What to do about a YAML syntax error: a hint for the mistakes people commonly make.

A parser says what it found (`mapping values are not allowed here`); the author
wants to know what to change. `yaml_hint` looks at the parser's problem and
context, at the characters where they point and at the lines around them, and
names the likely mistake with the fix, written out on the author's own line
where it can be: an unquoted `: ` inside a value, a tab in the indentation, a
key indented under a value, a quote or bracket left open, list items and keys
mixed at one level, a value that starts with a character YAML reserves. It
reads libyaml's wording and PyYAML's (they differ) and returns None when no
known mistake fits: a wrong hint is worse than none.

Three mistakes are valid YAML and are caught later, with notes from here: a
tag where an expression or a text was meant (`if: !ctx.done`: `tag_hint`, by
the loader), a key written twice under `on:` or `after:` (`duplicate_key_hint`,
by the loader), and nothing or a `key:value` text where a mapping belongs
(`mapping_hint`, by the schema's explanation).

Positions are 1-based (line, column), as in diagnostics.
"""

from __future__ import annotations

import re
from typing import Final

__all__ = ["duplicate_key_hint", "mapping_hint", "tag_hint", "yaml_hint"]

_BREAK: Final = re.compile("\r\n|[\r\n\x85\u2028\u2029]")  # line breaks as parsers count them
_RESERVED: Final = "@`%"  # cannot start a plain scalar (YAML 1.1 reserves @ and `)
_OPENERS: Final = {"{": "}", "[": "]"}
_GLUED_KEY: Final = re.compile(r"^([A-Za-z_][\w.-]*):([^\s:].*)$", re.S)
_ALTERNATIVES: Final = frozenset({"on", "after"})  # their keys map to a list of alternatives
_NEGATED: Final = re.compile(r"^!(?:ctx\.|event\.|active\(|\()")  # `!x` meant as "not x"
_FLOW_KEY: Final = re.compile(r"([^\s{}\[\],:]+):\s")

Position = tuple[int, int]


def yaml_hint(
    text: str, problem: str, context: str | None, at: Position, context_at: Position | None
) -> str | None:
    """A `hint: ...` note for the parser error `problem` (with its `context`) at `at`
    in `text`, or None when the error is not one of the known mistakes."""
    lines = _BREAK.split(text)
    source = _Source(lines, at, context_at)
    for rule in _RULES:
        hint = rule(source, problem, context or "")
        if hint is not None:
            return f"hint: {hint}"
    return None


def duplicate_key_hint(key: str, owner: str | None) -> tuple[str, ...]:
    """Notes for a key written twice in the mapping that is the value of `owner`: under
    `on:` or `after:` the author most likely meant two alternatives for one event."""
    if owner not in _ALTERNATIVES:
        return ()
    return (
        f"hint: to try several transitions for {key} in order, list them under one key: "
        f"`{key}: [{{to: a, if: ...}}, {{to: b}}]`",
    )


def mapping_hint(value: object) -> tuple[str, ...]:
    """Notes for `value` found where a mapping was expected: nothing (`assign:` with its
    entries level with it, not under it), or a key and value glued together (`idle:{}`:
    YAML reads `key:value` without a space as one text)."""
    if value is None:
        return ("nothing is indented under it: indent its entries deeper than its key",)
    match = _GLUED_KEY.match(value) if isinstance(value, str) else None
    if match is None:
        return ()
    key, rest = match.groups()
    return (f"YAML needs a space after `:` to start a value: write `{key}: {rest}`",)


def tag_hint(tag: str) -> tuple[str, ...]:
    """Notes for a value that YAML read as the local tag `tag` (`!ctx.done`, `!urgent`)."""
    if not tag.startswith("!") or tag.startswith("!!"):
        return ()
    if _NEGATED.match(tag):
        return (f"hint: `!` starts a YAML tag; an expression negates with `not`: `not {tag[1:]}`",)
    return (f"hint: `!` at the start of a value is a YAML tag: quote the value: `'{tag} ...'`",)


class _Source:
    """The text around an error: its line, the character at the error and at its context."""

    def __init__(self, lines: list[str], at: Position, context_at: Position | None) -> None:
        self.lines = lines
        self.line_no, column = at
        self.line = lines[self.line_no - 1] if self.line_no <= len(lines) else ""
        self.index = column - 1  # 0-based into `line`
        self.char = self.line[self.index] if self.index < len(self.line) else ""
        self.context_at = context_at
        self.context_char = ""
        if context_at is not None and context_at[0] <= len(lines):
            context_line = lines[context_at[0] - 1]
            if context_at[1] - 1 < len(context_line):
                self.context_char = context_line[context_at[1] - 1]

    def context_where(self) -> str:
        if self.context_at is None:
            return ""
        return f" at line {self.context_at[0]}, column {self.context_at[1]}"

    def value_after_key(self) -> tuple[str, str] | None:
        """(`key:` with any `- ` before it, the value after it) on the error's line."""
        colon = _key_colon(self.line)
        if colon is None:
            return None
        return self.line[: colon + 1].strip(), self.line[colon + 1 :].strip()

    def previous_content(self) -> tuple[int, str] | None:
        """The nearest line above the error's that holds more than a comment."""
        for number in range(self.line_no - 1, 0, -1):
            line = self.lines[number - 1]
            if line.strip() and not line.lstrip().startswith("#"):
                return number, line
        return None


def _key_colon(line: str) -> int | None:
    """The index of the line's first key indicator (`:` then a space or the end),
    outside quotes and before any comment; None if there is none."""
    quote = ""
    for index, char in enumerate(line):
        before = line[index - 1] if index else " "
        if quote:
            quote = "" if char == quote else quote
        elif char in "'\"" and before in " \t[{,-":
            quote = char
        elif char == "#" and before in " \t":
            return None
        elif char == ":" and line[index + 1 : index + 2] in ("", " ", "\t"):
            return index
    return None


def _quoted(value: str) -> str:
    """`value` as a YAML quoted scalar that reads back as the same text."""
    if '"' not in value and "\\" not in value:
        return f'"{value}"'
    if "'" not in value:
        return f"'{value}'"
    return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'


def _quote_it(source: _Source) -> str:
    """`, e.g. key: "value"` written from the error's own line, or the empty string."""
    pair = source.value_after_key()
    if pair is None or not pair[1]:
        return ""
    key, value = pair
    return f": `{key} {_quoted(value)}`"


# ---- the rules, most specific first -----------------------------------------------------


def _tab(source: _Source, problem: str, context: str) -> str | None:
    if source.char != "\t":
        return None
    if not source.line[: source.index].strip(" \t"):
        return "a tab in the indentation: YAML indents with spaces only; replace it with spaces"
    return "a tab between the parts of this line: YAML separates them with spaces; replace it"


def _unclosed_quote(source: _Source, problem: str, context: str) -> str | None:
    if "quoted scalar" not in context:
        return None
    quote = source.context_char if source.context_char in "'\"" else "quote"
    if "unknown escape" in problem:
        return (
            'inside double quotes `\\` starts an escape (`\\n`, `\\"`): write `\\\\` for a '
            "backslash, or use single quotes, in which `\\` is an ordinary character"
        )
    if "end of stream" in problem or "end of the stream" in problem:
        inside = {"'": "a ' inside '...' is written ''", '"': 'a " inside "..." is written \\"'}
        return (
            f"the {quote} opened{source.context_where()} is never closed: add the closing "
            f"{quote} at the end of the value ({inside.get(quote, 'or quote the other way')})"
        )
    return None


def _unclosed_flow(source: _Source, problem: str, context: str) -> str | None:
    if "flow mapping" not in context and "flow sequence" not in context:
        return None
    opener = source.context_char if source.context_char in _OPENERS else "{"
    closer = _OPENERS[opener]
    context_line = source.context_at[0] if source.context_at is not None else source.line_no
    if source.line_no > context_line:
        return (
            f"the `{opener}` opened{source.context_where()} is not closed: add `{closer}` "
            f"where it ends (or quote the value if `{opener}` is text, not a "
            f"{'mapping' if opener == '{' else 'list'})"
        )
    if source.char == ":" or ": " in source.line[: source.index]:
        return (
            f"inside `{opener}...{closer}` a `: ` separates a key from its value: quote a value "
            f"that contains `:` or `,` (`key: 'a: b'`)"
        )
    return f"entries inside `{opener}...{closer}` are separated by `,`: add the missing `,`"


def _colon_in_value(source: _Source, problem: str, context: str) -> str | None:
    if "mapping values are not allowed" not in problem:
        return None
    colon = _key_colon(source.line)
    if colon is not None and colon < source.index:
        return "a `: ` inside a value starts a mapping in YAML: quote the whole value" + _quote_it(
            source
        )
    previous = source.previous_content()
    if previous is None:
        return None
    number, line = previous
    column = len(line) - len(line.lstrip(" ")) + 1
    key = source.line[: source.index + 1].strip()
    if " " in key.removeprefix("- "):  # not a name: text that goes on from the line above
        return (
            f"a `: ` in text that goes on from line {number}: quote the whole value, or write "
            "it as a block (`>-`, the text on the lines below)"
        )
    return (
        f"`{key}` is indented under line {number} (`{line.strip()}`), which already has a "
        f"value, so YAML reads it as more of that value: start `{key}` in column {column} "
        f"to make it a sibling, or move the value of line {number} off its line to nest it"
    )


def _reserved_start(source: _Source, problem: str, context: str) -> str | None:
    if "mapping keys are not allowed" in problem and source.char == "?":
        char = "?"
    elif "cannot start any token" in problem and source.char and source.char in _RESERVED:
        char = source.char
    elif "a tag" in context and source.context_char == "!" and source.context_at is not None:
        line = source.lines[source.context_at[0] - 1][source.context_at[1] - 1 :]
        notes = tag_hint(line.split()[0].rstrip(",}]"))
        return notes[0].removeprefix("hint: ") if notes else None
    elif ("an alias" in context or "an anchor" in context) and source.context_char in "*&":
        char = source.context_char
    else:
        return None
    meaning = {
        "*": "an alias (`*name`)",
        "&": "an anchor (`&name`)",
        "?": "a complex key (`? key`)",
        "%": "a directive (`%YAML`)",
    }.get(char, "nothing yet (reserved)")
    return f"{char!r} at the start of a value means {meaning} in YAML: quote the value" + _quote_it(
        source
    )


def _indicator_in_flow(source: _Source, problem: str, context: str) -> str | None:
    if "cannot start any token" not in problem or source.char not in ("|", ">"):
        return None
    keys = _FLOW_KEY.findall(source.line[: source.index])
    which = f" of `{keys[-1]}`" if keys else ""
    return (
        f"`{source.char}` cannot continue a value inside `{{...}}` or `[...]` (a value that "
        f"starts with `{{` is a mapping): quote the value{which} (`if: '{{n}} > 1'`)"
    )


def _block_indicator(source: _Source, problem: str, context: str) -> str | None:
    if "block scalar" not in context:
        return None
    pair = source.value_after_key()
    if pair is not None and pair[1][:1] in _OPENERS:
        return (
            f"a value that starts with `{pair[1][0]}` is a YAML "
            f"{'mapping' if pair[1][0] == '{' else 'list'}: quote the whole value"
            + _quote_it(source)
        )
    return (
        "`|` or `>` starts a block of text on the lines below it, with nothing after it "
        "but `-`, `+` or a digit: move the text to the next lines, indented, or quote the value"
    )


def _mixed_levels(source: _Source, problem: str, context: str) -> str | None:
    stripped = source.line.lstrip(" ")
    first = source.index == len(source.line) - len(stripped)
    if "block mapping" in context and ("expected key" in problem or "<block end>" in problem):
        if stripped == "-" or stripped.startswith("- "):
            return (
                "a list item (`- `) among mapping keys at one level: a level holds either "
                "`key: value` entries or `- ` items; indent the items deeper than the key "
                "they belong to"
            )
        if not first:
            before = source.line[: source.index].rstrip()
            if before[-1:] in "'\"":
                return "text after a closing quote: quote the whole value, quotes inside it too"
            return None
        where = ""
        if source.context_at is not None:
            where = f" (the mapping{source.context_where()} has its keys in column "
            where += f"{source.context_at[1]})"
        return (
            f"this line's indentation matches no mapping above it{where}: keys of one "
            "mapping start in the same column"
        )
    if "block collection" in context and ("'-' indicator" in problem or "<block end>" in problem):
        return (
            f"a mapping key among list items (the list{source.context_where()}): a level holds "
            "either `- ` items or `key: value` entries; write it as an item (`- key: value`)"
        )
    return None


_RULES: Final = (
    _tab,
    _unclosed_quote,
    _unclosed_flow,
    _colon_in_value,
    _reserved_start,
    _indicator_in_flow,
    _block_indicator,
    _mixed_levels,
)
