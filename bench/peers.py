"""statekit next to python-statemachine, transitions and sismic, in one process.

Run: `python -m bench.peers` from the repository root (needs the `bench` extra:
`pip install -e '.[bench]'`). Two charts, each driven by the same event stream in
every engine (bench/engine_core.py's streams, every event applied):

- the flat 6-state chart of bench/engine_core.py, next to the hand-written `match`
  reducer (the floor for pure Python);
- machines/task.yaml (three regions, guards, context updates, outbox messages), as
  faithfully as each library allows (bench/_peer_common.py and the `_peers_*` modules
  say how; bench/README.md lists the simplifications).

Before timing, every peer is run over its stream next to statekit, and must reach the
same active states, end at the same events and emit the same messages after every
event. Timing: the median of 5 runs of the whole stream, in CPU time of the process
(`time.process_time`, as in bench/engine_core.py: the machine is shared). A task that
ends restarts from a new instance: statekit's is the start state (an immutable value,
shared), a peer's is made before the timed loop, and what making one costs is shown
apart.
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable
from typing import Any

from bench import _peers_psm, _peers_sismic, _peers_transitions
from bench._peer_common import Adapter
from bench.engine_core import (
    FLAT_CHART,
    ROOT,
    RUNS,
    Stream,
    check,
    flat_stream,
    median,
    reducer_rate,
    statekit_rate,
    task_stream,
)
from statekit.compiler.pipeline import compile_source
from statekit.engine.chart import Chart


def agree(chart: Chart, adapter: Adapter, stream: Stream) -> None:
    """The peer reaches the same leaves, finality and messages as statekit, event by event."""
    s0 = state = chart.start()
    instance = adapter.new()
    for i, (event, payload, event_id) in enumerate(stream):
        result = chart.send(state, event, payload, event_id=event_id)
        before = len(adapter.outbox(instance))
        adapter.send(instance, event, payload)
        state = result.state
        where = f"{adapter.name}: event {i} ({event})"
        assert adapter.leaves(instance) == frozenset(state.leaves), where
        assert adapter.is_final(instance) == state.is_final, where
        ours = [(m.type, dict(m.payload)) for m in result.emitted]
        assert adapter.outbox(instance)[before:] == ours, where
        if state.is_final:
            state, instance = s0, adapter.new()


def peer_rate(adapter: Adapter, stream: Stream, restarts: int) -> float:
    """Events/s of `adapter.send` over `stream`; a final instance is replaced by a new
    one made before the timed loop."""
    spare = [adapter.new() for _ in range(restarts)]
    instance = adapter.new()
    send, is_final = adapter.send, adapter.is_final
    began = time.process_time()
    for event, payload, _event_id in stream:
        send(instance, event, payload)
        if is_final(instance):
            instance = spare.pop()
    return len(stream) / (time.process_time() - began)


def creation_us(new: Callable[[], Any], count: int = 200) -> float:
    """Median over `RUNS` runs of the microseconds one `new()` takes."""

    def run() -> float:
        began = time.process_time()
        for _ in range(count):
            new()
        return (time.process_time() - began) / count * 1e6

    return statistics.median(run() for _ in range(RUNS))


def restarts(chart: Chart, stream: Stream) -> int:
    """How many times a run of `stream` ends the chart."""
    s0 = state = chart.start()
    ends = 0
    for event, payload, event_id in stream:
        state = chart.send(state, event, payload, event_id=event_id).state
        if state.is_final:
            ends, state = ends + 1, s0
    return ends


def row(what: str, rate: float, versus: str, new_us: str = "") -> None:
    print(f"{what:44} {rate:12,.0f} {versus:>16} {new_us:>12}")


def main() -> None:
    """Check every peer against statekit, then print events/s and ratios."""
    flat = Chart(compile_source(FLAT_CHART, "flat.yaml").chart)  # type: ignore[arg-type]
    task_ir = compile_source((ROOT / "machines" / "task.yaml").read_bytes(), "task.yaml").chart
    assert task_ir is not None
    task = Chart(task_ir)
    flat_events, task_events = flat_stream(), task_stream()
    check(flat, flat_events)
    check(task, task_events)
    flat_peers: list[Adapter] = []
    task_peers: list[Adapter] = []
    for module in (_peers_psm, _peers_transitions, _peers_sismic):
        f, t = module.adapters()
        flat_peers += f
        task_peers += t
    for adapter in flat_peers:
        agree(flat, adapter, flat_events[:700])
    for adapter in task_peers:
        agree(task, adapter, task_events)
    task_restarts = restarts(task, task_events)

    for _ in range(2):  # warm the caches and the interpreter
        statekit_rate(flat, flat_events)
        statekit_rate(task, task_events)
    print(f"{'engine':44} {'events/s':>12} {'statekit is':>16} {'new (µs)':>12}")
    print(f"flat 6-state chart, {len(flat_events):,} events")
    ours = median(lambda: statekit_rate(flat, flat_events))
    row("statekit Chart.send", ours, "")
    hand = median(lambda: reducer_rate(flat_events))
    row("hand-written match reducer", hand, f"{hand / ours:.2f}x slower")
    for adapter in flat_peers:
        rate = median(lambda a=adapter: peer_rate(a, flat_events, 0))  # type: ignore[misc]
        row(adapter.name, rate, f"{ours / rate:.0f}x faster", f"{creation_us(adapter.new):.0f}")
    print(f"machines/task.yaml, {len(task_events):,} events, {task_restarts} tasks")
    ours = median(lambda: statekit_rate(task, task_events))
    row("statekit Chart.send", ours, "")
    for adapter in task_peers:
        rate = median(lambda a=adapter: peer_rate(a, task_events, task_restarts))  # type: ignore[misc]
        row(adapter.name, rate, f"{ours / rate:.0f}x faster", f"{creation_us(adapter.new):.0f}")
    print("aims: at least 10x python-statemachine on both charts; the hand reducer within 3x")


if __name__ == "__main__":
    main()
