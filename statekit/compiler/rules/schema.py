"""schema: The document does not match the statechart schema (a misspelt key, a wrong type).

The schema is `statekit/schema/statechart.schema.json` (`statekit schema` prints it).
Also reported here: structural rules the schema cannot express, such as a
context field without a default or a history state with transitions.

Failing::

    states:
      idle:
        on:
          GO: {to: busy, gaurd: ready}

Passing::

    states:
      idle:
        on:
          GO: {to: busy, guard: ready}

Found by the compiler (schema check): a chart with this error cannot be built, so the
rule is always an error and cannot be ignored.
"""

from __future__ import annotations

from statekit.compiler.diagnostics import Severity

SLUG = "schema"
DEFAULT_SEVERITY = Severity.ERROR
STAGE = "compile"
