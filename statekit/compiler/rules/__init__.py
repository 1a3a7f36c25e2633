"""The compile-stage rules: one module per slug the compiler reports, named after it.

Every module has `SLUG`, `DEFAULT_SEVERITY`, `STAGE = "compile"` and a docstring
that is the rule's documentation (what it catches, a failing and a passing
snippet). The compiler cites `<module>.SLUG`, never a string; `statekit.lint`
registers these modules next to its chart rules.
"""
