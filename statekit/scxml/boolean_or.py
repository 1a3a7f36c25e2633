"""ECMAScript's `|` between two conditions, as a logical or.

`a == 0 | b != 2` is a bitwise or in ECMAScript (and in Python, where it also binds
tighter than the comparisons). Between two booleans, in a `cond`, it is a logical or:
ECMAScript gives 0 or 1 and the condition converts that number to a boolean, which is
what `or` gives. So in a condition (not in the `python` datamodel, where `a == 0 | b`
is the chained comparison `a == (0 | b)`) each chain `x | y | ...` whose every operand is a
boolean (a comparison, a negation, `true`/`false`, `In(...)`, a boolean `<data>`, or
one of these in parentheses) becomes `(x || y || ...)`: the parentheses keep
ECMAScript's precedence (`|` binds looser than a comparison, tighter than `&&`). Any
other `|` (between numbers, outside a condition) is refused, naming it.
"""

from __future__ import annotations

from collections.abc import Set as AbstractSet

Tokens = list[tuple[str, str]]

_COMPARISONS = frozenset({"==", "!=", "===", "!==", "<", "<=", ">", ">="})
_CLAUSE_ENDS = frozenset({"&&", "||", "?", ":", ",", "and", "or"})
_NOT_BOOLEAN = "the operator '|' between values that are not both conditions (a bitwise or)"


class NotBooleanOr(ValueError):
    """A `|` that is not between two conditions; the message names it."""


def boolean_ors(tokens: Tokens, boolean_data: AbstractSet[str] | None) -> Tokens:
    """`tokens` with each chain of `|` rewritten (module docstring); `boolean_data` are
    the boolean `<data>` of an ECMAScript condition, None for any other text (any `|`
    is refused)."""
    if not any(value == "|" for _, value in tokens):
        return tokens
    if boolean_data is None:
        raise NotBooleanOr("the operator '|' outside an ECMAScript condition (a bitwise or)")
    out = list(tokens)
    bar = next(i for i, (_, value) in enumerate(out) if value == "|")
    start, end = _clause(out, bar)
    operands: list[Tokens] = [[]]
    depth = 0
    for kind, value in out[start:end]:
        depth += (value == "(") - (value == ")")
        if value == "|" and depth == 0:
            operands.append([])
        else:
            operands[-1].append((kind, value))
    if not all(_boolean(operand, boolean_data) for operand in operands):
        raise NotBooleanOr(_NOT_BOOLEAN)
    chain: Tokens = [("op", "(")]
    for index, operand in enumerate(operands):
        chain += ([("op", "||")] if index else []) + operand
    chain.append(("op", ")"))
    return boolean_ors(out[:start] + chain + out[end:], boolean_data)


def _clause(tokens: Tokens, at: int) -> tuple[int, int]:
    """The tokens around `tokens[at]` up to the nearest clause boundary on either side
    at the same depth of parentheses: (first index, index after the last)."""
    start, depth = at, 0
    while start > 0:
        value = tokens[start - 1][1]
        if depth == 0 and (value in _CLAUSE_ENDS or value == "("):
            break
        depth += (value == ")") - (value == "(")
        start -= 1
    end, depth = at + 1, 0
    while end < len(tokens):
        value = tokens[end][1]
        if depth == 0 and (value in _CLAUSE_ENDS or value == ")"):
            break
        depth += (value == "(") - (value == ")")
        end += 1
    return start, end


def _boolean(operand: Tokens, boolean_data: AbstractSet[str]) -> bool:
    """Whether an operand is a condition by its shape alone."""
    words = [value for _, value in operand]
    if not words:
        return False
    if words[0] == "!" or words in (["true"], ["false"], ["True"], ["False"]):
        return True
    if len(words) == 1 and operand[0][0] == "name":
        return words[0] in boolean_data
    if words[:2] == ["In", "("] and words[-1] == ")" and len(words) == 4:
        return True
    depth, closes_at = 0, -1
    for index, value in enumerate(words):
        if value == "(":
            depth += 1
        elif value == ")":
            depth -= 1
            closes_at = index if depth == 0 and closes_at < 0 else closes_at
        elif depth == 0 and value in _COMPARISONS:
            return True
    if words[0] == "(" and closes_at == len(words) - 1:  # one condition in parentheses
        inner = operand[1:-1]
        logical = any(value in ("&&", "||", "and", "or") for _, value in inner)
        return logical or _boolean(inner, boolean_data)
    return False
