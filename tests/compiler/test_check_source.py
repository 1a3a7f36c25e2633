"""`check_source` runs every compiler pass that reports, and `frozen()` finishes the
compile: together they give exactly what `compile_source` gives (the language server
publishes the first part's diagnostics before freezing)."""

from __future__ import annotations

from pathlib import Path

import pytest

from statekit.compiler.pipeline import check_source, compile_source

ROOT = Path(__file__).resolve().parents[2]
CHARTS = {
    **{path.name: path.read_text("utf-8") for path in sorted((ROOT / "machines").glob("*.yaml"))},
    "full_chart.yaml": (ROOT / "tests/compiler/fixtures/full_chart.yaml").read_text("utf-8"),
    "yaml error": "statechart: x\nstates: [\n",
    "not a mapping": "- a\n- b\n",
    "schema error": "statechart: x\nversion: 1\nstates: 3\n",
    "unknown target": "statechart: x\nversion: 1\ninitial: a\nstates:\n  a: {on: {GO: nowhere}}\n",
}


@pytest.mark.parametrize("name", CHARTS)
def test_checked_then_frozen_is_the_compile(name: str) -> None:
    text = CHARTS[name]
    checked = check_source(text, name)
    compiled = compile_source(text, name)
    assert checked.diagnostics == compiled.diagnostics
    assert (checked.model is None) == (compiled.chart is None)
    frozen = checked.frozen()
    assert frozen.diagnostics == compiled.diagnostics and frozen.source == compiled.source
    if compiled.chart is not None:
        assert frozen.chart is not None and frozen.chart.digest == compiled.chart.digest


def test_bytes_are_checked_as_their_text() -> None:
    text = CHARTS["task.yaml"]
    assert check_source(text.encode(), "task.yaml").source == text
