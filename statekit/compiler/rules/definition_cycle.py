"""definition-cycle: A named expression (`define:`) is defined in terms of itself.

A definition stands for its expression wherever its name is used, so it cannot use
itself, directly or through other definitions: the error is at the use that closes
the cycle and names it (`a → b → a`).

Failing::

    define:
      late: "ctx.retries > limit"
      limit: "3 if late else 5"

Passing::

    define:
      limit: "3 if ctx.strict else 5"
      late: "ctx.retries > limit"

Found by the compiler (definitions are checked before any expression that uses them): a
chart with this error cannot be built, so the rule is always an error and cannot be ignored.
"""

from __future__ import annotations

from statekit.compiler.diagnostics import Severity

SLUG = "definition-cycle"
DEFAULT_SEVERITY = Severity.ERROR
STAGE = "compile"
