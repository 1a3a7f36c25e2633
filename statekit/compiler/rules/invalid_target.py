"""invalid-target: A transition's targets cannot be active together.

A transition with several targets needs exactly one target per region of a
parallel state; two states of the same region (or a state and its ancestor)
cannot both be entered.

Failing::

    on: {GO: {to: [lifecycle.running, lifecycle.failed]}}

Passing::

    on: {GO: {to: [lifecycle.running, artifact.absent]}}

Found by the compiler (resolver and type checker): a chart with this error cannot be built, so the
rule is always an error and cannot be ignored.
"""

from __future__ import annotations

from statekit.compiler.diagnostics import Severity

SLUG = "invalid-target"
DEFAULT_SEVERITY = Severity.ERROR
STAGE = "compile"
