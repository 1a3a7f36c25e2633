"""table-incomplete: A lookup table (`tables:`) can miss a key its reads may give.

A table keyed by an enum lists every value of the enum; a read `tables.<name>[key]`
whose key can take a value the table does not list needs the table's `default:`.
The error lists the missing keys, so a table read never fails at run time.

Failing::

    tables:
      sla:
        key: {enum: [low, normal, urgent]}
        value: duration
        entries: {low: 3d, normal: 1d}

Passing::

    tables:
      sla:
        key: {enum: [low, normal, urgent]}
        value: duration
        entries: {low: 3d, normal: 1d, urgent: 4h}

Found by the compiler (tables are checked where they are declared and where they are
read): a chart with this error cannot be built, so the rule is always an error and
cannot be ignored.
"""

from __future__ import annotations

from statekit.compiler.diagnostics import Severity

SLUG = "table-incomplete"
DEFAULT_SEVERITY = Severity.ERROR
STAGE = "compile"
