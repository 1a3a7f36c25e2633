"""What arming and cancelling timers costs the step: the task chart with a lease timer
against the same chart without it.

Run: `python -m bench.timer_cost` from the repository root. The chart is
`bench/task_chart.yaml` (a pinned copy of the task chart before it had a
timer); the timed variant adds to `lifecycle.running` the lease timer
`at: ctx.lease_until_ms`, so every `TaskStarted` arms it and every exit from
`running` cancels it. Both run the same stream (`engine_core.task_stream`,
every event applied, the lease never due); each step is given `now_ms`, as
the runner gives it. Rounds alternate the two charts and the flat chart (no
timer, no guard: the memo's path) so that the load of the shared machine
hits them alike; each figure is the median of the rounds with their range,
and the ratio is taken per round. Times are the process's CPU time
(`time.process_time`), which the other processes of a loaded machine disturb
less than the wall clock.
"""

from __future__ import annotations

import statistics
import time
from pathlib import Path

from bench.engine_core import FLAT_CHART, Stream, check, flat_stream, task_stream
from statekit.compiler.pipeline import compile_source
from statekit.engine.chart import Chart

ROOT = Path(__file__).resolve().parent
ROUNDS = 21
LEASE_TIMER = """
        after:
          - at: ctx.lease_until_ms
            description: The lease ran out; the task goes back to the queue while the budget lasts.
            to: [lifecycle.queued, cancellation.none, artifact.absent]
            guard: retry_budget_left
"""
RUNNING_ON = "\n        on:\n          TaskCompleted:"


def timed_task_text() -> str:
    """The pinned task chart with the lease timer on `lifecycle.running`."""
    text = (ROOT / "task_chart.yaml").read_text()
    assert text.count(RUNNING_ON) == 1
    return text.replace(RUNNING_ON, LEASE_TIMER.rstrip("\n") + RUNNING_ON)


def compiled(text: str, name: str) -> Chart:
    """A chart from YAML text."""
    ir = compile_source(text, name).chart
    assert ir is not None, name
    return Chart(ir)


def rate(chart: Chart, stream: Stream, now_ms: int | None) -> float:
    """Events/s of `chart.send` over `stream` (given `now_ms`); a final state restarts."""
    s0 = chart.start(now_ms=now_ms)
    send = chart.send
    state = s0
    began = time.process_time()
    for event, payload, event_id in stream:
        state = send(state, event, payload, event_id=event_id, now_ms=now_ms).state
        if state.is_final:
            state = s0
    return len(stream) / (time.process_time() - began)


def spread(values: list[float]) -> str:
    """`median (min-max)`."""
    return f"{statistics.median(values):10,.0f} ({min(values):,.0f}-{max(values):,.0f})"


def main() -> None:
    """Print events/s of the three charts and the timed/plain ratio, per round."""
    plain = compiled((ROOT / "task_chart.yaml").read_text(), "task_chart.yaml")
    timed = compiled(timed_task_text(), "task_timed.yaml")
    flat = compiled(FLAT_CHART, "flat.yaml")
    assert timed.ir.timers and not plain.ir.timers
    tasks, flats = task_stream(1000), flat_stream(500)
    check(plain, tasks)
    check(timed, tasks)
    armed = timed.send(timed.start(), *tasks[0][:2], now_ms=0)
    assert [t.id for t in armed.timers_armed] == ["at(ctx.lease_until_ms)@lifecycle.running"]
    now = 1_700_000_000_000
    for _ in range(2):  # warm the caches and the interpreter
        rate(plain, tasks, now), rate(timed, tasks, now), rate(flat, flats, now)
    plain_rates: list[float] = []
    timed_rates: list[float] = []
    flat_rates: list[float] = []
    for _ in range(ROUNDS):
        plain_rates.append(rate(plain, tasks, now))
        timed_rates.append(rate(timed, tasks, now))
        flat_rates.append(rate(flat, flats, now))
    ratios = [t / p for t, p in zip(timed_rates, plain_rates, strict=True)]
    print(f"{'what':52} {'events/s, median (range)':>30}")
    print(f"{'task chart without a timer':52} {spread(plain_rates)}")
    print(f"{'task chart with its lease timer':52} {spread(timed_rates)}")
    print(f"{'flat chart (no timer, data-free memo)':52} {spread(flat_rates)}")
    print(
        f"timed / plain, per round: {statistics.median(ratios):.3f} "
        f"({min(ratios):.3f}-{max(ratios):.3f}) (aim: at least 0.85)"
    )


if __name__ == "__main__":
    main()
