"""yaml-limits: The file exceeds a size, nesting-depth or alias-expansion limit.

Checked on the YAML event stream before anything is built, so a "billion laughs"
file or a 50,000-level nesting is refused quickly and never expanded.

Failing::

    a: &a [x, x, x, x, x, x, x, x, x]
    b: &b [*a, *a, *a, *a, *a, *a, *a, *a, *a]
    # ...nine levels of this

Passing::

    a: [x, y]

Found by the compiler (loader): a chart with this error cannot be built, so the
rule is always an error and cannot be ignored.
"""

from __future__ import annotations

from statekit.compiler.diagnostics import Severity

SLUG = "yaml-limits"
DEFAULT_SEVERITY = Severity.ERROR
STAGE = "compile"
