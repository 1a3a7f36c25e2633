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

Time. python-statemachine 3 runs delayed events in memory on `time.monotonic()` and
cannot be given a clock, so `VirtualClock` replaces the name `monotonic` in the two
modules that read it (`statemachine.event_data`, `statemachine.engines.sync`) while a
`Mirror` runs, and makes the external queue count as empty while its head is not due
(where the peer would sleep until it is). The peer's own delayed-event queue therefore
runs on the same virtual instants as `statekit.testing.Simulator`: `Mirror.advance(ms)`
moves the clock to each due time in turn and lets the peer take what is due. Timers
are translated the SCXML way: an `after` entry is a delayed `send` of its timer event
(a name of our own, `sk_timer_<id>`) at the end of the state's `enter` callbacks, with
the timer's name as `send_id`, and a `cancel_event` of it on exit; a delayed `send`
effect is `send(event, delay=..., send_id=id)` (preceded by `cancel_event(id)`: a send
whose id is armed replaces it, as ours does) and `cancel` is `cancel_event`. Delays
are passed as `Fraction`s of seconds so that equal due times stay equal (the peer adds
`delay / 1000` to the clock reading).

`Untranslatable` is raised for what the peer would read differently (see
docs/semantics.md, "Differences from python-statemachine"): event names that
collide with a `StateChart` attribute, or that its prefix matching and
`error_`/`done_state_` aliases would widen; state ids that collide; history on
the root;
timers on the root when the root needs no wrapper state (it is never entered there).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from contextlib import ExitStack, contextmanager
from fractions import Fraction
from typing import Any, cast
from unittest import mock

import statemachine.engines.sync as psm_sync
import statemachine.event_data as psm_event_data
from statemachine import StateChart
from statemachine.engines.base import EventQueue
from statemachine.io import create_machine_class_from_definition
from statemachine.orderedset import OrderedSet

from statekit.compiler.ir import (
    Assign,
    Cancel,
    CompiledChart,
    Effect,
    Emit,
    HistoryKind,
    Raise,
    Send,
    StateKind,
    StateNode,
    TimerDecl,
    TimerKind,
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


class _Seconds(Fraction):
    """A clock reading that stays exact when the peer adds `delay / 1000` to it: that is a
    float (`0.0`) for an event without delay, and a float would make two equal due times
    differ (`Fraction(1, 10) + 0.0` is the float 0.1, which is not 1/10)."""

    def __add__(self, other: Any) -> _Seconds:  # type: ignore[override]  # exact for floats too
        exact = Fraction(other) if isinstance(other, float) else other
        return _Seconds(Fraction.__add__(self, exact))


class VirtualClock:
    """The time python-statemachine sees while it runs inside `with clock:` (milliseconds).

    The peer stamps each trigger with `monotonic() + delay / 1000` and takes the head of
    its external queue when that time has come, sleeping until then. Inside the block,
    `monotonic()` returns `now_ms / 1000` as an exact fraction, and the external queue counts
    as empty while its head is not due, so the peer's step returns instead of sleeping.
    """

    def __init__(self, now_ms: int = 0) -> None:
        self.now_ms = now_ms

    def seconds(self) -> Fraction:
        """The clock reading as the peer's `monotonic()` returns it."""
        return _Seconds(self.now_ms, 1000)

    @contextmanager
    def running(self) -> Iterator[None]:
        """The peer on this clock for the duration of the block."""
        clock = self

        def is_empty(queue: EventQueue) -> bool:
            with queue.queue.mutex:
                queue._drop_cancelled_head()  # type: ignore[no-untyped-call]
                heap = queue.queue.queue
                return not heap or heap[0].execution_time > clock.seconds()

        with ExitStack() as stack:
            stack.enter_context(mock.patch.object(psm_event_data, "monotonic", self.seconds))
            stack.enter_context(mock.patch.object(psm_sync, "monotonic", self.seconds))
            stack.enter_context(mock.patch.object(EventQueue, "is_empty", is_empty))
            yield


class MirrorModel:
    """The python-statemachine instance's model: its state field, our context, the outbox.

    With `order` (state value -> document position), the configuration it stores is kept
    in document order (see `Translation`'s `scxml_order`).
    """

    def __init__(
        self, context: Mapping[str, Any], order: Mapping[str, int] | None, clock: VirtualClock
    ) -> None:
        self._state: Any = None
        self._order = order
        self.ctx: dict[str, Any] = dict(context)
        self.emitted: list[tuple[str, dict[str, Any]]] = []
        self.clock = clock

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

    def __init__(
        self, translation: Translation, context: Mapping[str, Any], now_ms: int = 0
    ) -> None:
        self.translation = translation
        self.clock = VirtualClock(now_ms)
        self.model = MirrorModel(context, translation.order, self.clock)
        with self.clock.running():
            self.machine: StateChart[Any] = translation.machine_class(model=self.model)

    def send(self, event: str, payload: Mapping[str, Any]) -> None:
        """Send one external event with its (validated) payload, at the clock's time; the
        peer then also takes what became due at that time (a timer due now)."""
        with self.clock.running():
            self.machine.send(event, sk_payload=dict(payload))

    def advance(self, ms: int) -> None:
        """Move the clock by `ms`, stopping at each due time on the way for the peer to take
        the delayed events due then (in its order: due time, then the order they were sent)."""
        target = self.clock.now_ms + ms
        with self.clock.running():
            while True:
                due = self.next_due_ms
                if due is None or due > target:
                    break
                self.clock.now_ms = max(self.clock.now_ms, due)
                self.machine._engine.processing_loop()
            self.clock.now_ms = target

    @property
    def next_due_ms(self) -> int | None:
        """The earliest due time (ms) of a delayed event still in the peer's queue (whole
        milliseconds: the clock and every delay are)."""
        heap = self.machine._engine.external_queue.queue.queue
        times = [Fraction(t.execution_time) for t in heap if not t.cancelled]
        return int(min(times) * 1000) if times else None

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
            if chart.timer(event) is not None:
                continue
            _check_event_name(event)
            if event in self.paths:
                raise Untranslatable(f"event {event!r} has the id of a state")
        if root.history_children:
            raise Untranslatable("history on the root (our root is never exited)")
        if root.timers and not self.wrapped:
            raise Untranslatable("timers on the root (no state of the peer stands for it)")
        self.timer_events = {t.name: f"sk_timer_{t.id}" for t in chart.timers}
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

    def start(self, context: Mapping[str, Any] | None = None, now_ms: int = 0) -> Mirror:
        """A started instance; `context` overrides the declared defaults (before the
        initial macrostep, as `Chart.start(context)` does); its clock starts at `now_ms`."""
        initial = {name: f.default for name, f in self.chart.context.items()}
        return Mirror(self, {**initial, **(context or {})}, now_ms)

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
        enter: list[Callback] = []
        exit_: list[Callback] = []
        if node.id != 0:
            if node.entry:
                enter.append(self._effects(node.entry))
            if node.exit:
                exit_.append(self._effects(node.exit))
        if node.timers:
            timers = tuple(self.chart.timers[t] for t in node.timers)
            enter.append(self._arm(timers))
            exit_.insert(0, self._disarm(timers))
        if enter:
            definition["enter"] = enter
        if exit_:
            definition["exit"] = exit_
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
                event = self.timer_events.get(t.event, t.event)
                on.setdefault(event, []).append(self._transition(t))
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
                elif isinstance(effect, Send):
                    sent = dict(defaults.get(effect.event, {}))
                    for key, expr in effect.payload:
                        sent[key] = _checked(expr.evaluate(model.ctx, payload, active))
                    delay = _send_delay(effect, model, payload, active)
                    if effect.id is not None:
                        machine.cancel_event(effect.id)
                    machine.send(effect.event, delay=delay, send_id=effect.id, **{PAYLOAD: sent})
                elif isinstance(effect, Cancel):
                    machine.cancel_event(effect.id)

        return run

    def _arm(self, timers: tuple[TimerDecl, ...]) -> Callback:
        """The state's `after` timers as delayed sends of their timer events (on entry,
        after the state's own entry effects, in declaration order)."""
        active_of = self._active
        names = self.timer_events

        def arm(event_data: Any) -> None:
            machine = event_data.machine
            model: MirrorModel = machine.model
            active = active_of(machine)
            for timer in timers:
                if timer.kind is TimerKind.AFTER:
                    assert timer.delay_ms is not None
                    ms = timer.delay_ms
                else:
                    assert timer.expression is not None
                    value = _checked(timer.expression.evaluate(model.ctx, _EMPTY, active))
                    ms = value - model.clock.now_ms if timer.kind is TimerKind.AT else value
                event = names[timer.name]
                machine.send(event, delay=Fraction(ms), send_id=event)

        return arm

    def _disarm(self, timers: tuple[TimerDecl, ...]) -> Callback:
        """Cancelling the state's timers when it is exited."""
        names = [self.timer_events[t.name] for t in timers]

        def disarm(event_data: Any) -> None:
            for name in names:
                event_data.machine.cancel_event(name)

        return disarm


def translate(
    chart: CompiledChart, *, scxml_order: bool = True, errors_as_events: bool = False
) -> Translation:
    """python-statemachine's version of `chart` (raises `Untranslatable`)."""
    return Translation(chart, scxml_order=scxml_order, errors_as_events=errors_as_events)


def _send_delay(
    effect: Send, model: MirrorModel, payload: Mapping[str, Any], active: frozenset[int]
) -> Fraction:
    """The delay (ms, as the peer takes it) of a `send`: 0 for none."""
    if effect.delay is not None:
        return Fraction(_checked(effect.delay.evaluate(model.ctx, payload, active)))
    if effect.at is not None:
        at = _checked(effect.at.evaluate(model.ctx, payload, active))
        return Fraction(at - model.clock.now_ms)
    return Fraction(effect.delay_ms or 0)


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
