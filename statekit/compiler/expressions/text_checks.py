"""The check of the text functions: `starts_with(s, prefix)`, `ends_with(s, suffix)` and
`matches(s, 'pattern')` (`statekit.compiler.expressions.text_functions`)."""

from __future__ import annotations

import ast

from statekit.compiler.expressions.checker_core import CheckerCore
from statekit.compiler.expressions.text_functions import pattern_problem
from statekit.compiler.expressions.tree import Call, CallFunc, ExprNode, Matches
from statekit.compiler.rules import expression_syntax, expression_type, expression_unsafe
from statekit.compiler.value_types import BOOLEAN, BaseType

_SECOND = {"starts_with": "prefix", "ends_with": "suffix", "matches": "pattern"}


class TextChecks(CheckerCore):
    """Calls of `starts_with`, `ends_with` and `matches`: two arguments, strings; the first
    may be null (the result is then false), the second may not; a pattern is a literal
    RE2 accepts."""

    def _text_call(self, node: ast.Call, name: str) -> ExprNode | None:
        second = _SECOND[name]
        if len(node.args) != 2:
            message = f"{name}() takes a string and a {second} ({len(node.args)} argument(s) given)"
            self.report(expression_type.SLUG, node, message)
            return None
        text_ast, other_ast = node.args
        pattern = None
        if name == "matches":
            pattern = self._pattern(other_ast)
            if pattern is None:
                return None
        text = self.visit(text_ast)
        other = self.visit(other_ast) if pattern is None else None
        if text is None or (pattern is None and other is None):
            return None
        if text.type.base is not BaseType.STRING:
            message = f"{name}() reads a string, but {self.segment(text_ast)} is "
            self.report(expression_type.SLUG, text_ast, message + text.type.describe())
            return None
        if pattern is not None:
            return Matches(text=text, pattern=pattern)
        assert other is not None
        if other.type.base is not BaseType.STRING or other.type.nullable:
            message = f"{name}()'s {second} is a string, but {self.segment(other_ast)} is "
            self.report(expression_type.SLUG, other_ast, message + other.type.describe())
            return None
        func: CallFunc = "starts_with" if name == "starts_with" else "ends_with"
        return Call(func=func, args=(text, other), type=BOOLEAN)

    def _pattern(self, node: ast.expr) -> str | None:
        """The pattern of a `matches()`: a string literal RE2 accepts, else None (reported)."""
        if not (isinstance(node, ast.Constant) and isinstance(node.value, str)):
            message = (
                "matches() takes its pattern as a string literal, compiled with the chart,"
                " e.g. matches(event.email, '^[^@ ]+@[^@ ]+$')"
            )
            self.report(expression_unsafe.SLUG, node, message)
            return None
        problem = pattern_problem(node.value)
        if problem is not None:
            message = (
                f"matches(): {node.value!r} is not a regular expression RE2 accepts: {problem}"
            )
            self.report(expression_syntax.SLUG, node, message)
            return None
        return node.value
