"""unknown-event: An event in `on`, `already`, `reject`, `raise` or `send` is not declared.

Every event, with its payload fields, is declared once under `events:` so that
payloads can be type-checked. So are the events a producer sends, and those a
`races:` entry names in a list or in `precedes` (a timer event named there must
be one of the chart's timers).

Failing::

    events: {GO: {}}
    states:
      idle: {on: {STRAT: busy}}

Passing::

    events: {GO: {}}
    states:
      idle: {on: {GO: busy}}

Found by the compiler (resolver and type checker): a chart with this error cannot be built, so the
rule is always an error and cannot be ignored.
"""

from __future__ import annotations

from statekit.compiler.diagnostics import Severity

SLUG = "unknown-event"
DEFAULT_SEVERITY = Severity.ERROR
STAGE = "compile"
