"""expression-syntax: An expression is not valid syntax.

Expressions use Python expression syntax (a safe subset); the column points into
the expression.

Failing::

    if: event.amount <=

Passing::

    if: event.amount <= ctx.refundable

Found by the compiler (resolver and type checker): a chart with this error cannot be built, so the
rule is always an error and cannot be ignored.
"""

from __future__ import annotations

from statekit.compiler.diagnostics import Severity

SLUG = "expression-syntax"
DEFAULT_SEVERITY = Severity.ERROR
STAGE = "compile"
