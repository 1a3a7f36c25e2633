"""duplicate-key: A mapping repeats a key (YAML would silently keep the last one).

The diagnostic points at the second occurrence and names the line of the first.

Failing::

    states:
      idle: {}
      idle: {final: true}

Passing::

    states:
      idle: {}
      done: {final: true}

Found by the compiler (loader): a chart with this error cannot be built, so the
rule is always an error and cannot be ignored.
"""

from __future__ import annotations

from statekit.compiler.diagnostics import Severity

SLUG = "duplicate-key"
DEFAULT_SEVERITY = Severity.ERROR
STAGE = "compile"
