"""invalid-migration: A declared migration cannot map instances into this version.

Each entry of `migrations:` names an earlier version (`from`, below this
chart's `version`, at most one entry per version), renames states to states
this version has (full dotted paths), and computes only context fields this
version declares.

Failing::

    version: 2
    migrations:
      - {from: 2, rename: {running: busy}, context: {retries: ctx.attempts}}

Passing::

    version: 2
    migrations:
      - {from: 1, rename: {running: working}, context: {attempts: ctx.attempts + 0}}

Found by the compiler (resolver and type checker): a chart with this error cannot be built, so the
rule is always an error and cannot be ignored.
"""

from __future__ import annotations

from statekit.compiler.diagnostics import Severity

SLUG = "invalid-migration"
DEFAULT_SEVERITY = Severity.ERROR
STAGE = "compile"
