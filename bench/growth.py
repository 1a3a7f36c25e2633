"""How the engine's cost per event grows with the work an event does.

Run: `python -m bench.growth` (also the last part of `python -m bench.engine_core`).
Three families of generated charts, every event APPLIED, each transition with an
`assign` so that the general path runs (the memo of data-free macrosteps answers
none of them); microseconds per event with and without the evidence built, median
and range over the runs:

- regions that move: a parallel root of k regions, each toggling between two
  states on the same event (one microstep, k transitions);
- eventless transitions per macrostep: an event followed by m `always`
  transitions in a chain (m + 1 microsteps);
- context size: the one-transition toggle with n context fields besides the one
  assigned.
"""

from __future__ import annotations

import statistics
import sys
import time

from bench._streams import Stream
from statekit.engine.chart import Chart
from statekit.engine.step import step


def regions_chart(k: int) -> str:
    """k parallel regions that all toggle on T, each assigning its own counter."""
    ctx = "".join(f"  c{i}: {{type: integer, default: 0}}\n" for i in range(k))
    regions = "".join(
        f"  r{i}:\n    initial: a\n    states:\n"
        f"      a: {{on: {{T: {{to: r{i}.b, do: [{{assign: {{c{i}: ctx.c{i} + 1}}}}]}}}}}}\n"
        f"      b: {{on: {{T: {{to: r{i}.a, do: [{{assign: {{c{i}: ctx.c{i} + 1}}}}]}}}}}}\n"
        for i in range(k)
    )
    head = f"statechart: regions{k}\nparallel: true\ncontext:\n{ctx}"
    return f"{head}events: {{T: {{}}}}\nstates:\n{regions}"


def chain_chart(m: int) -> str:
    """T leaves `s0`; then m eventless transitions lead back to it, each assigning."""
    states = "  s0: {on: {T: {to: s1, do: [{assign: {n: ctx.n + 1}}]}}}\n"
    for i in range(1, m + 1):
        nxt = f"s{i + 1}" if i < m else "s0"
        states += f"  s{i}: {{always: {{to: {nxt}, do: [{{assign: {{n: ctx.n + 1}}}}]}}}}\n"
    if m == 0:
        states = "  s0: {on: {T: {to: s1, do: [{assign: {n: ctx.n + 1}}]}}}\n"
        states += "  s1: {on: {T: {to: s0, do: [{assign: {n: ctx.n + 1}}]}}}\n"
    return (
        f"statechart: chain{m}\ninitial: s0\ncontext:\n  n: {{type: integer, default: 0}}\n"
        f"events: {{T: {{}}}}\nstates:\n{states}"
    )


def context_chart(n: int) -> str:
    """The two-state toggle with n context fields that no transition touches."""
    extra = "".join(f"  f{i}: {{type: string, default: v{i}}}\n" for i in range(n))
    return (
        f"statechart: context{n}\ninitial: a\ncontext:\n  n: {{type: integer, default: 0}}\n"
        f"{extra}events: {{T: {{}}}}\nstates:\n"
        "  a: {on: {T: {to: b, do: [{assign: {n: ctx.n + 1}}]}}}\n"
        "  b: {on: {T: {to: a, do: [{assign: {n: ctx.n + 1}}]}}}\n"
    )


def us_per_event(chart: Chart, stream: Stream, evidence: bool) -> float:
    """Microseconds per `step` over `stream`, reading the evidence when asked."""
    tables = chart.tables
    state = chart.start()
    began = time.process_time()
    for event, payload, event_id in stream:
        result = step(tables, state, event, payload, event_id)
        if evidence:
            result.evidence  # noqa: B018 (built on first access)
        state = result.state
    return (time.process_time() - began) / len(stream) * 1e6


def _row(label: str, text: str, runs: int) -> None:
    from bench.engine_core import compiled

    chart = compiled(text, f"{label}.yaml")
    stream: Stream = [("T", None, f"e{i}") for i in range(3000)]
    for result_check in (step(chart.tables, chart.start(), "T", None, "x"),):
        assert result_check.applied, label
    cells = []
    for evidence in (False, True):
        us_per_event(chart, stream, evidence)
        values = [us_per_event(chart, stream, evidence) for _ in range(runs)]
        cells.append(f"{statistics.median(values):6.1f} ({min(values):.1f}-{max(values):.1f})")
    print(f"{label:34} {cells[0]:>22} {cells[1]:>22}")


def main(runs: int = 5) -> None:
    """Print µs per event for each family."""
    print(f"\n{'work per event':34} {'µs/event':>22} {'µs/event, evidence':>22}")
    for k in (1, 2, 4, 8):
        _row(f"regions that move: {k}", regions_chart(k), runs)
    for m in (0, 1, 3, 7):
        _row(f"eventless transitions after it: {m}", chain_chart(m), runs)
    for n in (0, 10, 100):
        _row(f"context fields besides one: {n}", context_chart(n), runs)


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 5)
