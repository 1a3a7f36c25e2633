"""The two ways a macrostep fails: an expression that raises, and a macrostep that never settles.

Both abort the macrostep; the step classifies them (`EVALUATION_ERROR`,
`LIVELOCK`) and nothing changes.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from statekit.compiler.expressions.expression import Expression
from statekit.engine.trace import AppliedMicrostep


class EvaluationError(Exception):
    """An expression failed at runtime (division by zero, overflow, a non-finite result).

    The message names the expression's role, its source and its line and column;
    it never contains a runtime value, nor the chart's file name: a rejection's
    message is stored as evidence and replayed by `verify`, so it must not depend
    on where the chart was loaded from.
    """

    def __init__(self, role: str, expression: Expression, problem: str) -> None:
        self.role = role
        self.expression = expression
        self.problem = problem
        where = f"line {expression.span.line}, column {expression.span.column}"
        super().__init__(f"{role} `{expression.source}` at {where}: {problem}")

    @classmethod
    def from_exception(cls, role: str, expression: Expression, exc: Exception) -> EvaluationError:
        """Wrap an exception raised by an evaluator."""
        return cls(role, expression, f"{type(exc).__name__}: {exc}")


_FILE_POSITION = re.compile(r"` at .*?:(\d+):(\d+): ")
"""Where 0.1.0 put the chart's file and position in an evaluation error's message."""


def evaluation_message(message: str) -> str:
    """An evaluation error's message in this version's words: releases up to 0.1.0 named
    the chart's file (`` `x / y` at charts/task.yaml:12:5: ZeroDivisionError``), which
    their stores keep in rejection rows; `verify` compares those rows as this form
    (`at line 12, column 5:`), so a store does not differ for where its chart was."""
    return _FILE_POSITION.sub(r"` at line \1, column \2: ", message, count=1)


class LivelockError(Exception):
    """The macrostep took more microsteps than the chart allows; `trace` holds those it took."""

    def __init__(self, limit: int, trace: Sequence[AppliedMicrostep]) -> None:
        self.limit = limit
        self.trace = tuple(trace)
        super().__init__(
            f"the macrostep did not settle within {limit} microsteps "
            "(eventless transitions or raised events keep firing)"
        )
