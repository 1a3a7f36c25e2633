"""yaml-syntax: The file is not valid YAML, not UTF-8, or cannot be read.

A syntax error, a byte sequence that is not UTF-8, a second YAML document in one file,
a merge key (`<<`) or a non-scalar mapping key.

Failing::

    states:
      idle: {on: {GO: busy}

Passing::

    states:
      idle: {on: {GO: busy}}

Found by the compiler (loader): a chart with this error cannot be built, so the
rule is always an error and cannot be ignored.
"""

from __future__ import annotations

from statekit.compiler.diagnostics import Severity

SLUG = "yaml-syntax"
DEFAULT_SEVERITY = Severity.ERROR
STAGE = "compile"
