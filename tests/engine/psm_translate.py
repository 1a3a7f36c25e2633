"""A compiled statekit chart as a python-statemachine 3 `StateChart` class, for differential
testing (tests/engine/test_differential.py); not a product feature (no `statekit.interop`).

`translate(chart)` builds the class with python-statemachine's own dict loader,
`statemachine.io.create_machine_class_from_definition`, and `Translation.start()`
runs an instance of it next to our engine (`Mirror`). Everything structural is
translated one to one: compound, parallel and final states, the initial child (or
an initial transition to a deeper descendant), shallow and deep history with its
default, event transitions in document order, several targets (space-separated
ids), targetless transitions, eventless (`always`) transitions and `done`
transitions (SCXML's `done.state.<id>`, with python-statemachine's state ids).

Guards and effects are not re-implemented: each translated guard and effect calls
the chart's own compiled expression closures (`Expression.evaluate(ctx, payload,
active_ids)`) with python-statemachine's view of the moment: its configuration
when the callback runs, the triggering event's payload (empty for eventless and
done transitions), and a context that the translated `assign`s keep on the
instance's model. `emit` records the message on the model; `raise` calls
`machine.raise_`. So both engines see the same guard outcomes as long as they
agree on the order of everything, and any disagreement on selection, conflicts,
exit/entry order, history, done events or effect order shows in the
configuration, the context or the emitted messages.

State ids are dotted paths with `.` replaced by `__` (python-statemachine prefix
matches dotted event names, and a `done.state.<id>` with dots in the id would
match as a prefix). Our root plays SCXML's `<scxml>`; python-statemachine has no
root state, so the root's children become its top-level states, except when the
root is parallel, has transitions of its own, or starts in a deeper descendant:
then a wrapper state `ROOT` stands for it (never reported in configurations, and
a compound wrapper does not end the machine when a final child is reached:
`Translation.terminates` tells whether `Mirror.terminated` is meaningful).

Two deviations of python-statemachine 3.2.2 from the SCXML algorithm are
translated around by default (`scxml_order=True`; docs/semantics.md lists them with
examples): its `State.document_order` is not a pre-order numbering (a state's
next sibling gets the number of its first child), so exit and entry order can
differ from document order across branches; and it selects transitions for the
atomic states in the order they entered the configuration, not in document order,
so after a region is re-entered its transitions lose conflicts they should win.
The translation sets `document_order` to our (pre-order) state ids and keeps the
configuration stored on the model in document order.

`Untranslatable` is raised for what the peer would read differently (see
docs/semantics.md, "Differences from python-statemachine"): event names that
collide with a `StateChart` attribute, or that its prefix matching and
`error_`/`done_state_` aliases would widen; state ids that collide; history on
the root.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, cast

from statemachine import StateChart
from statemachine.io import create_machine_class_from_definition
from statemachine.orderedset import OrderedSet

from statekit.compiler.ir import (
    Assign,
    CompiledChart,
    Effect,
    Emit,
    HistoryKind,
    Raise,
    StateKind,
    StateNode,
    Transition,
    TransitionKind,
)
from statekit.engine.evaluation import out_of_range

ROOT = "ROOT"
"""The id of the wrapper state that stands for our root when one is needed."""
PAYLOAD = "sk_payload"
"""The keyword argument that carries an event's payload to python-statemachine (one
argument, so that payload fields named `event`, `state`, `model`... are not shadowed by
the arguments it injects into callbacks)."""
OPTIONS: Mapping[str, Any] = {
    # Our charts may have trap states and states without a path to a final state.
    "validate_trap_states": False,
    "validate_final_reachability": False,
    "validate_disconnected_states": False,
}
_EMPTY: Mapping[str, Any] = {}
_ALIAS_PREFIXES = ("done_state_", "done_invoke_", "error_")
_PREFIX_TOKENS = ("done", "error")

Callback = Callable[..., Any]


class Untranslatable(ValueError):
    """The chart uses something python-statemachine would read differently."""


class MirrorModel:
    """The python-statemachine instance's model: its state field, our context, the outbox.

    With `order` (state value -> document position), the configuration it stores is kept
    in document order (see `Translation`'s `scxml_order`).
    """

    def __init__(self, context: Mapping[str, Any], order: Mapping[str, int] | None) -> None:
        self._state: Any = None
        self._order = order
        self.ctx: dict[str, Any] = dict(context)
        self.emitted: list[tuple[str, dict[str, Any]]] = []

    @property
    def state(self) -> Any:
        """python-statemachine's state field: a state value or an `OrderedSet` of them."""
        return self._state

    @state.setter
    def state(self, value: Any) -> None:
        order = self._order
        if order is not None and isinstance(value, OrderedSet):
            value = OrderedSet(sorted(value, key=order.__getitem__))
        self._state = value


class Mirror:
    """A running python-statemachine instance of a translated chart, seen with our names."""

    def __init__(self, translation: Translation, context: Mapping[str, Any]) -> None:
        self.translation = translation
        self.model = MirrorModel(context, translation.order)
        self.machine: StateChart[Any] = translation.machine_class(model=self.model)

    def send(self, event: str, payload: Mapping[str, Any]) -> None:
        """Send one external event with its (validated) payload."""
        self.machine.send(event, sk_payload=dict(payload))

    @property
    def configuration(self) -> frozenset[str]:
        """The active states as our dotted paths (ancestors included, no root)."""
        paths = self.translation.paths
        return frozenset(paths[s.id] for s in self.machine.configuration if s.id in paths)

    @property
    def context(self) -> dict[str, Any]:
        """The context as the translated `assign`s left it."""
        return self.model.ctx

    @property
    def terminated(self) -> bool:
        """Whether python-statemachine has stopped (a top-level final state)."""
        return bool(self.machine.is_terminated)

    def take_emitted(self) -> list[tuple[str, dict[str, Any]]]:
        """The messages emitted since the last call, in order."""
        out, self.model.emitted = self.model.emitted, []
        return out


class Translation:
    """A translated chart: the `StateChart` class and the id mappings.

    `scxml_order` corrects the peer's document order and selection order (see the
    module docstring); `errors_as_events` keeps the peer's default of turning an
    exception in a callback into an `error.execution` event (else it propagates).
    """

    def __init__(
        self, chart: CompiledChart, *, scxml_order: bool = True, errors_as_events: bool = False
    ) -> None:
        self.chart = chart
        root = chart.root
        self.wrapped = (
            root.kind is StateKind.PARALLEL
            or bool(root.transitions)
            or any(chart.states[c].parent != 0 for c in root.initial)
        )
        self.terminates = not self.wrapped or root.kind is StateKind.PARALLEL
        self.ids: dict[int, str] = {}
        self.paths: dict[str, str] = {}
        for node in chart.states[1:]:
            psm_id = node.path.replace(".", "__")
            if psm_id in self.paths or psm_id == ROOT or hasattr(StateChart, psm_id):
                raise Untranslatable(f"state id {psm_id!r} ({node.path}) collides")
            self.ids[node.id] = psm_id
            self.paths[psm_id] = node.path
        self._our_ids = {psm_id: i for i, psm_id in self.ids.items()}
        if self.wrapped:
            self.ids[0] = ROOT
        for event in _event_names(chart):
            _check_event_name(event)
            if event in self.paths:
                raise Untranslatable(f"event {event!r} has the id of a state")
        if root.history_children:
            raise Untranslatable("history on the root (our root is never exited)")
        if self.wrapped:
            top = {ROOT: self._state(root) | {"initial": True}}
        else:
            top = self._children(root)
        self.machine_class = create_machine_class_from_definition(
            chart.name.replace("-", "_") or "chart",
            states=cast(Any, top),
            catch_errors_as_events=errors_as_events,
            **OPTIONS,
        )
        self.order: dict[str, int] | None = None
        if scxml_order:
            self.order = {psm_id: i for i, psm_id in self.ids.items()}
            for state in self.machine_class.states_map.values():
                state.document_order = self.order[state.id]

    def start(self, context: Mapping[str, Any] | None = None) -> Mirror:
        """A started instance; `context` overrides the declared defaults (before the
        initial macrostep, as `Chart.start(context)` does)."""
        initial = {name: f.default for name, f in self.chart.context.items()}
        return Mirror(self, {**initial, **(context or {})})

    # -- building the definition ------------------------------------------------------------

    def _children(self, node: StateNode) -> dict[str, Any]:
        states = self.chart.states
        out: dict[str, Any] = {}
        for child in node.children:
            if states[child].kind is StateKind.HISTORY:
                continue
            definition = self._state(states[child])
            if node.kind is StateKind.COMPOUND and child in node.initial:
                definition["initial"] = True
            out[self.ids[child]] = definition
        return out

    def _state(self, node: StateNode) -> dict[str, Any]:
        states = self.chart.states
        definition: dict[str, Any] = {}
        if node.kind is StateKind.FINAL:
            definition["final"] = True
        if node.kind is StateKind.PARALLEL:
            definition["parallel"] = True
        if node.id != 0:
            if node.entry:
                definition["enter"] = [self._effects(node.entry)]
            if node.exit:
                definition["exit"] = [self._effects(node.exit)]
        children = self._children(node)
        if children:
            definition["states"] = children
        if node.history_children:
            definition["history"] = {
                self.ids[h]: {
                    "type": "deep" if states[h].history is HistoryKind.DEEP else "shallow",
                    "transitions": [{"target": self._targets(states[h].history_default)}],
                }
                for h in node.history_children
            }
        on: dict[str, list[dict[str, Any]]] = {}
        eventless: list[dict[str, Any]] = []
        if node.kind is StateKind.COMPOUND and any(
            states[c].parent != node.id for c in node.initial
        ):
            eventless.append({"target": self._targets(node.initial), "initial": True})
        for tid in node.transitions:
            t = self.chart.transitions[tid]
            if t.kind is TransitionKind.ALWAYS:
                eventless.append(self._transition(t))
            elif t.kind is TransitionKind.DONE:
                on.setdefault(f"done.state.{self.ids[t.source]}", []).append(self._transition(t))
            else:
                assert t.event is not None
                on.setdefault(t.event, []).append(self._transition(t))
        if on:
            definition["on"] = on
        if eventless:
            definition["transitions"] = eventless
        return definition

    def _targets(self, targets: tuple[int, ...]) -> str:
        return " ".join(self.ids[t] for t in targets)

    def _transition(self, t: Transition) -> dict[str, Any]:
        out: dict[str, Any] = {"target": self._targets(t.targets) if t.targets else None}
        if t.guards:
            out["cond"] = [self._guard(t)]
        if t.effects:
            out["on"] = [self._effects(t.effects)]
        return out

    # -- callbacks: our compiled closures, python-statemachine's moment ------------------------

    def _active(self, machine: StateChart[Any]) -> frozenset[int]:
        ids = self._our_ids
        return frozenset(ids[s.id] for s in machine.configuration if s.id in ids)

    def _guard(self, t: Transition) -> Callback:
        checks = tuple(c.expression for c in t.guards)
        active_of = self._active

        def guard(event_data: Any) -> bool:
            machine = event_data.machine
            ctx = machine.model.ctx
            payload = event_data.trigger_data.kwargs.get(PAYLOAD, _EMPTY)
            active = active_of(machine)
            return all(bool(check.evaluate(ctx, payload, active)) for check in checks)

        return guard

    def _effects(self, effects: tuple[Effect, ...]) -> Callback:
        active_of = self._active
        defaults = {
            name: {f.name: f.default for f in e.fields if f.has_default}
            for name, e in self.chart.events.items()
        }

        def run(event_data: Any) -> None:
            machine = event_data.machine
            model: MirrorModel = machine.model
            payload = event_data.trigger_data.kwargs.get(PAYLOAD, _EMPTY)
            active = active_of(machine)
            for effect in effects:
                if isinstance(effect, Assign):
                    for field, expr in effect.assignments:
                        model.ctx[field] = _checked(expr.evaluate(model.ctx, payload, active))
                elif isinstance(effect, Emit):
                    body = {
                        key: _checked(expr.evaluate(model.ctx, payload, active))
                        for key, expr in effect.payload
                    }
                    model.emitted.append((effect.type, body))
                elif isinstance(effect, Raise):
                    raised = dict(defaults.get(effect.event, {}))
                    for key, expr in effect.payload:
                        raised[key] = _checked(expr.evaluate(model.ctx, payload, active))
                    machine.raise_(effect.event, **{PAYLOAD: raised})

        return run


def translate(
    chart: CompiledChart, *, scxml_order: bool = True, errors_as_events: bool = False
) -> Translation:
    """python-statemachine's version of `chart` (raises `Untranslatable`)."""
    return Translation(chart, scxml_order=scxml_order, errors_as_events=errors_as_events)


def _checked(value: Any) -> Any:
    """A computed value as our engine keeps it (64-bit integers, finite floats)."""
    problem = out_of_range(value)
    if problem is not None:
        raise OverflowError(problem)
    return value


def _event_names(chart: CompiledChart) -> set[str]:
    names = set(chart.events)
    for t in chart.transitions:
        if t.kind is TransitionKind.EVENT and t.event is not None:
            names.add(t.event)
    return names


def _check_event_name(event: str) -> None:
    """Refuse names python-statemachine would not match exactly (docs/semantics.md)."""
    if hasattr(StateChart, event):
        raise Untranslatable(f"event {event!r} is an attribute of StateChart")
    if event in _PREFIX_TOKENS:
        raise Untranslatable(f"event {event!r} would prefix-match {event}.* events")
    if event.startswith(_ALIAS_PREFIXES):
        raise Untranslatable(f"event {event!r} also declares a dotted alias in the peer")
