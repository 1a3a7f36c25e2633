"""The check of the expression language's time words: `now` and duration literals.

`now` is the step's clock reading (an integer of epoch milliseconds); a duration
literal (`15m`, `1h30m`, `500ms`) is an integer of milliseconds, found in the text
before it is parsed (`statekit.compiler.expressions.durations`).
"""

from __future__ import annotations

import ast

from statekit.compiler.expressions.checker_core import CheckerCore
from statekit.compiler.expressions.durations import duration_mistake, find_durations
from statekit.compiler.expressions.language import CLOCK_NAME
from statekit.compiler.expressions.tree import ExprNode, Literal, Now
from statekit.compiler.rules import expression_syntax, expression_unsafe
from statekit.compiler.value_types import INTEGER


class TimeChecks(CheckerCore):
    """`now` and duration literals."""

    def parsable_text(self) -> str:
        """The text handed to Python's parser: each duration literal replaced by an
        identifier of the same length (every column unchanged); a literal out of range
        is reported at its own column."""
        self.durations = find_durations(self.text)
        for problem in self.durations.problems:
            self.report_at(expression_unsafe.SLUG, problem.start, problem.end, problem.message)
        return self.durations.text

    def duration_syntax_error(self, exc: SyntaxError) -> bool:
        """Report Python's syntax error on the first line as a mistaken duration literal
        when it stopped on one (`15min`, `1.5h`); whether it did."""
        if (exc.lineno or 1) != 1 or not exc.offset:
            return False
        found = duration_mistake(self.text, exc.offset - 1)
        if found is None:
            return False
        start, end, message = found
        self.report_at(expression_syntax.SLUG, start, end, message)
        return True

    def time_word(self, node: ast.Name) -> ExprNode | None:
        """`now` or a duration literal as a typed node, or None when `node` is neither."""
        if node.id == CLOCK_NAME:
            return Now()
        if node.id.strip("_"):
            return None
        value = self.durations.at(self.positions.offset_of(node))
        return None if value is None else Literal(value=value, type=INTEGER)
