"""`Simulator`: one chart instance on a virtual clock, for tests of charts with time.

    sim = Simulator(statekit.load("machines/task.yaml"), now_ms=0)
    sim.send("TaskStarted", {...})
    sim.advance(30_000)                  # every timer due within 30 s fires, in order
    assert sim.state.is_active("recovering")

The clock moves only when a test calls `advance`; nothing sleeps. The
simulator keeps the instance's external queue as SCXML has it: the events a
macrostep sends without a delay (`Result.sent`) are processed after it, in
order, each one's own sends going to the back of the queue, before `send` or
`advance` returns. `advance(ms)` delivers (`Chart.fire`) every armed timer
whose due time is at most the new time, in due-time order (ties in arming
order), moving the clock to each due time as it goes; a due time already
past fires at the next `advance`, `advance(0)` included; timers armed while
advancing that fall due within the window fire too. A paused timer (`pause:`)
is never due: it fires only after a `resume:` arms it again. Every step is given the
clock's reading (`now_ms`), so relative delays become due times.

`history` is what a durable store would keep: every event that applied and
every timer delivery (a consumed one included), as `statekit.Event`s with the
clock's reading, so `chart.replay(sim.history, state=sim.start_state)` gives
`sim.state` again, timers included.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Mapping
from types import MappingProxyType
from typing import Any

from statekit.compiler.expressions.event_meta import sent_as
from statekit.compiler.model.addresses import ERROR_COMMUNICATION, REASON_FIELD
from statekit.engine.addresses import unreachable_reason
from statekit.engine.chart import Chart
from statekit.engine.family_outputs import MessageKind
from statekit.engine.replay import Event
from statekit.engine.result import Result, Status
from statekit.engine.state import State
from statekit.engine.timers import ArmedTimer, SentEvent

DEFAULT_MAX_DELIVERIES = 10_000
"""How many timers one `advance` delivers, and how many sent events one event's queue
processes, before the simulator stops with `SimulatorError` (a chart that re-arms a
timer due at once, or an event that sends itself, would otherwise run forever)."""


SIMULATED_INSTANCE = "simulated"
"""The instance ID a `Simulator` steps as when given none (what `instance.id` reads)."""


class SimulatorError(RuntimeError):
    """More timers came due, or more sent events were queued, than the bound allows."""


class Simulator:
    """One instance of `chart` on a virtual clock starting at `now_ms` (epoch ms).

    The constructor starts the chart (`Chart.initialize` with `context`, then the
    events its initial macrostep sent). `results` lists every `Result` in order:
    the start, each external event, each sent event and each timer delivery.
    """

    __slots__ = ("_chart", "_history", "_instance", "_now", "_results", "_start", "_state")

    def __init__(
        self,
        chart: Chart,
        now_ms: int = 0,
        context: Mapping[str, Any] | None = None,
        *,
        instance_id: str = SIMULATED_INSTANCE,
    ) -> None:
        if now_ms.__class__ is not int:
            raise TypeError(f"now_ms must be an integer (epoch milliseconds), not {now_ms!r}")
        self._chart = chart
        self._now = now_ms
        self._instance = instance_id
        self._results: list[Result] = []
        self._history: list[Event] = []
        first = chart.initialize(context, now_ms=now_ms, instance_id=instance_id)
        self._state = self._start = first.state
        self._results.append(first)
        self._drain(first)

    @property
    def chart(self) -> Chart:
        """The chart the instance runs."""
        return self._chart

    @property
    def state(self) -> State:
        """The instance's current state."""
        return self._state

    @property
    def now_ms(self) -> int:
        """The virtual clock's reading (epoch milliseconds)."""
        return self._now

    @property
    def next_due_ms(self) -> int | None:
        """The earliest due time of a running armed timer, or None when none is (a
        paused timer has none)."""
        dues = [self._due(t) for t in self._state.timers if t.paused_ms is None]
        return min(dues) if dues else None

    @property
    def start_state(self) -> State:
        """The state the initial macrostep entered (before the events it sent)."""
        return self._start

    @property
    def history(self) -> tuple[Event, ...]:
        """The replayable history: the events that applied and the timer deliveries, in
        order, each with the clock's reading (see the module docstring)."""
        return tuple(self._history)

    @property
    def results(self) -> tuple[Result, ...]:
        """Every result so far, in the order the instance took them."""
        return tuple(self._results)

    def send(self, event: str, payload: Mapping[str, Any] | None = None) -> Result:
        """Send an external event now, then process the events it sent (in queue order);
        returns the external event's result (the others are in `results`)."""
        result = self._chart.send(
            self._state, event, payload, now_ms=self._now, instance_id=self._instance
        )
        self._take(result, Event(event, payload, now_ms=self._now))
        return result

    def advance(self, ms: int, *, max_deliveries: int = DEFAULT_MAX_DELIVERIES) -> list[Result]:
        """Move the clock `ms` milliseconds on (`ms` >= 0), delivering every timer due by
        then (see the module docstring); returns every result it caused, in order."""
        if ms.__class__ is not int or ms < 0:
            raise ValueError(f"advance takes a number of milliseconds >= 0, not {ms!r}")
        until = self._now + ms
        start = len(self._results)
        delivered = 0
        while True:
            timer = self._next(until)
            if timer is None:
                break
            if delivered >= max_deliveries:
                raise SimulatorError(
                    f"{delivered} timers delivered before {until} ms and more are due "
                    f"(next: {timer.id!r}); does a timer re-arm itself due at once?"
                )
            delivered += 1
            self._now = max(self._now, self._due(timer))
            result = self._chart.fire(
                self._state,
                timer.id,
                generation=timer.generation,
                now_ms=self._now,
                instance_id=self._instance,
            )
            delivery = Event(
                timer.event,
                timer=timer.id,
                generation=timer.generation,
                now_ms=self._now,
            )
            self._take(result, delivery)
        self._now = until
        return self._results[start:]

    def _next(self, until: int) -> ArmedTimer | None:
        """The armed timer to deliver next by `until`: the earliest due, then the first armed."""
        due = [t for t in self._state.timers if t.paused_ms is None and self._due(t) <= until]
        return min(due, key=lambda t: (self._due(t), t.generation)) if due else None

    def _due(self, timer: ArmedTimer) -> int:
        # Every step here is given the clock, so a timer has a due time; one armed
        # elsewhere without a clock reading is due now.
        return self._now if timer.due_ms is None else timer.due_ms

    def _take(self, result: Result, event: Event) -> None:
        """Record `result` (of `event`), then process the events it sent, in queue order."""
        self._results.append(result)
        if result.status is not Status.REJECTED or result.timer is not None:
            self._history.append(event)
        self._state = result.state
        self._drain(result)

    def _drain(self, result: Result) -> None:
        """Process the events `result` sent and those they send, in queue order."""
        queue = deque(_own(result))
        processed = 0
        while queue:
            sent, payload = queue.popleft()
            processed += 1
            if processed > DEFAULT_MAX_DELIVERIES:
                raise SimulatorError(
                    f"{DEFAULT_MAX_DELIVERIES} sent events processed after {result.event} "
                    f"and more are queued (next: {sent.event}); does an event send itself?"
                )
            follow = self._chart.send(
                self._state, sent.event, payload, now_ms=self._now, instance_id=self._instance
            )
            self._results.append(follow)
            if follow.status is not Status.REJECTED:
                self._history.append(Event(sent.event, sent.payload, now_ms=self._now))
            self._state = follow.state
            queue.extend(_own(follow))

    def __repr__(self) -> str:
        return f"Simulator({self._chart.name!r}, now_ms={self._now}, state={self._state!r})"


def _own(result: Result) -> list[tuple[SentEvent, Mapping[str, Any]]]:
    """What `result` queues for this instance, in effect order, each with the payload it is
    delivered with: its own sends (`_event.sendid`, `_event.origintype`), and for each
    send to an address other than itself `error.communication` (an instance alone has no
    other member to reach, `statekit.engine.addresses`)."""
    own: list[tuple[SentEvent, Mapping[str, Any]]] = []
    for sent in result.sends_in_order if result.messages else result.sent:
        if isinstance(sent, SentEvent):
            own.append((sent, sent_as(sent.payload, sent.id)))
        elif sent.kind is MessageKind.ADDRESS:
            why = unreachable_reason(sent.to or None, "the instance runs alone")
            error = SentEvent(ERROR_COMMUNICATION, MappingProxyType({REASON_FIELD: why}), None)
            own.append((error, error.payload))
    return own
