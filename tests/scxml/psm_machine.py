"""python-statemachine running an exported SCXML document, driven one event at a time.

psm's synchronous engine processes its external queue until it is empty, and a
delayed `<send>` waits there for its due time on the real monotonic clock: a
15-minute timer would block `send` for 15 minutes. The differential test owns
time instead (`frozen_psm_clock`): psm's clock stands still, and its queue counts
as empty when nothing in it is due, so a delayed event stays queued and the loop
ends. The test delivers a timer by taking its trigger off the queue (as `cancel`
does) and sending its event with its data, when statekit's engine fires the same
timer.
"""

from __future__ import annotations

import contextlib
import io
from collections.abc import Mapping
from typing import Any

import pytest
import statemachine.engines.sync as psm_sync
import statemachine.event_data as psm_event_data
from statemachine.engines.base import EventQueue
from statemachine.io.scxml.processor import SCXMLProcessor

FROZEN_MONOTONIC = 1_000.0


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

    def emitted(self) -> list[str]:
        """The `<log>` lines printed so far."""
        return [line for line in self.output.getvalue().splitlines() if line]
