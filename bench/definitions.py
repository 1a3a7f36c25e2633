"""What a definition and a table read cost the hot path: a guard written with `define:`
against the same guard written out, and a `tables:` read against the nested conditional
it replaces.

Run: `python -m bench.definitions` from the repository root. Each variant is one chart
compiled from the same text but for the guard; the figure is the compiled guard's
evaluation (`Expression.evaluate`, what the step calls) over a fixed list of contexts,
in calls per second of process CPU time. Rounds alternate the variants so that the load
of a shared machine hits them alike; each figure is the median of the rounds with their
range, and each ratio is taken per round against the written-out guard of that round.
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable, Mapping
from typing import Any

from statekit.compiler.expressions.expression import Expression
from statekit.compiler.pipeline import compile_source

ROUNDS = 21
CALLS = 100_000
PRIORITIES = ("low", "normal", "urgent")
GRACE = "(3 if ctx.priority == 'low' else 1 if ctx.priority == 'normal' else 0)"
CHART = """\
statechart: bench
context:
  retries: {type: integer, default: 0}
  strict: {type: boolean, default: false}
  priority: {enum: [low, normal, urgent], default: normal}
events:
  FAIL: {}
define:
  limit: "3 if ctx.strict else 5"
  overdue: "ctx.retries >= limit and active('active')"
tables:
  grace:
    key: ctx.priority
    value: integer
    entries: {low: 3, normal: 1, urgent: 0}
initial: active
states:
  active:
    on:
      FAIL: {to: past_due, if: "GUARD"}
  past_due: {final: true}
"""
VARIANTS = {
    "written out": "ctx.retries >= (3 if ctx.strict else 5) and active('active')",
    "definition": "overdue",
    "conditional": f"ctx.retries >= {GRACE}",
    "table read": "ctx.retries >= tables.grace[ctx.priority]",
}
BASELINES = {"definition": "written out", "table read": "conditional"}


def guard(source: str) -> Expression:
    """The compiled guard of the chart with `source` as its `if`."""
    chart = compile_source(CHART.replace("GUARD", source), "bench.yaml").chart
    assert chart is not None, source
    (transition,) = [t for t in chart.transitions if t.guards]
    return transition.guards[0].expression


def contexts() -> list[Mapping[str, Any]]:
    """The contexts evaluated, in a fixed order (every priority, both strictnesses)."""
    return [
        {"retries": r, "strict": s, "priority": p}
        for r in range(6)
        for s in (False, True)
        for p in PRIORITIES
    ]


def rate(
    evaluate: Callable[..., Any], inputs: list[Mapping[str, Any]], active: frozenset[int]
) -> float:
    """Calls per second of `evaluate` over `inputs`, repeated to `CALLS` calls."""
    batch = inputs * (CALLS // len(inputs))
    empty: Mapping[str, Any] = {}
    began = time.process_time()
    for ctx in batch:
        evaluate(ctx, empty, active)
    return len(batch) / (time.process_time() - began)


def spread(values: list[float], fmt: str = "{:12,.0f}") -> str:
    """`median (min-max)`."""
    low, high = (fmt.format(v).strip() for v in (min(values), max(values)))
    return f"{fmt.format(statistics.median(values))} ({low}-{high})"


def main() -> None:
    """Print calls/s of each variant and each named form's ratio to its written-out form."""
    guards = {name: guard(source) for name, source in VARIANTS.items()}
    inputs = contexts()
    active = frozenset({1})
    for named, baseline in BASELINES.items():  # same answers before timing anything
        for ctx in inputs:
            got = guards[named].evaluate(ctx, {}, active)
            assert got == guards[baseline].evaluate(ctx, {}, active), (named, ctx)
    rates: dict[str, list[float]] = {name: [] for name in guards}
    ratios: dict[str, list[float]] = {name: [] for name in BASELINES}
    for _ in range(ROUNDS):
        this = {name: rate(g.evaluate, inputs, active) for name, g in guards.items()}
        for name, value in this.items():
            rates[name].append(value)
        for named, baseline in BASELINES.items():
            ratios[named].append(this[named] / this[baseline])
    print(f"guard evaluations per second of CPU time, median (range) of {ROUNDS} rounds")
    for name, values in rates.items():
        print(f"  {name:12} {spread(values)}")
    for named, baseline in BASELINES.items():
        print(f"  {named} / {baseline}: {spread(ratios[named], '{:.3f}')}")


if __name__ == "__main__":
    main()
