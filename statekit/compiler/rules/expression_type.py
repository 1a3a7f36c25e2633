"""expression-type: An expression is ill-typed (unknown field, incompatible operands, result type).

Checked against the declared context and payload types at compile time:
`event.amount == 'all'` compares a number with a string and can never be true.

Failing::

    if: event.amount == 'all'

Passing::

    if: event.amount == 0

Found by the compiler (resolver and type checker): a chart with this error cannot be built, so the
rule is always an error and cannot be ignored.
"""

from __future__ import annotations

from statekit.compiler.diagnostics import Severity

SLUG = "expression-type"
DEFAULT_SEVERITY = Severity.ERROR
STAGE = "compile"
