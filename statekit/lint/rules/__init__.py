"""One module per lint rule, named after its slug.

Every module has `SLUG`, `DEFAULT_SEVERITY`, `STAGE` and a docstring that is
the rule's documentation (what it catches, a failing and a passing snippet).
`STAGE = "compile"` rules are found by the compiler (a chart with such an error
cannot be built); `STAGE = "chart"` rules have a pure
`check(chart) -> Iterator[Diagnostic]` over the compiled chart.
"""
