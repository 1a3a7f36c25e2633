"""Events per second of `Chart.send`: a flat 6-state chart and machines/task.yaml.

Run: `python -m bench.engine_core` from the repository root. Each figure is the
median of 5 runs over a realistic stream of valid events, cycled. Next to the
flat chart runs a hand-written `match` reducer of the same chart, the floor
for "what a team would write by hand": it returns an immutable outcome
(status, reason, new state) but checks no payload, keeps no evidence, runs no
invariants and emits nothing. Peer engines are added by `bench/peers.py`
(see `FLAT_CHART`, `flat_stream` and `task_stream`, which it reuses).
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any, NamedTuple

from statekit.compiler.pipeline import compile_source
from statekit.engine.chart import Chart
from statekit.engine.result import Status

ROOT = Path(__file__).resolve().parent.parent
RUNS = 5
Stream = Sequence[tuple[str, Mapping[str, Any] | None, str]]

FLAT_CHART = """
statechart: flat
description: A media loader with six flat states and seven events, no guards, no context.
events: {LOAD: {}, LOADED: {}, PLAY: {}, PAUSE: {}, RESUME: {}, STOP: {}, RESET: {}}
initial: idle
states:
  idle: {on: {LOAD: loading}}
  loading: {on: {LOADED: ready, STOP: stopped}}
  ready: {on: {PLAY: playing, STOP: stopped}}
  playing: {on: {PAUSE: paused, STOP: stopped}}
  paused: {on: {RESUME: playing, STOP: stopped}}
  stopped: {on: {RESET: idle}}
"""
FLAT_CYCLE = ("LOAD", "LOADED", "PLAY", "PAUSE", "RESUME", "STOP", "RESET")


def flat_stream(cycles: int = 2000) -> Stream:
    """The flat chart's cycle: idle, loading, ready, playing, paused, playing, stopped, idle."""
    return [(event, None, f"e{i}") for i in range(cycles) for event in FLAT_CYCLE]


def task_stream(tasks: int = 500) -> Stream:
    """Task histories, each from `queued` to a final state (the runner restarts from there):
    a clean completion; a retryable failure, a retry and a completion; a cancel while
    running and its reconciliation; a cancel while queued."""
    out: list[tuple[str, Mapping[str, Any] | None, str]] = []

    def start(attempt: int) -> tuple[str, Mapping[str, Any]]:
        return ("TaskStarted", {"attempt": attempt, "worker_id": "w-7", "lease_until_ms": 10**12})

    def complete(attempt: int) -> list[tuple[str, Mapping[str, Any]]]:
        return [
            start(attempt),
            ("ArtifactUploaded", {"attempt": attempt, "sha256": "9f86d0"}),
            ("ArtifactVerified", {"attempt": attempt, "sha256": "9f86d0"}),
            ("TaskCompleted", {"attempt": attempt}),
        ]

    failed: Mapping[str, Any] = {"attempt": 1, "error": "timeout", "retryable": True}
    reconciled: Mapping[str, Any] = {"attempt": 1}
    histories: list[list[tuple[str, Mapping[str, Any]]]] = [
        complete(1),
        [start(1), ("TaskFailed", failed), *complete(2)],
        [start(1), ("TaskCancelled", {"requested_by": "ann"}), ("EffectsReconciled", reconciled)],
        [("TaskCancelled", {"requested_by": "ann"})],
    ]
    n = 0
    for i in range(tasks):
        for event, payload in histories[i % len(histories)]:
            out.append((event, payload, f"e{n}"))
            n += 1
    return out


def statekit_rate(chart: Chart, stream: Stream) -> float:
    """Events/s of `chart.send` over `stream`; a final state restarts from `start()`."""
    s0 = chart.start()
    send = chart.send
    state = s0
    began = time.perf_counter()
    for event, payload, event_id in stream:
        state = send(state, event, payload, event_id=event_id).state
        if state.is_final:
            state = s0
    return len(stream) / (time.perf_counter() - began)


class Outcome(NamedTuple):
    """The hand reducer's result: what a handwritten reducer would return."""

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
    """Events/s of the hand reducer over the same stream."""
    state = "idle"
    began = time.perf_counter()
    for event, _payload, _event_id in stream:
        state = flat_reducer(state, event).state
    return len(stream) / (time.perf_counter() - began)


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


def main() -> None:
    """Print events/s and ratios."""
    flat = Chart(compile_source(FLAT_CHART, "flat.yaml").chart)  # type: ignore[arg-type]
    task_ir = compile_source((ROOT / "machines" / "task.yaml").read_bytes(), "task.yaml").chart
    assert task_ir is not None
    task = Chart(task_ir)
    flat_events, task_events = flat_stream(), task_stream()
    check(flat, flat_events)
    check(task, task_events)
    for _ in range(2):  # warm the caches and the interpreter
        statekit_rate(flat, flat_events)
        statekit_rate(task, task_events)
    flat_rate = median(lambda: statekit_rate(flat, flat_events))
    hand_rate = median(lambda: reducer_rate(flat_events))
    task_rate = median(lambda: statekit_rate(task, task_events))
    print(f"{'what':44} {'events/s':>10}")
    print(f"{'statekit send, flat 6 states':44} {flat_rate:10,.0f}")
    print(f"{'hand-written match reducer, flat':44} {hand_rate:10,.0f}")
    print(f"{'statekit send, machines/task.yaml':44} {task_rate:10,.0f}")
    print(f"hand reducer / statekit (flat): {hand_rate / flat_rate:.2f}x (aim: at most 3x)")


if __name__ == "__main__":
    main()
