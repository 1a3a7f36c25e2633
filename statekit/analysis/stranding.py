"""Which reachable configurations of an old chart version a newer one strands, and in
which it enters states the old version lacked.

`statekit migrate` strands an instance when `map_state`
(`statekit.engine.state_migration`) cannot express its state in the newer
version: a state it lacks, an armed timer it does not declare (and the
migration does not map), a context or history that does not fit. `diff` asks
the same mapping (`express_state`, also of versions not bumped yet), so the
two agree by construction: for each reachable abstract state of the old chart
(its configuration and history values), a representative instance state is
built and mapped, and those that do not map are reported with the events
that reach them and the timers armed there; those that map by entering states
(a region added: `statekit.engine.state_completion`) with the states entered.

The representative state is the one an instance has right after entering the
configuration: every `after` timer of an active state armed (at time 0, with
its delay: a literal's value, a `delay:`/`at:` expression's over the context),
and the context at its declared defaults. Two differences from the instances
a store holds, both named in docs/evolution.md: a timer that was delivered
without leaving its state (a targetless timer transition) is no longer armed
in the instance, and a context value other than the default may map where the
default does not, or the other way round (a migration's `context:` expression
over it fails).
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from statekit.analysis.exploration import Exploration, Node
from statekit.compiler.ir import TimerDecl, TimerKind
from statekit.engine.chart import Chart
from statekit.engine.errors import EvaluationError
from statekit.engine.evaluation import computed_value
from statekit.engine.state import STATE_FORMAT, State, StateFormatError
from statekit.engine.state_migration import Stranded, express_state
from statekit.engine.validation import EMPTY


@dataclass(frozen=True, slots=True)
class StrandedConfiguration:
    """A reachable configuration of the old chart that the new one strands, why (the
    reason `statekit migrate` gives), the events that reach it from the start, and the
    timers armed there."""

    configuration: tuple[str, ...]
    why: str
    path: tuple[str, ...]
    timers: tuple[str, ...] = ()

    def to_data(self) -> dict[str, Any]:
        """JSON-ready form."""
        return {
            "configuration": list(self.configuration),
            "why": self.why,
            "path": list(self.path),
            "timers": list(self.timers),
        }


@dataclass(frozen=True, slots=True)
class EnteredConfiguration:
    """A reachable configuration of the old chart whose instances the migration moves
    into states the old version lacked (`entered`, in entry order), and the events that
    reach it from the start."""

    configuration: tuple[str, ...]
    entered: tuple[str, ...]
    path: tuple[str, ...]

    def to_data(self) -> dict[str, Any]:
        """JSON-ready form."""
        return {
            "configuration": list(self.configuration),
            "entered": list(self.entered),
            "path": list(self.path),
        }


@dataclass(frozen=True, slots=True)
class MappedConfigurations:
    """The configurations of the old chart the new one strands, and those it maps by
    entering states, each in breadth-first order."""

    stranded: tuple[StrandedConfiguration, ...]
    entered: tuple[EnteredConfiguration, ...]


def map_configurations(old: Exploration, new: Chart) -> MappedConfigurations:
    """Map the representative state of each reachable abstract state of `old` (one per
    configuration and history values) into `new`, as `statekit migrate` would."""
    chart = Chart(old.chart)
    seen: set[Any] = set()
    stranded: list[StrandedConfiguration] = []
    entered: list[EnteredConfiguration] = []
    for node in old.nodes:
        key = (node.config, node.history_key)
        if key in seen:
            continue
        seen.add(key)
        state = _representative(chart, node)
        if state is None:
            continue
        configuration = tuple(old.chart.states[s].path for s in node.config.atomic)
        path = tuple(b.event for _, b in old.path(node.id) if b.event is not None)
        try:
            mapped = express_state(state, chart, new)
        except Stranded as exc:
            stranded.append(
                StrandedConfiguration(
                    configuration=configuration,
                    why=_why(chart, new, state, str(exc)),
                    path=path,
                    timers=tuple(t.id for t in state.timers),
                )
            )
            continue
        states = tuple(mapped.mapping.get("entered", ()))
        if states and all(e.configuration != configuration for e in entered):
            entered.append(EnteredConfiguration(configuration, states, path))
    return MappedConfigurations(stranded=tuple(stranded), entered=tuple(entered))


def stranded_configurations(old: Exploration, new: Chart) -> Iterator[StrandedConfiguration]:
    """The reachable abstract states of `old` whose instances `new` strands, in
    breadth-first order, one per configuration and history values."""
    yield from map_configurations(old, new).stranded


def _why(old: Chart, new: Chart, state: State, reason: str) -> str:
    """The reason, in diff's words when a state is missing (the first one `map_state`
    finds, in the same order)."""
    declared = new.ir.migration_from(old.version)
    rename = declared.rename if declared is not None else {}
    for path in state.to_data()["configuration"]:
        target = rename.get(path, path)
        if target not in new.ir.path_index:
            renamed = f" (renamed to {target!r})" if target != path else ""
            return f"state {path!r}{renamed} does not exist in version {new.version}"
    return reason


def _representative(chart: Chart, node: Node) -> State | None:
    """The state an instance has right after entering `node`'s configuration (see the
    module docstring); None when it does not load (the analysis cannot tell)."""
    ir = chart.ir
    context = {name: decl.default for name, decl in ir.context.items()}
    active = node.config.ids
    timers = [
        _armed(timer, ir.states[timer.state].path, context, generation)
        for generation, timer in enumerate(
            (t for t in ir.timers if t.state in active and t.state), start=1
        )
    ]
    data: dict[str, Any] = {
        "format": STATE_FORMAT,
        "statechart": chart.name,
        "version": chart.version,
        "digest": chart.digest,
        "configuration": sorted(ir.states[s].path for s in node.config.ordered if s),
        "context": context,
        "history": {
            ir.states[h].path: sorted(ir.states[s].path for s in recorded)
            for h, recorded in node.history.items()
        },
    }
    if timers:
        data.update(timers=timers, timer_generation=len(timers))
    try:
        return State.from_json(chart, data)
    except StateFormatError:
        return None


def _armed(
    timer: TimerDecl, owner: str, context: dict[str, Any], generation: int
) -> dict[str, Any]:
    """A timer as a state's JSON holds it, armed at time 0 over `context`."""
    value = timer.delay_ms
    if value is None and timer.expression is not None:
        try:
            computed = computed_value(timer.name, timer.expression, context, EMPTY, frozenset())
        except EvaluationError:
            computed = 0
        value = computed if isinstance(computed, int) else 0
    at = timer.kind is TimerKind.AT
    return {
        "id": timer.name,
        "event": timer.name,
        "payload": {},
        "delay_ms": None if at else value,
        "due_ms": value,
        "generation": generation,
        "owner": owner,
    }
