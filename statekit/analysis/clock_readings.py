"""The clock readings of a replayed path: a `now` for each step of a chart that reads it.

The analysis never fixes `now` (`statekit.analysis.guards`: a guard over it is
unknown, so the explorer follows both of its outcomes); a path it prints with
checked payloads (`statekit.analysis.witness`) is replayed through `Chart.send`
with a clock reading per step, chosen like a payload: the search tries, after the
previous step's reading, advances of 0, 1 ms and each positive integer the chart's
expressions mention (durations included) and its neighbours, so that a guard such as
`now > ctx.opened_at + 4h` is met on one side and on the other. The readings start at
`START_MS` and never decrease along a path; a timer's delivery is tried from its due
time on (`reading_floor`). A step's reading travels in its
payload under `NOW_KEY` (not an identifier, so never a payload field); printed paths
show it there, and `send_step` sends it as `now_ms`.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping, Sequence
from typing import Any

from statekit.compiler.expressions.tree import Literal, iter_nodes
from statekit.compiler.ir import CompiledChart
from statekit.engine.chart import Chart
from statekit.engine.clock_steps import chart_expressions, chart_reads_clock
from statekit.engine.result import Result
from statekit.engine.state import State

NOW_KEY = "@now_ms"
"""Where a replayed step's clock reading is kept in its payload (epoch milliseconds)."""
START_MS = 1_767_225_600_000
"""The clock reading the replays start at: 2026-01-01T00:00:00Z."""
MAX_ADVANCES = 24
"""Most advances tried per step (spread over those the chart suggests, the smallest first)."""


def clock_advances(chart: CompiledChart) -> tuple[int, ...] | None:
    """The advances of the clock tried between two steps, smallest first; None for a chart
    that never reads `now` (its steps get no reading). Remembered per chart digest."""
    if chart.digest not in _ADVANCES:
        if len(_ADVANCES) >= _REMEMBERED:
            _ADVANCES.clear()
        _ADVANCES[chart.digest] = _advances(chart)
    return _ADVANCES[chart.digest]


_ADVANCES: dict[str, tuple[int, ...] | None] = {}
_REMEMBERED = 1024


def _advances(chart: CompiledChart) -> tuple[int, ...] | None:
    if not chart_reads_clock(chart):
        return None
    mentioned = {
        node.value
        for e in chart_expressions(chart)
        for node in iter_nodes(e.tree)
        if isinstance(node, Literal) and type(node.value) is int and node.value > 0
    }
    advances = sorted({0, 1} | {v + d for v in mentioned for d in (-1, 0, 1)})
    if len(advances) <= MAX_ADVANCES:
        return tuple(advances)
    step = (len(advances) - 1) / (MAX_ADVANCES - 1)  # spread over the range, both ends kept
    return tuple(sorted({advances[round(i * step)] for i in range(MAX_ADVANCES)}))


def last_reading(payloads: Iterable[Mapping[str, Any] | None]) -> int:
    """The clock reading of the last step of `payloads` that has one, else `START_MS`."""
    reading = START_MS
    for payload in payloads:
        if payload is not None and NOW_KEY in payload:
            reading = int(payload[NOW_KEY])
    return reading


def reading_floor(state: State, event: str, previous: int) -> int:
    """The earliest reading tried for `event` from `state`: not before `previous`, and for
    the delivery of an armed timer (sent by its event's name) not before it is due."""
    armed = state.timer(event)
    due = None if armed is None else armed.due_ms
    return previous if due is None or due <= previous else due


def with_readings(
    payloads: Iterable[dict[str, Any]], previous: int, advances: Sequence[int] | None
) -> Iterator[dict[str, Any]]:
    """Each payload with each clock reading tried after `previous` (unchanged when the
    chart reads no clock)."""
    if advances is None:
        yield from payloads
        return
    for payload in payloads:
        for advance in advances:
            yield {**payload, NOW_KEY: previous + advance}


REPLAYED_INSTANCE = "replayed"
"""What `instance.id` reads in a replay: the analysis treats the ID as an opaque string,
so any one value stands for every instance's."""


def send_step(chart: Chart, state: Any, event: str, payload: Mapping[str, Any] | None) -> Result:
    """`Chart.send` of a replayed step: its fields as the payload, its reading as `now_ms`."""
    if payload is None or NOW_KEY not in payload:
        return chart.send(state, event, payload, instance_id=REPLAYED_INSTANCE)
    fields = {k: v for k, v in payload.items() if k != NOW_KEY}
    return chart.send(
        state, event, fields, now_ms=int(payload[NOW_KEY]), instance_id=REPLAYED_INSTANCE
    )


def start_reading(chart: CompiledChart) -> int | None:
    """The clock reading to start an instance with for a replay (None: the chart reads
    no clock)."""
    return None if clock_advances(chart) is None else START_MS
