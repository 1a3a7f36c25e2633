"""statekit.testing.coverage: what a test suite exercised of its charts.

A pytest plugin (`plugin`, entry point `pytest11`, enabled by `--statekit-cov`)
installs a `Recorder` as engine observer (`statekit.engine.observers`) for the
run; at the end `metrics.measure` compares what it saw with each chart's
exploration (transition, classification, rejection and race coverage) and
`report` writes the terminal table and the JSON report, `html_report` the HTML
report (an index, a page per chart).
See docs/testing.md.
"""
