"""unknown-guard: A transition names a guard that is not declared under `guards`.

Named guards are declared once with their `if` expression and `else` reason.

Failing::

    on: {GO: {to: busy, guard: is_redy}}

Passing::

    guards: {is_ready: {if: ctx.ready, else: NOT_READY}}

Found by the compiler (resolver and type checker): a chart with this error cannot be built, so the
rule is always an error and cannot be ignored.
"""

from __future__ import annotations

from statekit.compiler.diagnostics import Severity

SLUG = "unknown-guard"
DEFAULT_SEVERITY = Severity.ERROR
STAGE = "compile"
