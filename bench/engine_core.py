"""Events per second of `Chart.send`, each next to a hand-written reducer of the same chart.

Run: `python -m bench.engine_core` from the repository root (`--runs N`, default 7).
Three charts, each with its limit written by hand and measured in the same run:

- the flat 6-state chart (no guards, no data) against a `match` reducer: the
  cached path (the memo of data-free macrosteps), the general path
  (`Chart(memo=False)`: the selection and macrostep compiled per (configuration,
  event)) and the reference loop (`memoised=False`, SCXML's macrostep loop);
- the flat chart with a payload, a data guard and an assign on every transition
  (bench/hand_flat.py) against its reducer with the same payload check;
- the task chart (bench/task_chart.yaml) with payloads varying per event
  (bench/hand_task.py) against its reducer with the same checks, guards,
  reasons, assigns, messages and 6 invariants;
- those two through the cached path (`Chart.send`), the general path
  (`Chart(memo=False)`, the aims: within 3x of the reducer, 4x with the evidence)
  and the reference loop (`memoised=False`), with and without the evidence built.

Before timing, each reducer runs its stream (and a stream of rejected events)
next to `Chart.send` and must agree event by event: status, reason, active
states, context and emitted messages (ids, types, payloads). Each timed run
measures the reducer and then statekit over the whole stream, so every ratio
is between two figures of the same run; rows show the median over the runs
and the range (min-max). "with evidence" reads `Result.evidence` of every
result (the runner always does); "evidence JSON" also encodes it as the
runner stores it. Then the engine's share of one durable-runner event: the
counter chart of bench/runner_throughput.py stepped as `Runner.apply` steps it
(`Chart.send` given `now_ms`, then the result's state, evidence, armed timers,
sends and messages read), in µs per event. Then: how the cost grows with work
(regions that move per event, eventless transitions per macrostep, context
fields).
"""

from __future__ import annotations

import argparse
import statistics
import time
from collections.abc import Callable, Sequence
from functools import partial
from pathlib import Path
from typing import Any, NamedTuple

from bench._streams import FLAT_CHART, FLAT_CYCLE, Stream, flat_stream, task_stream
from statekit.compiler.pipeline import compile_source
from statekit.engine.chart import Chart
from statekit.engine.result import Result, Status
from statekit.engine.step import step

__all__ = ["FLAT_CHART", "FLAT_CYCLE", "ROOT", "RUNS", "Stream", "flat_stream", "task_stream"]

ROOT = Path(__file__).resolve().parent.parent
RUNS = 5
Send = Callable[[Any, str, Any, str], Result]


def compiled(text: str | bytes, name: str, *, memo: bool = True) -> Chart:
    """A `Chart` of YAML text (the benchmark's charts compile without errors); `memo`
    False: every event takes the general path (`Chart(memo=False)`)."""
    ir = compile_source(text, name).chart
    assert ir is not None, name
    return Chart(ir, memo=memo) if not memo else Chart(ir)


def sender(chart: Chart, *, memoised: bool = True, evidence: str = "") -> Send:
    """`chart.send` as the benchmark calls it: `Chart.send` itself, then with `evidence`
    "built" the result's evidence read (as a user and the runner read it); the step
    itself (with the chart's `memo`) when `memoised` is off (the reference loop) or
    the evidence is encoded too (`evidence` "json").

    The engine's three paths: *cached* (the memo of data-free macrosteps, a result
    looked up: `compiled(...)`), *general* (the selection and macrostep compiled per
    (configuration, event), run on the event's payload and context, what every event
    takes when nothing is memoised: `compiled(..., memo=False)`; on a chart whose
    events all read data, the cached chart takes it too) and *reference*
    (`memoised=False`: SCXML's macrostep loop, the differential tests' oracle)."""
    tables = chart.tables
    memo = getattr(chart, "memo", True)  # (a revision before `Chart(memo=...)`: True)
    # (`partial` only when the memo is off: a revision before `Chart(memo=...)` has no `memo`)
    run: Callable[..., Result] = step if memo else partial(step, memo=False)
    if memoised and not evidence:
        return lambda s, e, p, i: chart.send(s, e, p, event_id=i)
    if not evidence:
        return lambda s, e, p, i: run(tables, s, e, p, i, memoised=memoised)
    if evidence == "built" and memoised:  # `Chart.send` as a user calls it, then the evidence
        send = chart.send

        def sent(s: Any, e: str, p: Any, i: str) -> Result:
            result = send(s, e, p, event_id=i)
            result.evidence  # noqa: B018 (built on first access)
            return result

        return sent
    if evidence == "built":

        def built(s: Any, e: str, p: Any, i: str) -> Result:
            result = run(tables, s, e, p, i, memoised=memoised)
            result.evidence  # noqa: B018 (built on first access)
            return result

        return built
    from statekit.runner.evidence import evidence_json

    def encoded(s: Any, e: str, p: Any, i: str) -> Result:
        result = run(tables, s, e, p, i, memoised=memoised)
        evidence_json(result, None, i)
        return result

    return encoded


def statekit_rate(chart: Chart, stream: Stream, send: Send | None = None) -> float:
    """Events/s of `send` (default `chart.send`) over `stream`; a final state restarts
    from `start()`."""
    s0 = chart.start()
    if send is None:
        send = sender(chart)
    state = s0
    began = time.process_time()
    for event, payload, event_id in stream:
        state = send(state, event, payload, event_id).state
        if state.is_final:
            state = s0
    return len(stream) / (time.process_time() - began)


class Outcome(NamedTuple):
    """The plain reducer's result: what a handwritten reducer would return."""

    status: str
    reason: str | None
    state: str


def flat_reducer(state: str, event: str) -> Outcome:
    """The flat chart as a hand-written `match` reducer."""
    match state, event:
        case "idle", "LOAD":
            return Outcome("APPLIED", None, "loading")
        case "loading", "LOADED":
            return Outcome("APPLIED", None, "ready")
        case "ready", "PLAY":
            return Outcome("APPLIED", None, "playing")
        case "playing", "PAUSE":
            return Outcome("APPLIED", None, "paused")
        case "paused", "RESUME":
            return Outcome("APPLIED", None, "playing")
        case (("loading" | "ready" | "playing" | "paused"), "STOP"):
            return Outcome("APPLIED", None, "stopped")
        case "stopped", "RESET":
            return Outcome("APPLIED", None, "idle")
        case _:
            return Outcome("REJECTED", "UNDEFINED_TRANSITION", state)


def reducer_rate(stream: Stream) -> float:
    """Events/s of the plain flat reducer over the flat stream."""
    state = "idle"
    began = time.process_time()
    for event, _payload, _event_id in stream:
        state = flat_reducer(state, event).state
    return len(stream) / (time.process_time() - began)


def median(measure: Callable[[], float]) -> float:
    """The median of `RUNS` measurements."""
    return statistics.median(measure() for _ in range(RUNS))


def check(chart: Chart, stream: Stream) -> None:
    """Every event of the stream must apply (a benchmark of rejections would flatter us)."""
    s0 = state = chart.start()
    for event, payload, event_id in stream:
        result = chart.send(state, event, payload, event_id=event_id)
        assert result.status is Status.APPLIED, (event, result.reason, result.message)
        state = s0 if result.state.is_final else result.state


class Row(NamedTuple):
    """One line of the table: statekit's rates, the limit's, and their ratios, per run."""

    what: str
    ours: list[float]
    limit: list[float]

    def show(self) -> str:
        ratios = [lim / ours for ours, lim in zip(self.ours, self.limit, strict=True)]
        return (
            f"{self.what:58} {_spread(self.ours, 'k')} {_spread(self.limit, 'k')}"
            f"   {statistics.median(ratios):5.2f}x ({min(ratios):.2f}-{max(ratios):.2f})"
        )


def _spread(values: Sequence[float], unit: str) -> str:
    m, lo, hi = statistics.median(values), min(values), max(values)
    return f"{m / 1e3:7,.0f}k ({lo / 1e3:,.0f}-{hi / 1e3:,.0f})"


def measure(runs: int, what: str, ours: Callable[[], float], limit: Callable[[], float]) -> Row:
    """`runs` interleaved runs of the limit then statekit, after one warm-up of each."""
    limit()
    ours()
    row = Row(what, [], [])
    for _ in range(runs):
        row.limit.append(limit())
        row.ours.append(ours())
    return row


def runner_step_us(chart: Chart, events: int = 5000) -> float:
    """µs of CPU per event of the counter chart stepped as the runner steps it: `send`
    with `now_ms`, then the state, the evidence, the armed timers, the undelayed sends
    and the messages read (the runner's own work, such as encoding, is left out)."""
    stream = [("Incr", {"by": i % 7}, f"evt-{i}") for i in range(events)]
    state = chart.start()
    send = chart.send
    now = 1_700_000_000_000
    began = time.process_time()
    for event, payload, event_id in stream:
        result = send(state, event, payload, event_id=event_id, now_ms=now)
        state = result.state
        result.evidence  # noqa: B018 (read, as the runner reads them)
        result.timers_armed  # noqa: B018
        result.sent  # noqa: B018
        result.emitted  # noqa: B018
    return (time.process_time() - began) / events * 1e6


PATHS = (
    (", cached path (Chart.send)", "cached", ""),
    (", cached path, with evidence", "cached", "built"),
    (", general path (Chart(memo=False))", "general", ""),
    (", general path, with evidence", "general", "built"),
    (", general path, evidence JSON", "general", "json"),
    (", reference loop (memoised=False)", "reference", ""),
    (", reference loop, with evidence", "reference", "built"),
)
"""The rows of the guarded and task charts: (label, path, evidence). The cached path is
`Chart.send` with the memo of data-free macrosteps (on these charts almost every event
reads data, so it takes the general path); the general path is `Chart(memo=False)`:
the selection and macrostep compiled per (configuration, event), what every event of
a user's stream takes when nothing is memoised (the aims: within 3x of the hand
reducer, 4x with the evidence); the reference loop is `memoised=False`, SCXML's
macrostep loop, the oracle of the differential tests (no aim)."""


def main() -> None:
    """Check the reducers against `Chart.send`, then print events/s and ratios."""
    from bench import growth, hand_flat, hand_task

    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--runs", type=int, default=7)
    parser.add_argument("--no-growth", action="store_true", help="skip the growth tables")
    args = parser.parse_args()
    runs = args.runs
    flat = compiled(FLAT_CHART, "flat.yaml")
    guarded = compiled(hand_flat.GUARDED_CHART, "flat_guarded.yaml")
    task = compiled(hand_task.TASK_CHART.read_bytes(), "task.yaml")
    flat_events = flat_stream()
    guarded_events = hand_flat.guarded_stream()
    task_events = hand_task.varied_stream()
    check(flat, flat_events)
    check(guarded, guarded_events)
    check(task, task_events)
    hand_flat.agree(guarded, guarded_events)
    hand_flat.agree(guarded, hand_flat.mixed_stream())
    hand_task.agree(task, task_events)
    for seed in range(5):
        hand_task.agree(task, seed=seed, count=3000)
    print("every reducer agrees with Chart.send event by event; timing", runs, "runs")
    print(f"{'what':58} {'statekit events/s':>19} {'hand reducer':>19}   reducer/statekit")

    flat_general = Chart(flat.ir, memo=False)
    rows = [
        measure(
            runs,
            "flat 6 states, cached path (memo)",
            lambda: statekit_rate(flat, flat_events),
            lambda: reducer_rate(flat_events),
        ),
        measure(
            runs,
            "flat 6 states, general path (Chart(memo=False))",
            lambda: statekit_rate(flat_general, flat_events),
            lambda: reducer_rate(flat_events),
        ),
        measure(
            runs,
            "flat 6 states, reference loop (memoised=False)",
            lambda: statekit_rate(flat, flat_events, sender(flat, memoised=False)),
            lambda: reducer_rate(flat_events),
        ),
    ]
    hand = lambda: hand_flat.reducer_rate(guarded_events)  # noqa: E731
    hand_t = lambda: hand_task.reducer_rate(task_events)  # noqa: E731
    for name, chart, events, limit in (
        ("flat guarded + assign", guarded, guarded_events, hand),
        ("task chart, varied payloads", task, task_events, hand_t),
    ):
        general = Chart(chart.ir, memo=False)
        for label, path, evidence in PATHS:
            on = general if path == "general" else chart
            send = sender(on, memoised=path != "reference", evidence=evidence)
            rows.append(
                measure(runs, f"{name}{label}", partial(statekit_rate, on, events, send), limit)
            )
    for row in rows:
        print(row.show())
    from bench._runner_loops import counter

    counter_chart = counter()
    runner_step_us(counter_chart)
    steps = [runner_step_us(counter_chart) for _ in range(runs)]
    print(
        f"{'counter chart as Runner.apply steps it (evidence read), µs/event':58} "
        f"{statistics.median(steps):7.2f} ({min(steps):.2f}-{max(steps):.2f})"
    )
    if not args.no_growth:
        growth.main(runs)


if __name__ == "__main__":
    main()
