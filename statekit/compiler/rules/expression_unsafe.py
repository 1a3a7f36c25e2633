"""expression-unsafe: An expression uses a construct outside the allow-list.

Only literals, `event.<field>`, `ctx.<field>`, operators, conditionals, `in` over
a list and `active()`, `len`, `abs`, `min`, `max` are allowed; no other names,
attributes, calls, subscripts, comprehensions, lambdas or huge exponents. Nothing
from a YAML file is ever passed to eval/exec.

Failing::

    if: event.__class__ == 1

Passing::

    if: event.amount > 0

Found by the compiler (resolver and type checker): a chart with this error cannot be built, so the
rule is always an error and cannot be ignored.
"""

from __future__ import annotations

from statekit.compiler.diagnostics import Severity

SLUG = "expression-unsafe"
DEFAULT_SEVERITY = Severity.ERROR
STAGE = "compile"
