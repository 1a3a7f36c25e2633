"""yaml-limits: The file exceeds a size, nesting-depth, alias or node limit.

Checked on the YAML event stream before anything is built, so a "billion laughs"
file or a 50,000-level nesting is refused quickly and never expanded. The
limits (`statekit.compiler.source.limits.Limits`): 4 MiB (`max_bytes`; no more
than that plus one byte is read), 100 levels (`max_depth`), 100 aliases
(`max_aliases`) and 250,000 nodes with aliases expanded (`max_expanded_nodes`);
the message names the one hit. From Python they can be raised:
`statekit.load(path, limits=Limits(max_expanded_nodes=500_000))`.

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
