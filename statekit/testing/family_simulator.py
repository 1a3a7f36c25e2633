"""`FamilySimulator`: families of chart instances in memory, on one virtual clock.

    sim = FamilySimulator([order, payment, shipment], now_ms=0)
    sim.start("order", "o-1", {"order_id": "o-1", "total": 30})
    sim.member("o-1/payment/0").state          # the child the order invoked
    sim.send("authorised", {"ref": "p-7"}, to="o-1/payment/0")
    sim.advance(60_000)                        # every member's timers, in due order

Each step is a family step (`statekit.engine.family`): the member's macrostep, then
every start, cancellation, `send` to a parent or child, own `send` and
`done.invoke`/`error.invoke` it causes, in the family's one queue, before `send`,
`start` or `advance` returns. The charts are known by name and version (an
invocation without `version:` takes the newest given). `outbound` collects the
messages to instances outside their family (`to: {chart, instance}`);
`deliver_outbound()` delivers them, each as its own family step, to the instances
the simulator holds (and, for a `reply:`, the receiver's classification back to the
sender as that event, `{status, reason}`, as a family step of its own). An event
only a family makes (`done.invoke.<id>`, `error.invoke.<id>`, a `reply:` event), sent
with `send` or as a message from another instance, is refused as the runner refuses
it: its step's reason is `FAMILY_EVENT` (`statekit.engine.family_events`). A
cancelled member's timers are cancelled with it. A family
step that exceeds its bound changes nothing: its first delivery's record says
`FAMILY_BOUND`. Nothing sleeps; nothing is durable.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any

from statekit.engine.chart import Chart, StartError
from statekit.engine.family import DEFAULT_FAMILY_BOUND, FAMILY_BOUND, FamilyRouter
from statekit.engine.family_members import (
    Delivery,
    DeliveryKind,
    DeliveryRecord,
    Member,
    MemberStatus,
    OutboundMessage,
)
from statekit.engine.result import Result
from statekit.engine.timers import ArmedTimer


class FamilySimulatorError(ValueError):
    """A call the simulator cannot make: an unknown chart or instance, a taken ID."""


@dataclass(frozen=True, slots=True)
class FamilyStep:
    """What one family step did: every delivery's record, in order (the first is the
    event, timer or start that began it), and whether it exceeded the bound (then
    nothing changed and `records` holds only the first, rejected `FAMILY_BOUND`)."""

    records: tuple[DeliveryRecord, ...]
    exceeded: bool = False

    @property
    def result(self) -> Result | None:
        """The first delivery's result (None when no chart classified it)."""
        return self.records[0].result if self.records else None

    @property
    def reason(self) -> str | None:
        """`FAMILY_BOUND`, the first delivery's own reason when no chart classified
        it, or the chart's rejection reason; None when it applied."""
        if self.exceeded:
            return FAMILY_BOUND
        first = self.records[0]
        return first.reason if first.result is None else first.result.reason


class FamilySimulator:
    """Instances of several charts, in families, on a virtual clock (module docstring)."""

    __slots__ = ("_bound", "_charts", "_members", "_now", "_outbound", "_records")

    def __init__(
        self, charts: Iterable[Chart], now_ms: int = 0, *, bound: int = DEFAULT_FAMILY_BOUND
    ) -> None:
        if now_ms.__class__ is not int:
            raise TypeError(f"now_ms must be an integer (epoch milliseconds), not {now_ms!r}")
        self._charts: dict[tuple[str, int], Chart] = {}
        for chart in charts:
            self._charts[(chart.name, chart.version)] = chart
        self._now = now_ms
        self._bound = bound
        self._members: dict[str, Member] = {}
        self._records: list[DeliveryRecord] = []
        self._outbound: list[OutboundMessage] = []

    # ---- reading ---------------------------------------------------------------------
    @property
    def now_ms(self) -> int:
        """The virtual clock's reading (epoch milliseconds)."""
        return self._now

    @property
    def members(self) -> Mapping[str, Member]:
        """Every instance by ID, in creation order (cancelled and done ones included)."""
        return MappingProxyType(self._members)

    def member(self, instance_id: str) -> Member:
        """The instance with this ID (`FamilySimulatorError` when there is none)."""
        found = self._members.get(instance_id)
        if found is None:
            known = ", ".join(self._members) or "none"
            raise FamilySimulatorError(f"no instance {instance_id!r} (instances: {known})")
        return found

    def status(self, instance_id: str) -> MemberStatus:
        """The instance's status: active, done or cancelled."""
        return self.member(instance_id).status

    @property
    def records(self) -> tuple[DeliveryRecord, ...]:
        """Every delivery of every family step so far, in order."""
        return tuple(self._records)

    @property
    def outbound(self) -> tuple[OutboundMessage, ...]:
        """The messages to instances outside their family not delivered yet, in order."""
        return tuple(self._outbound)

    def chart(self, name: str, version: int | None = None) -> Chart | None:
        """The chart of this name and version (None: the newest), or None."""
        if version is not None:
            return self._charts.get((name, version))
        versions = [v for (n, v) in self._charts if n == name]
        return self._charts[(name, max(versions))] if versions else None

    # ---- acting ----------------------------------------------------------------------
    def start(
        self,
        chart: str,
        instance_id: str,
        context: Mapping[str, Any] | None = None,
        *,
        version: int | None = None,
    ) -> FamilyStep:
        """Create the root of a new family (its initial macrostep is a family step: the
        children it invokes start, and so on). `StartError` for a refused context."""
        found = self.chart(chart, version)
        if found is None:
            raise FamilySimulatorError(f"no chart {chart!r} (version {version or 'newest'})")
        if instance_id in self._members:
            raise FamilySimulatorError(f"instance {instance_id!r} already exists")
        first = Delivery(
            DeliveryKind.START,
            instance_id,
            payload=MappingProxyType(dict(context or {})),
            event_id=f"{instance_id}@start",
            chart=found.name,
            chart_version=found.version,
        )
        step = self._family_step(first)
        if step.records[0].after is None:  # the chart refused the context: nothing changed
            raise StartError(step.records[0].message or "the context was refused")
        return step

    def send(
        self,
        event: str,
        payload: Mapping[str, Any] | None = None,
        *,
        to: str,
        event_id: str | None = None,
    ) -> FamilyStep:
        """Send an external event to instance `to` (a root or any member), then run
        every delivery it causes; `FamilyStep.result` is the event's own result."""
        self.member(to)
        first = Delivery(
            DeliveryKind.EVENT, to, event, MappingProxyType(dict(payload or {})), event_id
        )
        return self._family_step(first)

    def advance(self, ms: int) -> list[FamilyStep]:
        """Move the clock `ms` (>= 0) on, delivering every running member's timers due by
        then, earliest first (ties: the first armed, then the member created first),
        each as a family step; returns those steps in order."""
        if ms.__class__ is not int or ms < 0:
            raise ValueError(f"advance takes a number of milliseconds >= 0, not {ms!r}")
        until = self._now + ms
        steps: list[FamilyStep] = []
        while (due := self._next_timer(until)) is not None:
            member, timer = due
            self._now = max(self._now, self._due(timer))
            first = Delivery(
                DeliveryKind.TIMER,
                member.instance_id,
                timer.id,
                generation=timer.generation,
                event_id=f"{member.instance_id}@timer#{timer.generation}",
            )
            steps.append(self._family_step(first))
            if len(steps) > self._bound:
                raise FamilySimulatorError(f"more than {self._bound} timers due by {until} ms")
        self._now = until
        return steps

    def deliver_outbound(self) -> list[FamilyStep]:
        """Deliver the pending messages to other instances the simulator holds, each
        as its own family step, in order (those sent meanwhile too); a message to an
        instance it does not hold stays in `outbound`."""
        steps: list[FamilyStep] = []
        kept: list[OutboundMessage] = []
        while self._outbound:
            message = self._outbound.pop(0)
            target = message.message.to
            if target not in self._members:
                kept.append(message)
                continue
            first = Delivery(
                DeliveryKind.EVENT,
                target,
                message.message.event,
                message.message.payload,
                message.event_id,
                sender=message.sender,
            )
            step = self._family_step(first)
            steps.append(step)
            reply = message.message.reply
            if reply is not None and message.sender in self._members:
                status = step.result.status.value if step.result is not None else "REJECTED"
                answer = {"status": status, "reason": step.reason}
                steps.append(self._family_step(self._reply(message, reply, answer)))
        self._outbound = kept
        return steps

    @staticmethod
    def _reply(message: OutboundMessage, reply: str, answer: Mapping[str, Any]) -> Delivery:
        return Delivery(
            DeliveryKind.EVENT,
            message.sender,
            reply,
            MappingProxyType(dict(answer)),
            f"{message.event_id}#reply",
            sender=message.message.to,
            reply=True,
        )

    # ---- the loop ----------------------------------------------------------------------
    def _family_step(self, first: Delivery) -> FamilyStep:
        router = FamilyRouter(self.chart, now_ms=self._now, bound=self._bound)
        changed: dict[str, Member] = {}

        def load(instance_id: str) -> Member | None:
            return changed.get(instance_id) or self._members.get(instance_id)

        records = [router.begin(first, load(first.target))]
        _keep(changed, records[-1])
        while (delivery := router.next()) is not None:
            records.append(router.deliver(delivery, load(delivery.target)))
            _keep(changed, records[-1])
        if router.exceeded:
            refused = DeliveryRecord(
                first,
                load(first.target),
                self._members.get(first.target),
                reason=FAMILY_BOUND,
                message=f"more than {router.bound} deliveries in one family step",
            )
            self._records.append(refused)
            return FamilyStep((refused,), exceeded=True)
        self._members.update(changed)
        self._records.extend(records)
        self._outbound.extend(router.outbound)
        return FamilyStep(tuple(records))

    def _next_timer(self, until: int) -> tuple[Member, ArmedTimer] | None:
        best: tuple[int, int, int, Member, ArmedTimer] | None = None
        for order, member in enumerate(self._members.values()):
            if member.status is not MemberStatus.ACTIVE:
                continue  # a cancelled member's timers are disarmed
            for timer in member.state.timers:
                if timer.paused_ms is not None or self._due(timer) > until:
                    continue
                key = (self._due(timer), timer.generation, order)
                if best is None or key < best[:3]:
                    best = (*key, member, timer)
        return None if best is None else (best[3], best[4])

    def _due(self, timer: ArmedTimer) -> int:
        return self._now if timer.due_ms is None else timer.due_ms

    def __repr__(self) -> str:
        return f"FamilySimulator(now_ms={self._now}, members={list(self._members)!r})"


def _keep(changed: dict[str, Member], record: DeliveryRecord) -> None:
    if record.after is not None:
        changed[record.after.instance_id] = record.after
