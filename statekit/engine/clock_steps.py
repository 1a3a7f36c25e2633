"""Steps of charts that read `now`: the clock reading set for the step, or the refusal.

For a chart whose expressions read `now` (`chart_reads_clock`), `Chart.send`,
`Chart.fire` and `Chart.initialize` run the step inside
`statekit.compiler.expressions.clock.clock_reading`, where `now` evaluates to the
step's `now_ms`. A step that reads `now` when it was given no reading (`now_ms=None`)
is answered REJECTED `CLOCK_REQUIRED` with the input state (nothing changes; a timer
whose delivery needed it stays armed), and an initial macrostep that does raises
`StartError`; a step of such a chart that does not read `now` needs no reading.
Charts that never read `now` take none of this path.
"""

from __future__ import annotations

import dataclasses
import enum
from collections.abc import Mapping

from statekit.compiler.chart_set import chart_effects
from statekit.compiler.expressions.expression import Expression
from statekit.compiler.expressions.tree import EventMeta, iter_nodes
from statekit.compiler.invocations import ToAddress
from statekit.compiler.ir import CompiledChart, Send
from statekit.engine.result import CLOCK_REQUIRED, Result, Status
from statekit.engine.state import State


def chart_reads_clock(chart: CompiledChart) -> bool:
    """Whether any expression of the chart (guards, effects, timers, invariants,
    migrations) reads `now`; remembered per chart digest (a `now` changes the digest)."""
    found = _READS_CLOCK.get(chart.digest)
    if found is None:
        if len(_READS_CLOCK) >= _REMEMBERED:
            _READS_CLOCK.clear()
        found = _READS_CLOCK[chart.digest] = any(e.reads_clock() for e in chart_expressions(chart))
    return found


_READS_CLOCK: dict[str, bool] = {}
_REMEMBERED = 4096
_FIELD_NAMES: dict[type, tuple[str, ...]] = {}
_ATOMS = (str, int, float, bool, type(None), enum.Enum)


def chart_reads_instance(chart: CompiledChart) -> bool:
    """Whether a step of the chart needs its instance's ID: an expression reads
    `instance.id` or `_event.origin`, or a `send` goes to an address; remembered per
    digest."""
    found = _READS_INSTANCE.get(chart.digest)
    if found is None:
        if len(_READS_INSTANCE) >= _REMEMBERED:
            _READS_INSTANCE.clear()
        found = any(e.reads_instance() for e in chart_expressions(chart))
        found = found or sends_to_address(chart) or reads_origin(chart)
        _READS_INSTANCE[chart.digest] = found
    return found


_READS_INSTANCE: dict[str, bool] = {}


def sends_to_address(chart: CompiledChart) -> bool:
    """Whether the chart has a `send: {to: {address}}` (`statekit.engine.addresses`)."""
    return any(isinstance(e, Send) and isinstance(e.to, ToAddress) for e in chart_effects(chart))


def reads_origin(chart: CompiledChart) -> bool:
    """Whether the chart reads `_event.origin` (its own sends' origin is its ID)."""
    return any(
        isinstance(n, EventMeta) and n.field == "origin"
        for e in chart_expressions(chart)
        for n in iter_nodes(e.tree)
    )


def chart_expressions(chart: CompiledChart) -> list[Expression]:
    """Every expression of the compiled chart, each once, found by walking its records
    (every field of every record: a place an expression may be added later is not missed)."""
    found: list[Expression] = []
    seen: set[int] = set()
    stack: list[object] = [chart]
    while stack:
        item = stack.pop()
        if isinstance(item, _ATOMS) or id(item) in seen:
            continue
        seen.add(id(item))
        if isinstance(item, Expression):
            found.append(item)
        elif isinstance(item, tuple | list | frozenset | set):
            stack.extend(item)
        elif isinstance(item, Mapping):
            stack.extend(item.values())
        else:
            cls = item.__class__
            names = _FIELD_NAMES.get(cls)
            if names is None:
                fields = dataclasses.fields(cls) if dataclasses.is_dataclass(cls) else ()
                names = _FIELD_NAMES[cls] = tuple(f.name for f in fields)
            stack.extend(getattr(item, name) for name in names)
    return found


def clock_required(chart: CompiledChart, state: State, event: str, event_id: str | None) -> Result:
    """The refusal of a step of a chart that reads `now`, given no clock reading."""
    message = (
        f"this step of chart {chart.name!r} v{chart.version} reads `now`: give the clock's "
        "reading (now_ms)"
    )
    return Result(Status.REJECTED, CLOCK_REQUIRED, state, str(event), event_id, message=message)
