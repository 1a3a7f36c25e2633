"""ambiguous-state: A state reference matches more than one state; the candidates are listed.

Two regions may both have a `done` state: refer to them as `upload.done` and
`review.done`.

Failing::

    on: {GO: done}   # both upload.done and review.done exist

Passing::

    on: {GO: upload.done}

Found by the compiler (resolver and type checker): a chart with this error cannot be built, so the
rule is always an error and cannot be ignored.
"""

from __future__ import annotations

from statekit.compiler.diagnostics import Severity

SLUG = "ambiguous-state"
DEFAULT_SEVERITY = Severity.ERROR
STAGE = "compile"
