"""String methods and regular-expression searches of SCXML expressions, as statekit's
text functions (`starts_with`, `ends_with`, `matches`: docs/dsl.md, "Text").

- `x.startswith(y)` / `x.endswith(y)` (python) and `x.startsWith(y)` / `x.endsWith(y)`
  (ECMAScript), where `x` is a declared `<data>` or a string literal, open
  `starts_with(x, ...` / `ends_with(x, ...`: the argument is translated as any other
  tokens are, and its closing parenthesis closes the call.
- `re.search('pattern', x)` (python), `x` a declared `<data>`, is `matches(ctx.x,
  'pattern')`; followed by `is not None` it is the same, by `is None` its negation.

Python raises on `None.startswith(...)` (an `error.execution`); statekit's functions
read a null `x` as a string that starts with nothing: the condition is false either way.
The regular expressions of ECMAScript's `_event.raw.search(/.../)` are found before the
expression is tokenized (`statekit.scxml.raw_search`).
"""

from __future__ import annotations

_METHODS = {
    "startswith": "starts_with",
    "endswith": "ends_with",
    "startsWith": "starts_with",
    "endsWith": "ends_with",
}

Tokens = list[tuple[str, str]]


def string_method(tokens: Tokens, index: int) -> tuple[str, int] | None:
    """At `x.startswith(` (or another method of `_METHODS`) starting at `tokens[index]`:
    the statekit function's name and the index of the first token of its argument;
    None for anything else."""
    words = [value for _, value in tokens[index + 1 : index + 4]]
    if tokens[index][0] not in ("name", "string") or len(words) < 3:
        return None
    if words[0] != "." or words[1] not in _METHODS or words[2] != "(":
        return None
    return _METHODS[words[1]], index + 4


def method_call_end(words: list[str]) -> int | None:
    """When `words` start with `x.startswith(...)` (a method of `_METHODS`): the index
    after its closing parenthesis (one operand, as `!` reads it); else None."""
    if len(words) < 4 or words[1] != "." or words[2] not in _METHODS or words[3] != "(":
        return None
    depth = 0
    for index, word in enumerate(words[3:], start=3):
        depth += (word == "(") - (word == ")")
        if depth == 0:
            return index + 1
    return None


def regex_search(tokens: Tokens, index: int, data_names: frozenset[str]) -> tuple[str, int] | None:
    """At `re.search('pattern', x)` starting at `tokens[index]` (with `is None` / `is not
    None` after it): its statekit condition and the index after it; None for anything
    else (a pattern that is no literal, a subject that is no declared `<data>`)."""
    words = [value for _, value in tokens[index : index + 8]]
    if words[:4] != ["re", ".", "search", "("] or len(words) < 8:
        return None
    pattern, comma, subject, close = tokens[index + 4 : index + 8]
    if pattern[0] != "string" or comma[1] != "," or close[1] != ")":
        return None
    if subject[0] != "name" or subject[1] not in data_names:
        return None
    condition = f"matches(ctx.{subject[1]}, {pattern[1]})"
    after = index + 8
    test = [value for _, value in tokens[after : after + 3]]
    if test[:3] == ["is", "not", "None"]:
        return condition, after + 3
    if test[:2] == ["is", "None"]:
        return f"(not {condition})", after + 2
    return condition, after
