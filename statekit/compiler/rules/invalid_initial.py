"""invalid-initial: A compound state lacks a valid `initial`, or a history `default` is misplaced.

A compound state needs `initial` naming a child (or a descendant by dotted path);
a parallel state enters all its regions and takes no `initial`; a history
default must be inside the history's parent.

Failing::

    running:
      states: {a: {}, b: {}}

Passing::

    running:
      initial: a
      states: {a: {}, b: {}}

Found by the compiler (resolver and type checker): a chart with this error cannot be built, so the
rule is always an error and cannot be ignored.
"""

from __future__ import annotations

from statekit.compiler.diagnostics import Severity

SLUG = "invalid-initial"
DEFAULT_SEVERITY = Severity.ERROR
STAGE = "compile"
