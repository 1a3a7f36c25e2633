"""Regions explored compositionally find what the full product finds.

A differential test over generated charts of 2-8 parallel regions
(`region_charts.region_chart`, fixed seeds), with and without couplings
between regions: every chart rule's findings on the compositional exploration
(`ExplorationOptions(compose_above=0)`) equal its findings on the full product
(`ExplorationOptions(compose_above=sys.maxsize)`), and every counterexample trace replays
through `Chart.send` to the configuration it prints.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from analysis_charts import chart_of
from region_charts import COUPLINGS, region_chart

from statekit.analysis.components import independent_components
from statekit.analysis.facts import ChartFacts, chart_facts
from statekit.analysis.options import ExplorationOptions
from statekit.compiler.diagnostics import Diagnostic, TraceStep
from statekit.compiler.ir import CompiledChart
from statekit.compiler.pipeline import compile_source
from statekit.engine.chart import Chart
from statekit.lint.registry import RULES

SEEDS = range(40)
ROOT = Path(__file__).resolve().parents[2]
CHART_FILES = sorted(
    path
    for folder in ("machines", "tests/charts", "tests/lint/fixtures/rules")
    for path in (ROOT / folder).glob("*.yaml")
)


def _findings(chart: CompiledChart, facts: ChartFacts) -> list[Diagnostic]:
    out: list[Diagnostic] = []
    for rule in RULES.values():
        if rule.check is not None:
            out.extend(rule.check(chart, facts))
    return out


def _key(d: Diagnostic) -> tuple[object, ...]:
    """What must be equal: the rule, the place, the message."""
    return (d.slug, d.span.line, d.span.column, d.message)


def _replays(chart: CompiledChart, trace: tuple[TraceStep, ...]) -> int:
    """Replay a counterexample's steps that carry a checked payload; how many were."""
    machine = Chart(chart)
    start = trace[0].payload if trace and trace[0].event is None else None
    state = machine.start(dict(start) if start else None)
    checked = 0
    for step in trace:
        if step.event is None:
            continue
        if step.payload is None:  # an assumed step: the rest is not checked
            break
        result = machine.send(state, step.event, dict(step.payload))
        if step.outcome.startswith("→ {"):
            assert result.status.value == "APPLIED", (step, result.reason)
            shown = set(step.outcome[3:-1].split(", ")) - {""}
            assert set(result.state.leaves) == shown, (step, result.state.leaves)
        else:
            assert step.outcome.startswith(result.status.value), (step, result.status)
        state = result.state
        checked += 1
    return checked


def _compare(text: str) -> tuple[CompiledChart, ChartFacts]:
    chart = chart_of(text)
    return chart, _compare_chart(chart)


def _compare_chart(chart: CompiledChart) -> ChartFacts:
    composed = chart_facts(chart, ExplorationOptions(compose_above=0))
    product = chart_facts(chart, ExplorationOptions(compose_above=sys.maxsize))
    assert product.exploration.components is None
    found = _findings(chart, composed)
    expected = _findings(chart, product)
    assert sorted(map(_key, found)) == sorted(map(_key, expected)), chart.file
    for finding in found:
        _replays(chart, finding.trace)
    return composed


@pytest.mark.parametrize("seed", SEEDS)
def test_independent_regions_are_explored_apart_and_find_what_the_product_finds(
    seed: int,
) -> None:
    regions = 2 + seed % 7
    chart, composed = _compare(region_chart(seed, regions))
    components = independent_components(chart)
    assert components is not None and len(components.components) == regions
    assert composed.exploration.components == components
    product_size = 1
    for region in chart.root.children:
        product_size *= len(chart.states[region].children)
    assert len(composed.exploration.nodes) <= product_size


@pytest.mark.parametrize("seed", SEEDS)
def test_coupled_regions_find_what_the_product_finds(seed: int) -> None:
    regions = 2 + seed % 7
    couplings = tuple(c for i, c in enumerate(COUPLINGS) if seed >> i & 1) or ("shared",)
    chart, _facts = _compare(region_chart(1000 + seed, regions, couplings))
    components = independent_components(chart)
    count = len(components.components) if components is not None else 1
    assert count < regions  # every coupling joins two regions


@pytest.mark.parametrize("kind", COUPLINGS)
def test_each_coupling_joins_the_two_regions(kind: str) -> None:
    chart = chart_of(region_chart(7, 2, (kind,)))
    assert independent_components(chart) is None


def test_twenty_independent_regions_take_one_node_per_state_not_their_product() -> None:
    text = "\n".join(
        [
            "statechart: wide",
            "version: 1",
            "events:",
            *(f"  GO_{r}: {{}}" for r in range(20)),
            "parallel: true",
            "states:",
            *(
                line
                for r in range(20)
                for line in (
                    f"  r{r}:",
                    "    initial: a",
                    "    states:",
                    f"      a: {{on: {{GO_{r}: b}}}}",
                    f"      b: {{on: {{GO_{r}: c}}, reject: {{GO_{r}: LATER}}}}",
                    f"      c: {{on: {{GO_{r}: a}}}}",
                )
            ),
        ]
    )
    chart = chart_of(text + "\n")
    facts = chart_facts(chart, ExplorationOptions())
    assert facts.exploration.complete
    assert len(facts.exploration.nodes) == 1 + 20 * 2  # not 3**20
    assert {d.slug for d in _findings(chart, facts)} <= {"shadowed-reject", "no-final-path"}


def test_a_chart_whose_product_is_small_keeps_the_product_and_its_counts() -> None:
    chart = chart_of(region_chart(3, 3))
    assert independent_components(chart) is not None
    facts = chart_facts(chart, ExplorationOptions())  # at most 4**3 configurations
    assert facts.exploration.components is None
    apart = chart_facts(chart, ExplorationOptions(compose_above=0))
    assert apart.exploration.components is not None
    assert len(apart.exploration.nodes) < len(facts.exploration.nodes)


def test_the_repository_charts_with_independent_regions_find_the_same_both_ways() -> None:
    compared = 0
    for path in CHART_FILES:
        chart = compile_source(path.read_bytes(), str(path)).chart
        if chart is not None and independent_components(chart) is not None:
            _compare_chart(chart)
            compared += 1
    assert compared >= 2  # tests/charts/order.yaml, the stale-race-decision fixture
