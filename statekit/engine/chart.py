"""`Chart`: the public engine object around one compiled chart.

    chart = statekit.load("machines/payment.yaml")
    s0 = chart.start()
    r = chart.send(s0, "START_PAY", {"amount": 100}, event_id="evt-1")
    r.status, r.reason, r.state, r.emitted, r.evidence

`send` is pure: no I/O, no clock, no mutation of its arguments; the same
inputs give an equal result. It never raises for an event (unknown events,
bad payloads, failing expressions and livelocks are classified results); it
raises `ChartMismatchError` for a state made with another chart (another
digest), and `TypeError` for something that is not a `State`.

Time is an input: `now_ms` (the clock's reading for the step, epoch
milliseconds) turns the relative delays the step arms into due times, and
`fire` delivers an armed timer (`statekit.engine.timers`). A step that reads
`now` in an expression needs it (`statekit.engine.clock_steps`).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from statekit.compiler.expressions.clock import STEP_CLOCK, ClockReading, clock_reading
from statekit.compiler.expressions.instance_reading import STEP_INSTANCE, instance_reading
from statekit.compiler.ir import CompiledChart
from statekit.engine import observers
from statekit.engine.algorithm import initial_macrostep
from statekit.engine.applied_results import applied_result
from statekit.engine.clock_steps import chart_reads_clock, chart_reads_instance, clock_required
from statekit.engine.errors import EvaluationError, LivelockError
from statekit.engine.invariants import broken_invariant
from statekit.engine.observers import installed as _observers
from statekit.engine.observers import watchers as _watchers
from statekit.engine.replay import EventLike, ReplayResult, fold
from statekit.engine.result import Result
from statekit.engine.state import State
from statekit.engine.step import adopt, consume, fire, step
from statekit.engine.tables import DEFAULT_MAX_MICROSTEPS, Tables
from statekit.engine.validation import PayloadError, check_context

START_EVENT = "statekit.start"
"""The event name `Chart.initialize` reports (it is not a chart event)."""


class StartError(ValueError):
    """The initial state cannot be built: a bad context override, or the initial
    macrostep fails (an expression error, a livelock, a broken invariant)."""


class Chart:
    """A compiled chart with its runtime tables: start instances, send events, replay.

    `source` is the YAML text the chart was compiled from, when the caller has it
    (`statekit.load` passes it): the durable runner keeps it in its store, so
    that histories written under this version replay after a newer one is deployed.

    `memo=False` turns off the memo of data-free macrosteps (the *cached* path: an
    event no data can change answered by a result looked up), so that every event
    takes the *general* path, the selection and macrostep compiled per
    (configuration, event) and run on its payload and context; the results are the
    same (see `statekit.engine.step`). For measuring what a stream of events that
    read data costs, on any chart.
    """

    __slots__ = ("_initial", "_memo", "_reads_clock", "_reads_instance", "_source", "_tables")

    def __init__(
        self,
        ir: CompiledChart,
        *,
        max_microsteps: int = DEFAULT_MAX_MICROSTEPS,
        source: str | None = None,
        memo: bool = True,
    ) -> None:
        self._tables = Tables(ir, max_microsteps)
        self._initial: State | None = None
        self._source = source
        self._memo = memo
        self._reads_clock = chart_reads_clock(ir)
        self._reads_instance = chart_reads_instance(ir)
        if _watchers:
            observers.made(self)

    @property
    def source(self) -> str | None:
        """The YAML text this chart was compiled from, or None when it was not given."""
        return self._source

    @property
    def memo(self) -> bool:
        """Whether the memo of data-free macrosteps answers the events it can (the
        constructor's `memo`); results are the same either way."""
        return self._memo

    @property
    def ir(self) -> CompiledChart:
        """The compiled chart (immutable IR)."""
        return self._tables.chart

    @property
    def name(self) -> str:
        """The chart's name (`statechart:`)."""
        return self._tables.chart.name

    @property
    def version(self) -> int:
        """The chart's definition version (`version:`)."""
        return self._tables.chart.version

    @property
    def digest(self) -> str:
        """`sha256:…` of the chart's behaviour; every State carries it."""
        return self._tables.digest

    @property
    def tables(self) -> Tables:
        """The runtime tables (interned configurations and caches) behind this chart."""
        return self._tables

    @property
    def max_microsteps(self) -> int:
        """The bound on microsteps per macrostep (beyond it: LIVELOCK)."""
        return self._tables.max_microsteps

    def initialize(
        self,
        context: Mapping[str, Any] | None = None,
        *,
        event_id: str | None = None,
        now_ms: int | None = None,
        instance_id: str | None = None,
    ) -> Result:
        """Enter the initial configuration: an APPLIED result whose evidence, emitted
        messages, armed timers and sent events are those of the initial macrostep;
        `instance_id`: what `instance.id` reads (`instance_reading`). Raises `StartError`."""
        tables = self._tables
        try:
            ctx = check_context(tables.chart.context, context or {}, complete=False)
        except PayloadError as exc:
            raise StartError(str(exc)) from exc
        with clock_reading(now_ms) as reading, instance_reading(instance_id):
            try:
                run = initial_macrostep(tables, ctx, now_ms=now_ms)
                broken = broken_invariant(tables, run.configuration, run.context)
            except (EvaluationError, LivelockError) as exc:
                if reading.missed:
                    message = f"the initial macrostep of {self.name!r} reads `now`: "
                    raise StartError(message + "give the clock's reading (now_ms)") from exc
                raise StartError(f"the initial macrostep of {self.name!r} failed: {exc}") from exc
        if broken is not None:
            raise StartError(f"invariant '{broken}' does not hold in the initial state")
        state = State(run.configuration, run.context, run.history, run.final_timers())
        shown = {k: v for k, v in ctx.items() if k not in tables.secret_context}
        result = applied_result(
            tables,
            None,
            START_EVENT,
            shown,
            event_id,
            state,
            run.emitted,
            run.trace,
            run.timing,
        )
        if _observers:
            observers.notify(self, None, result)
        return result

    def start(
        self,
        context: Mapping[str, Any] | None = None,
        *,
        now_ms: int | None = None,
        instance_id: str | None = None,
    ) -> State:
        """The initial state; `context` overrides declared defaults (type-checked).

        Raises `StartError`. Messages emitted on entry (and the events sent) are in
        `initialize()`'s result.
        """
        plain = context is None and now_ms is None and instance_id is None
        if plain and self._initial is not None:
            return self._initial
        state = self.initialize(context, now_ms=now_ms, instance_id=instance_id).state
        if plain:
            self._initial = state
        return state

    def send(
        self,
        state: State,
        event_type: str,
        payload: Mapping[str, Any] | None = None,
        *,
        event_id: str | None = None,
        now_ms: int | None = None,
        instance_id: str | None = None,
    ) -> Result:
        """Classify and apply one event (see `statekit.engine.step`); installed observers
        (`statekit.engine.observers`) see the result. The name of an `after` timer's
        event delivers that timer (as `fire`). A step that reads `now` without `now_ms` is
        REJECTED `CLOCK_REQUIRED` (`statekit.engine.clock_steps`); `instance_id` is what
        `instance.id` reads (`statekit.compiler.expressions.instance_reading`)."""
        # set inline, as the clock is (no extra call for charts that never read it)
        instance = STEP_INSTANCE.set(instance_id) if self._reads_instance else None
        try:
            if not self._reads_clock:
                if self._memo:  # (no `memo=` passed: the cached path's call as it was, 1.02 µs)
                    result = step(self._tables, state, event_type, payload, event_id, now_ms=now_ms)
                else:
                    result = step(
                        self._tables, state, event_type, payload, event_id, now_ms=now_ms,
                        memo=False,
                    )  # fmt: skip
            else:
                # set and reset inline, not `with clock_reading(...)`: bench/clock_steps.py,
                # the `now` chart against the same chart reading a payload timestamp, 0.73x
                # with the generator-based context manager, 0.97x (0.97-0.97) so
                reading = ClockReading(now_ms)
                token = STEP_CLOCK.set(reading)
                try:
                    result = step(
                        self._tables, state, event_type, payload, event_id, now_ms=now_ms,
                        memo=self._memo,
                    )  # fmt: skip
                finally:
                    STEP_CLOCK.reset(token)
                if reading.missed:
                    tables = self._tables
                    result = clock_required(self.ir, adopt(tables, state), event_type, event_id)
        finally:
            if instance is not None:
                STEP_INSTANCE.reset(instance)
        if _observers:
            observers.notify(self, state, result)
        return result

    def fire(
        self,
        state: State,
        timer_id: str,
        *,
        generation: int | None = None,
        now_ms: int | None = None,
        event_id: str | None = None,
        instance_id: str | None = None,
    ) -> Result:
        """Deliver the armed timer `timer_id` (`State.timers`): its event is classified
        as by `send`, from the state without the timer, which is consumed whatever the
        classification (`Result.timer` names it). A timer that is not armed, or whose
        generation is not `generation` when given, is REJECTED with `STALE_TIMER` and
        changes nothing (the input state is returned). `instance_id` as for `send`."""
        if self._reads_instance:
            with instance_reading(instance_id):
                return self._fire(state, timer_id, generation, now_ms, event_id)
        return self._fire(state, timer_id, generation, now_ms, event_id)

    def _fire(
        self,
        state: State,
        timer_id: str,
        generation: int | None,
        now_ms: int | None,
        event_id: str | None,
    ) -> Result:
        tables = self._tables
        if not self._reads_clock:
            result = fire(
                tables,
                state,
                timer_id,
                generation=generation,
                now_ms=now_ms,
                event_id=event_id,
                memo=self._memo,
            )
        else:
            with clock_reading(now_ms) as reading:
                result = fire(
                    tables,
                    state,
                    timer_id,
                    generation=generation,
                    now_ms=now_ms,
                    event_id=event_id,
                    memo=self._memo,
                )
            if reading.missed:  # refused, not consumed: the timer stays armed
                result = clock_required(self.ir, adopt(tables, state), result.event, event_id)
        if _observers:
            observers.notify(self, state, result)
        return result

    def consume(
        self,
        state: State,
        timer_id: str,
        *,
        generation: int,
        reason: str,
        message: str,
        event_id: str | None = None,
    ) -> Result:
        """Consume the armed timer `timer_id` without delivering its event, for a caller
        that decided the delivery itself (the durable runner, when the event repeats a
        fact already recorded): REJECTED with `reason` and `message`, the state without
        the timer and nothing else, as a delivery `fire` rejects; `STALE_TIMER` as
        `fire` when the timer is not armed with `generation`. Observers see nothing: the
        chart decided nothing."""
        return consume(
            self._tables,
            state,
            timer_id,
            generation=generation,
            reason=reason,
            message=message,
            event_id=event_id,
        )

    def replay(
        self,
        events: Iterable[EventLike],
        *,
        state: State | None = None,
        instance_id: str | None = None,
    ) -> ReplayResult:
        """Fold a history from `state` (default: `start()`), each step given `instance_id`
        (what `instance.id` reads); stops at the first rejection."""
        begin = self.start(instance_id=instance_id) if state is None else state
        return fold(self, events, begin, instance_id)

    def state_from_json(self, data: str | bytes | Mapping[str, Any]) -> State:
        """`State.from_json(self, data)`."""
        return State.from_json(self, data)

    def __repr__(self) -> str:
        return f"Chart({self.name!r}, version={self.version}, digest={self.digest[:19]}…)"
