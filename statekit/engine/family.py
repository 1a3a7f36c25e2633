"""The family step: one step of a member, then every delivery it causes, in one FIFO queue.

A family is a root instance and the children it invoked, transitively
(`statekit.engine.family_members`). One step of any member is a *family step*:
the member's macrostep runs, and what it produces for other members goes on ONE
queue in this order:

1. the children of the states it left are cancelled (exit order);
2. the children of the states it entered (and did not leave) start (entry order),
   their input evaluated against the state the macrostep ended with;
3. its undelayed `send`s, to its parent or a child (`to:`), to a member an address
   names (`to: {address}`, `statekit.engine.family_addresses`) and to itself, in
   effect order (before all of them, the event it processed, to each child that runs
   with `forward: true`: `statekit.engine.family_forwarding`);
4. when it reached a top-level final state: it is DONE, and (a child)
   `done.invoke.<id>` goes to its parent with its final state's `output:`.

Then each queued delivery is a classified step of its target (APPLIED,
ALREADY_APPLIED or REJECTED, as any event), whose own outputs join the end of the
queue, until the queue is empty. A child that cannot start (its chart is unknown,
its input is refused, or the parent's input expression failed), or whose step is
REJECTED `EVALUATION_ERROR`, sends `error.invoke.<id>` `{reason}` to its parent.
Cancelling a member cancels its armed timers and its running children in turn; a
cancelled member REJECTS every later event with `INVOCATION_CANCELLED`. Sends to another instance
(`to: {chart, instance}`) are not delivered here: they are `outbound`, with an
event ID derived from the sender (the runner writes them as inbox rows).

`FamilyRouter` owns the queue and the rule once; a driver loops over it, loading
each target as the queue reaches it (the Simulator from memory, the runner from its
store, locking the root first) and saving what each `DeliveryRecord` says:

    router = FamilyRouter(charts, now_ms=now)
    record = router.begin(delivery, load(delivery.target))
    while (delivery := router.next()) is not None:
        record = router.deliver(delivery, load(delivery.target))

More than `bound` deliveries in one family step (a ping-pong of sends) stops it:
`router.exceeded` is set, and the driver discards the whole family step (the
first event is then REJECTED `FAMILY_BOUND`: nothing changed, as for `LIVELOCK`).

The first delivery of an event from outside of a type only a family makes
(`done.invoke.<id>`, `error.invoke.<id>`, a `reply:` event not marked as the reply:
`statekit.engine.family_events`) is REJECTED `FAMILY_EVENT` by `begin`; a driver that
decides the first step itself (the runner) asks `refusal` first.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Mapping
from types import MappingProxyType
from typing import Any

from statekit.compiler.expressions.event_meta import EventPayload, sent_as, sent_by
from statekit.compiler.invocations import ERROR_REASON_FIELD, done_event, error_event
from statekit.compiler.ir import StateKind
from statekit.engine.chart import Chart, StartError
from statekit.engine.errors import EvaluationError
from statekit.engine.evaluation import computed_value
from statekit.engine.family_addresses import NO_RECEIVER as NO_RECEIVER
from statekit.engine.family_addresses import address_delivery, refused_address, unreachable
from statekit.engine.family_events import FAMILY_EVENT, from_outside
from statekit.engine.family_forwarding import forwards
from statekit.engine.family_members import (
    NO_CHILDREN,
    NO_PAYLOAD,
    Delivery,
    DeliveryKind,
    DeliveryRecord,
    Member,
    MemberStatus,
    OutboundMessage,
    child_instance_id,
    disarmed,
)
from statekit.engine.family_outputs import MessageKind, OutgoingMessage
from statekit.engine.result import EVALUATION_ERROR, Result, Status
from statekit.engine.timers import SentEvent

DEFAULT_FAMILY_BOUND = 1_000
"""How many deliveries one family step makes before it stops (`FAMILY_BOUND`)."""

FAMILY_BOUND = "FAMILY_BOUND"
"""The family step made more deliveries than its bound (sends going back and forth):
nothing changed."""
INVOCATION_CANCELLED = "INVOCATION_CANCELLED"
"""The member was cancelled (its invoking state was left): it takes no more events."""
UNKNOWN_CHART = "UNKNOWN_CHART"
"""An invocation names a chart (or version) the family step cannot find."""
INVALID_INPUT = "INVALID_INPUT"
"""The child's chart refused the input (a field it lacks, a value of the wrong type)."""

ChartLookup = Callable[[str, int | None], Chart | None]
"""The chart of a name and version (None: the newest), or None when unknown."""


class FamilyRouter:
    """The queue of one family step and its routing rule (module docstring)."""

    __slots__ = ("_charts", "_queue", "bound", "count", "exceeded", "now_ms", "outbound")

    def __init__(
        self, charts: ChartLookup, *, now_ms: int | None = None, bound: int = DEFAULT_FAMILY_BOUND
    ) -> None:
        self._charts = charts
        self._queue: deque[Delivery] = deque()
        self.now_ms = now_ms
        self.bound = bound
        self.count = 0
        self.exceeded = False
        self.outbound: list[OutboundMessage] = []

    def begin(self, delivery: Delivery, member: Member | None) -> DeliveryRecord:
        """The family step's first delivery (an event from outside, or a timer). An event
        only a family makes (`family_events.from_outside`) is REJECTED `FAMILY_EVENT`."""
        if delivery.kind is DeliveryKind.EVENT and member is not None:
            refused = self.refusal(member, delivery.event, reply=delivery.reply)
            if refused is not None:
                self.count += 1
                return DeliveryRecord(
                    delivery, member, member, reason=FAMILY_EVENT, message=refused
                )
        return self.deliver(delivery, member)

    def refusal(self, member: Member, event: str, *, reply: bool = False) -> str | None:
        """Why `event` from outside the family cannot reach `member` (the message of its
        `FAMILY_EVENT` rejection), or None: the one check every driver makes."""
        chart = self._charts(member.chart, member.chart_version)
        return None if chart is None else from_outside(chart, event, reply=reply)

    def stepped(
        self, member: Member, result: Result, payload: Mapping[str, Any] | None = None
    ) -> Member:
        """Queue the outputs of a step the driver ran itself (`member` is before it, the
        event's `payload` for a forwarding child); the member after it is returned (its
        version, children and status)."""
        chart = self._charts(member.chart, member.chart_version)
        if chart is not None:
            self._queue.extend(forwards(chart, member, result, payload, result.event_id))
        return self._after_step(member, result, chart)

    def next(self) -> Delivery | None:
        """The next delivery, or None when the queue is empty or the bound is exceeded."""
        if not self._queue or self.exceeded:
            return None
        if self.count >= self.bound:
            self.exceeded = True
            self._queue.clear()
            return None
        return self._queue.popleft()

    def deliver(self, delivery: Delivery, member: Member | None) -> DeliveryRecord:
        """Run one delivery on `member` (as loaded by the driver; None: not found) and
        queue what it produces."""
        self.count += 1
        kind = delivery.kind
        if kind is DeliveryKind.START:
            return self._start(delivery)
        if delivery.address is not None and (missed := unreachable(delivery, member)):
            self._queue.append(missed[0])  # `error.communication` back to the sender
            return missed[1]
        if member is None:
            return DeliveryRecord(
                delivery, None, None, reason=NO_RECEIVER, message="no such instance"
            )
        if kind is DeliveryKind.CANCEL:
            return self._cancel(delivery, member)
        if member.status is MemberStatus.CANCELLED:
            return DeliveryRecord(
                delivery,
                member,
                member,
                reason=INVOCATION_CANCELLED,
                message=f"instance {member.instance_id!r} was cancelled",
            )
        chart = self._charts(member.chart, member.chart_version)
        if chart is None:
            return DeliveryRecord(delivery, member, member, reason=UNKNOWN_CHART)
        linked = member
        invoke_id = delivery.invoke_id
        if delivery.unlink and member.children.get(invoke_id or "") == delivery.sender:
            # the child is done, or never started: its link goes with its last word
            children = {k: v for k, v in member.children.items() if k != invoke_id}
            linked = member.moved(member.state, children=MappingProxyType(children))
        if kind is DeliveryKind.TIMER:
            result = chart.fire(
                member.state,
                delivery.event,
                generation=delivery.generation,
                now_ms=self.now_ms,
                event_id=delivery.event_id,
                instance_id=member.instance_id,
            )
        else:
            result = chart.send(
                member.state,
                delivery.event,
                _received(delivery, member.instance_id),
                event_id=delivery.event_id,
                now_ms=self.now_ms,
                instance_id=member.instance_id,
            )
        payload = delivery.payload if kind is DeliveryKind.EVENT else None
        self._queue.extend(forwards(chart, member, result, payload, delivery.event_id))
        after = self._after_step(linked, result, chart)
        return DeliveryRecord(delivery, member, after, result)

    # ---- what a step produces ------------------------------------------------------
    def _after_step(self, member: Member, result: Result, chart: Chart | None) -> Member:
        queue = self._queue
        me = member.instance_id
        if result.status is not Status.APPLIED:
            if result.reason == EVALUATION_ERROR and member.parent is not None:
                self._to_parent(member, error_event(member.invoke_id or ""), result.message)
            if result.timer is not None:  # a consumed timer changes the state
                return member.moved(result.state)
            return member
        version = member.version + 1
        sender = f"{me}@{version}"
        index = 0

        def next_id() -> str:
            nonlocal index
            index += 1
            return f"{sender}#{index}"

        children = dict(member.children)
        for cancel in result.invocations_cancelled:
            child = children.pop(cancel.invoke_id, None)
            if child is not None:
                queue.append(Delivery(DeliveryKind.CANCEL, child, event_id=next_id(), sender=me))
        for start in result.invocations_started:
            if start.input is None:  # the parent's input expression failed
                reason = f"{EVALUATION_ERROR}: {start.error}"
                self._queue_error(member, start.invoke_id, reason, next_id())
                continue
            child = child_instance_id(me, start.invoke_id, version)
            children[start.invoke_id] = child
            queue.append(
                Delivery(
                    DeliveryKind.START,
                    child,
                    payload=start.input,
                    event_id=next_id(),
                    sender=me,
                    invoke_id=start.invoke_id,
                    parent=me,
                    chart=start.chart,
                    chart_version=start.version,
                    root=member.family_root,
                )
            )
        for message in result.sends_in_order:
            event_id = next_id()
            if message.__class__ is SentEvent:  # this instance's own external queue
                payload = sent_as(message.payload, message.id)  # `_event.sendid`
                queue.append(Delivery(DeliveryKind.EVENT, me, message.event, payload, event_id, me))
                continue
            assert isinstance(message, OutgoingMessage)
            if message.kind is MessageKind.INSTANCE:
                self.outbound.append(OutboundMessage(me, version, index, event_id, message))
                continue
            if message.kind is MessageKind.ADDRESS:
                queue.append(address_delivery(member, message, children, event_id))
                continue
            if message.kind is MessageKind.PARENT:
                target = member.parent
            else:
                target = children.get(message.to)
            queue.append(
                Delivery(
                    DeliveryKind.EVENT,
                    target or "",
                    message.event,
                    message.payload,
                    event_id,
                    sender=me,
                    invoke_id=member.invoke_id if message.kind is MessageKind.PARENT else None,
                )
            )
        status = member.status
        if result.state.is_final and status is MemberStatus.ACTIVE:
            status = MemberStatus.DONE
            if member.parent is not None:
                self._finished(member, result, chart, next_id())
        return member.moved(
            result.state,
            version=version,
            status=status,
            children=MappingProxyType(children) if children else NO_CHILDREN,
        )

    def _finished(self, member: Member, result: Result, chart: Chart | None, event_id: str) -> None:
        """Queue `done.invoke.<id>` with the output of the top-level final state reached
        (`error.invoke.<id>` when an output expression fails)."""
        invoke_id = member.invoke_id or ""
        output: dict[str, Any] = {}
        if chart is not None:
            ir, state = chart.ir, result.state
            for child in ir.root.children:
                node = ir.states[child]
                if node.kind is StateKind.FINAL and child in state.active_ids:
                    try:
                        for name, expr in node.output:
                            role = f"output field '{name}'"
                            output[name] = computed_value(
                                role, expr, state.context, NO_PAYLOAD, state.active_ids
                            )
                    except EvaluationError as exc:
                        reason = f"{EVALUATION_ERROR}: {exc}"
                        self._to_parent(member, error_event(invoke_id), reason, event_id)
                        return
        self._to_parent(member, done_event(invoke_id), None, event_id, output, unlink=True)

    def _to_parent(
        self,
        member: Member,
        event: str,
        reason: str | None,
        event_id: str | None = None,
        payload: Mapping[str, Any] | None = None,
        *,
        unlink: bool = False,
    ) -> None:
        body = {ERROR_REASON_FIELD: reason or ""} if payload is None else payload
        self._queue.append(
            Delivery(
                DeliveryKind.EVENT,
                member.parent or "",
                event,
                MappingProxyType(dict(body)),
                event_id or f"{member.instance_id}@{member.version}#error{self.count}",
                sender=member.instance_id,
                invoke_id=member.invoke_id,
                unlink=unlink,
            )
        )

    def _queue_error(self, parent: Member, invoke_id: str, reason: str, event_id: str) -> None:
        self._queue.append(
            Delivery(
                DeliveryKind.EVENT,
                parent.instance_id,
                error_event(invoke_id),
                MappingProxyType({ERROR_REASON_FIELD: reason}),
                event_id,
                sender=None,
                invoke_id=invoke_id,
            )
        )

    # ---- starting and cancelling -----------------------------------------------------
    def _start(self, delivery: Delivery) -> DeliveryRecord:
        parent = delivery.parent
        name = delivery.chart or ""
        chart = self._charts(name, delivery.chart_version)
        refused: str | None = None
        if chart is None:
            pinned = "" if delivery.chart_version is None else f" version {delivery.chart_version}"
            refused = f"{UNKNOWN_CHART}: no chart {name!r}{pinned}"
        else:
            try:
                initial = chart.initialize(
                    dict(delivery.payload),
                    event_id=delivery.event_id,
                    now_ms=self.now_ms,
                    instance_id=delivery.target,
                )
            except StartError as exc:
                refused = f"{INVALID_INPUT}: {exc}"
        if refused is not None or chart is None:
            return self._refused(delivery, refused or "")
        root = delivery.root or parent or ""
        created = Member(
            instance_id=delivery.target,
            chart=chart.name,
            chart_version=chart.version,
            state=initial.state,
            version=-1,  # the initial macrostep makes it 0, as the runner's create
            root=root,
            parent=parent,
            invoke_id=delivery.invoke_id,
        )
        after = self._after_step(created, initial, chart)
        return DeliveryRecord(delivery, None, after, initial)

    def refuse_address(self, delivery: Delivery, member: Member | None, why: str) -> DeliveryRecord:
        """An address delivery the driver finds reaches no member of the sender's family
        (`why`; e.g. an instance of another family, which it does not lock), counted as
        a delivery: `error.communication` `{reason}` goes back to the sender."""
        self.count += 1
        error, record = refused_address(delivery, member, why)
        self._queue.append(error)
        return record

    def refuse_start(self, delivery: Delivery, reason: str) -> DeliveryRecord:
        """A START the driver cannot make (e.g. the child's instance ID is taken in its
        store), counted as a delivery: `error.invoke.<id>` `{reason}` to the parent."""
        self.count += 1
        return self._refused(delivery, reason)

    def _refused(self, delivery: Delivery, refused: str) -> DeliveryRecord:
        parent, invoke_id = delivery.parent, delivery.invoke_id or ""
        if parent is None:  # a root: its creator sees the reason
            return DeliveryRecord(delivery, None, None, reason=INVALID_INPUT, message=refused)
        error = Delivery(
            DeliveryKind.EVENT,
            parent,
            error_event(invoke_id),
            MappingProxyType({ERROR_REASON_FIELD: refused}),
            f"{delivery.event_id}#refused",
            sender=delivery.target,
            invoke_id=invoke_id,
            unlink=True,
        )
        self._queue.append(error)
        return DeliveryRecord(delivery, None, None, reason=INVALID_INPUT, message=refused)

    def _cancel(self, delivery: Delivery, member: Member) -> DeliveryRecord:
        if member.status is not MemberStatus.ACTIVE:
            return DeliveryRecord(delivery, member, member)  # done or cancelled already
        for child in member.children.values():
            cancel = Delivery(
                DeliveryKind.CANCEL, child, event_id=delivery.event_id, sender=member.instance_id
            )
            self._queue.append(cancel)
        cancelled = disarmed(member.state)  # its timers go with it
        after = member.moved(cancelled, status=MemberStatus.CANCELLED, children=NO_CHILDREN)
        return DeliveryRecord(delivery, member, after)


def _received(delivery: Delivery, receiver: str) -> dict[str, Any]:
    """The payload `receiver` is sent, saying where the event came from (`_event.origin`:
    the sending member's instance ID; `_event.invokeid`: the invoke id, for an event
    from a child or about an invocation). An instance's sends to itself come from
    nowhere else, as outside a family."""
    origin = delivery.sender if delivery.sender != receiver else None
    if origin is None and delivery.invoke_id is None:
        payload = delivery.payload  # its own `send` (`sent_as`) keeps what it says
        return payload if isinstance(payload, EventPayload) else dict(payload)
    by_send = not delivery.event.startswith(("done.invoke.", "error.invoke."))
    return sent_by(delivery.payload, origin, delivery.invoke_id, by_send=by_send)
