"""`HttpLoop`: a `Simulator` whose HTTP messages go out and come back over real HTTP.

    sim = Simulator(chart)
    with HttpLoop(sim, instance_id="o-1") as loop:
        loop.advance(60_000)

The outbox messages of type `message_type` that the simulated instance emits are
delivered by `statekit.http.HttpPoster` (the handler a `Dispatcher` calls) to an
`event_intake` served by uvicorn on loopback (`LoopbackServer`) at `loop.location`
(`/instances/<instance_id>/events`); each event the intake takes is sent into the
simulator (its external queue) in the order the POSTs were answered. It stays
deterministic: `settle()` posts every message not yet posted, one at a time (a POST
returns once the intake has taken its event), then sends the taken events, and
repeats until no new message was emitted; `advance(ms)` settles before each timer
falls due, so an HTTP event comes before a timer the virtual clock has not reached.
The intake's answer to a POST is 200 once the event is queued; the step that takes
it runs after, on the caller's thread (a rejection is in `simulator.results`).
"""

from __future__ import annotations

import queue
from types import TracebackType

from statekit.engine.chart import Chart
from statekit.http.intake import IntakeAnswer, IntakeEvent, event_intake
from statekit.http.loopback import LoopbackServer
from statekit.http.poster import HttpPoster
from statekit.runner.outbox import OutboxMessage
from statekit.testing.clock_simulator import Simulator


class HttpLoop:
    """HTTP messages of one simulated instance, out and back (module docstring)."""

    def __init__(
        self,
        simulator: Simulator,
        *,
        instance_id: str = "sim",
        message_type: str = "basichttp",
        unnamed_event: str | None = None,
    ) -> None:
        self.simulator = simulator
        self.instance_id = instance_id
        self.message_type = message_type
        self._taken: queue.Queue[IntakeEvent] = queue.Queue()
        app = event_intake(simulator.chart, self._take, unnamed_event=unnamed_event)
        self._server = LoopbackServer(app)
        self._poster = HttpPoster(lambda _message: self.location)
        self._read = 0  # results whose emitted messages were posted

    @property
    def chart(self) -> Chart:
        return self.simulator.chart

    @property
    def location(self) -> str:
        """The intake's URL for this instance (SCXML's `_ioprocessors.basichttp.location`)."""
        return f"{self._server.url}/instances/{self.instance_id}/events"

    def _take(self, event: IntakeEvent) -> IntakeAnswer:
        if event.instance_id != self.instance_id:
            return IntakeAnswer(404, {"error": f"no instance {event.instance_id!r}"})
        self._taken.put(event)
        return IntakeAnswer(200, {"status": "QUEUED"})

    def settle(self) -> int:
        """Post every new message and send the events taken back (module docstring);
        how many messages were posted."""
        posted = 0
        while True:
            results = self.simulator.results
            fresh = results[self._read :]
            sequence = self._read
            self._read = len(results)
            messages = [
                OutboxMessage(self.instance_id, m.message_id, sequence + i, m.type, m.payload, 1)
                for i, result in enumerate(fresh)
                for m in result.emitted
                if m.type == self.message_type
            ]
            if not messages:
                return posted
            for message in messages:
                self._poster(message)
                posted += 1
            while not self._taken.empty():
                event = self._taken.get_nowait()
                self.simulator.send(event.type, event.payload)

    def advance(self, ms: int) -> None:
        """Move the virtual clock `ms` on, settling before each timer is due."""
        until = self.simulator.now_ms + ms
        while True:
            self.settle()
            due = self.simulator.next_due_ms
            if due is None or due > until:
                break
            self.simulator.advance(max(0, due - self.simulator.now_ms))
        self.simulator.advance(until - self.simulator.now_ms)
        self.settle()

    def __enter__(self) -> HttpLoop:
        self._server.__enter__()
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        trace: TracebackType | None,
    ) -> None:
        self._server.__exit__(kind, error, trace)
