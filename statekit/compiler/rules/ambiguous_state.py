"""ambiguous-state: A state reference matches more than one state; the candidates are listed.

Two regions may both have a `done` state. A target looks for a bare name among
its source's siblings and then outward first, so `done` inside either region
names that region's own; only where neither is near (the parallel state's own
transitions, an invariant) is it ambiguous. The error lists each candidate with
the relative form that picks it from the transition's source: `.upload.done`,
`.review.done`, or a longer dotted suffix (`upload.done`).

Failing::

    on: {GO: done}   # on the parallel state: upload.done and review.done exist

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
