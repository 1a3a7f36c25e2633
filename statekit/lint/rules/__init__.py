"""One module per chart-stage lint rule, named after its slug.

Every module has `SLUG`, `DEFAULT_SEVERITY`, `STAGE = "chart"`, a docstring that
is the rule's documentation (what it catches, a failing and a passing snippet)
and a pure `check(chart) -> Iterator[Diagnostic]` over the compiled chart. The
compile-stage rules (a chart with such an error cannot be built) live with the
compiler, in `statekit.compiler.rules`.
"""
