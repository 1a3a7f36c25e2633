"""python-statemachine running an exported SCXML document, driven one event at a time.

psm's synchronous engine processes its external queue until it is empty, and a
delayed `<send>` waits there for its due time on the real monotonic clock: a
15-minute timer would block `send` for 15 minutes. The differential test owns
time instead (`frozen_psm_clock`): psm's clock stands still, and its queue counts
as empty when nothing in it is due, so a delayed event stays queued and the loop
ends. The test delivers a timer by taking its trigger off the queue (as `cancel`
does) and sending its event with its data, when statekit's engine fires the same
timer.

An invoked child runs on a thread of its own, and psm sends `done.invoke.<id>` when
the child's event loop ends: on the real clock, once the child has reached its final
state or has nothing queued (a child waiting on a delayed event keeps its loop
sleeping); on the frozen clock, its loop would end at once. So the frozen clock also
holds back the `done.invoke.<id>` of a child that holds a delayed event, until it has
reached its final state or holds none any more (`settle` sends it then).
"""

from __future__ import annotations

import contextlib
import io
from collections.abc import Iterator, Mapping
from typing import Any

import pytest
import statemachine.engines.sync as psm_sync
import statemachine.event_data as psm_event_data
from statemachine.engines.base import EventQueue
from statemachine.invoke import InvokeManager
from statemachine.io.scxml.processor import SCXMLProcessor

FROZEN_MONOTONIC = 1_000.0
SETTLE_ROUNDS = 50
SETTLE_TIMEOUT_S = 10.0


def _nothing_due(queue: EventQueue) -> bool:
    with queue.queue.mutex:
        queue._drop_cancelled_head()  # type: ignore[no-untyped-call]
        heap = queue.queue.queue
        return not heap or heap[0].execution_time > FROZEN_MONOTONIC


def _never_sleep(_seconds: float) -> None:
    raise AssertionError("psm waited for a delayed event although nothing was due")


def freeze_psm_clock(monkeypatch: pytest.MonkeyPatch) -> None:
    """psm's monotonic clock stands still; a queue holding only later events is empty."""
    monkeypatch.setattr(psm_sync, "monotonic", lambda: FROZEN_MONOTONIC)
    monkeypatch.setattr(psm_event_data, "monotonic", lambda: FROZEN_MONOTONIC)
    monkeypatch.setattr(psm_sync, "sleep", _never_sleep)
    monkeypatch.setattr(EventQueue, "is_empty", _nothing_due)
    monkeypatch.setattr(InvokeManager, "_run_sync_handler", _run_child)


def _run_child(
    manager: InvokeManager, callback: Any, handler: Any, ctx: Any, invocation: Any
) -> None:
    """psm's `_run_sync_handler` for an SCXML child, `done.invoke` held back while the
    child has not finished (the module docstring says why)."""
    try:
        handler.run(ctx)
        child = getattr(handler, "_child", None)
        if child is not None and _loop_would_sleep(child):
            invocation.done_pending = True
        elif not ctx.cancelled.is_set():
            manager.sm.send(f"done.invoke.{ctx.invokeid}", data=None)
    except Exception as error:  # as psm's own: a child that fails to start
        if not ctx.cancelled.is_set():
            manager.sm.send("error.execution", error=error)
    finally:
        invocation.terminated = True


class _Transitions:
    """A psm listener: the event of every transition taken, in order."""

    def __init__(self) -> None:
        self.events: list[str | None] = []

    def on_transition(self, event: Any) -> None:
        self.events.append(None if event is None else str(event))


class PsmMachine:
    """One psm instance of an SCXML document; `emitted` collects its `<log>` lines."""

    def __init__(self, text: str) -> None:
        processor = SCXMLProcessor()
        processor.parse_scxml("exported", text)
        self.output = io.StringIO()
        with contextlib.redirect_stdout(self.output):
            self.machine = processor.start()  # type: ignore[no-untyped-call]
        self.transitions = _Transitions()
        self.machine.add_listener(self.transitions)

    def leaves(self) -> frozenset[str]:
        """The ids of the active atomic states."""
        return frozenset(s.id for s in self.machine.configuration if s.is_atomic)

    def data(self, name: str) -> Any:
        """The value of a `<data>`."""
        return getattr(self.machine.model, name)

    def send(self, event: str, payload: Mapping[str, Any]) -> bool:
        """Process `event` with `payload`; whether it took a transition."""
        if self.machine.is_terminated:
            return False
        before = len(self.transitions.events)
        with contextlib.redirect_stdout(self.output):
            self.machine.send(event, **payload)
        taken = self.transitions.events[before:]
        return bool(taken) and taken[0] == event

    def fire(self, event: str, send_id: str | None) -> bool:
        """Deliver the queued delayed event `event` (by its send id when it has one): take
        it off the queue and process it now. A timer the document leaves to its host (no
        queued event) is sent as it is."""
        queue = self.machine._engine.external_queue.queue.queue
        pending = [t for t in queue if not t.cancelled and str(t.event) == event]
        if send_id is not None:
            pending = [t for t in pending if t.send_id == send_id] or pending
        kwargs: dict[str, Any] = {}
        if pending:
            trigger = min(pending, key=lambda t: t.execution_time)
            trigger.cancelled = True
            kwargs = dict(trigger.kwargs)
            kwargs.pop("send_id", None)
        return self.send(event, kwargs)

    def settle(self) -> None:
        """Wait until the thread of every invoked child (and theirs) has ended: what the
        children sent has been processed."""
        for _ in range(SETTLE_ROUNDS):
            invocations = list(_invocations(self.machine))
            alive = [i.thread for _, i in invocations if i.thread and i.thread.is_alive()]
            for thread in alive:
                thread.join(SETTLE_TIMEOUT_S)
            finished = [
                (sm, i)
                for sm, i in invocations
                if getattr(i, "done_pending", False) and not _loop_would_sleep(_child_of(i))
            ]
            for sm, invocation in finished:
                invocation.done_pending = False
                if not invocation.ctx.cancelled.is_set():
                    with contextlib.redirect_stdout(self.output):
                        sm.send(f"done.invoke.{invocation.invokeid}", data=None)
            if not alive and not finished:
                return
        raise AssertionError("psm's invoked children did not settle")

    def emitted(self) -> list[str]:
        """The `<log>` lines printed so far."""
        return [line for line in self.output.getvalue().splitlines() if line]


def _loop_would_sleep(child: Any) -> bool:
    """Whether psm's loop for `child` would still run on the real clock: the child has
    not ended and holds a delayed event it would sleep until."""
    if child.is_terminated:
        return False
    return any(not t.cancelled for t in child._engine.external_queue.queue.queue)


def _child_of(invocation: Any) -> Any:
    return getattr(getattr(invocation, "_handler", None), "_child", None)


def _invocations(machine: Any) -> Iterator[tuple[Any, Any]]:
    """(machine, invocation) for `machine`'s invocations and its children's, recursively."""
    manager = machine._engine._invoke_manager
    for invocation in list(manager._active.values()):
        yield machine, invocation
        child = _child_of(invocation)
        if child is not None:
            yield from _invocations(child)
