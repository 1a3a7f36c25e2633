"""unknown-state: A state reference names no state of the chart.

References are a state's unique name or the shortest unique dotted suffix of its
path. The diagnostic suggests close names.

Failing::

    states:
      idle: {on: {GO: bussy}}
      busy: {}

Passing::

    states:
      idle: {on: {GO: busy}}
      busy: {}

Found by the compiler (resolver and type checker): a chart with this error cannot be built, so the
rule is always an error and cannot be ignored.
"""

from __future__ import annotations

from statekit.compiler.diagnostics import Severity

SLUG = "unknown-state"
DEFAULT_SEVERITY = Severity.ERROR
STAGE = "compile"
