"""A family step in ONE database transaction: the member's step and every child it starts,
feeds or cancels, transitively, commit together or not at all.

A *family* is a root instance and the children it invoked (docs/semantics.md, "Invoking
charts"); each child is a durable instance of its own chart and version with its own
history, linked to its parent and root in `statekit_family_links`. The routing and its
order are the engine's (`statekit.engine.family.FamilyRouter`, the one owner of the rule,
which the Simulator drives too); `FamilyStep` is the runner's driver of it, in the
caller's write transaction:

- lock order: the family's root first (an event for a child is routed through the
  child's stored link to the root), then each member as the queue reaches it, so two
  steps of one family serialize on the root and never deadlock;
- each step of a member is decided by its `InstanceTransaction` as any event (event-ID
  dedup, business keys, audit rows), then handed to the router (`stepped`), which
  queues what it produces; a queued start creates the child instance (its row, outbox,
  timers and link) from the router's initial step, a queued cancellation marks the
  link `cancelled` and deletes the child's armed timers' rows (they go with it), a child
  that reached a final state has its link marked `done`;
- each member's step is an event of that member, under the event ID the router derives
  from the step that produced it (`statekit.family/<sender>@<version>#<n>`), so a
  redelivery of the outer event is ALREADY_APPLIED for all of it: it was committed with
  it, or not at all;
- messages to instances outside the family (the router's `outbound`) become rows of the
  inbox between instances, written in this transaction (`runner.message_delivery`);
- past the router's bound (`MAX_DELIVERIES`) nothing of the step is kept and the outer
  event is REJECTED `FAMILY_BOUND` (`runner.family_path`).
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from dataclasses import replace
from types import MappingProxyType
from typing import Any

from statekit.compiler.canonical import canonical_json
from statekit.engine.chart import Chart
from statekit.engine.family import INVOCATION_CANCELLED, FamilyRouter
from statekit.engine.family_events import FAMILY_EVENT as FAMILY_EVENT
from statekit.engine.family_members import (
    Delivery,
    DeliveryKind,
    DeliveryRecord,
    Member,
    MemberStatus,
    disarmed,
)
from statekit.engine.result import Result
from statekit.runner.decision_inputs import NOTHING_RECORDED, Command, HistoryFacts, LookedUp
from statekit.runner.errors import RunnerError
from statekit.runner.family_ids import FAMILY_PREFIX as FAMILY_PREFIX
from statekit.runner.family_ids import bounded_id, message_event_id
from statekit.runner.outcome import Outcome, OutcomeStatus
from statekit.runner.sent_meta import own_family_send
from statekit.runner.store.family_rows import (
    ACTIVE,
    CANCELLED,
    DONE,
    LinkRow,
    NewInstanceMessage,
)
from statekit.runner.store.rows import InstanceRow
from statekit.runner.stored_state import state_columns
from statekit.runner.timer_delivery import delivery_command
from statekit.runner.timers import timer_event_id, timer_row
from statekit.runner.transaction import InstanceTransaction, outbox_rows
from statekit.runner.write_stages import WriteStages, known_from

MAX_DELIVERIES = 1000
"""The most deliveries (child starts, cancellations, events between members) one family
step makes; past it the step is refused (`FAMILY_BOUND`), never a hang."""


CHILD_ID_TAKEN = "CHILD_ID_TAKEN"
"""A child could not start: its instance ID is held by an instance a caller created."""


def child_id_taken(child: str) -> str:
    """The reason of the `error.invoke.<id>` of a child whose instance ID is taken."""
    return (
        f"{CHILD_ID_TAKEN}: instance {child!r} exists already (created from outside under "
        "the ID its family derives): the child was not started"
    )


_STATUS = {ACTIVE: MemberStatus.ACTIVE, DONE: MemberStatus.DONE, CANCELLED: MemberStatus.CANCELLED}


class _Created:
    """An instance's initial step, as `stepped` takes a decided step."""

    __slots__ = ("result",)
    duplicate = False
    status = OutcomeStatus.APPLIED

    def __init__(self, result: Result) -> None:
        self.result = result


class BoundReached(Exception):
    """The family step made `MAX_DELIVERIES` deliveries and still had more to make (the
    driver discards the step: `runner.family_path`)."""


class FamilyStep:
    """One family step inside the caller's write transaction (see the module docstring)."""

    def __init__(self, path: WriteStages, now_ms: int) -> None:
        self.path, self.store = path, path.store
        self.now_ms = now_ms
        self.now = time.time()
        self.router = FamilyRouter(self.chart, now_ms=now_ms, bound=MAX_DELIVERIES)
        self.members: dict[str, InstanceTransaction] = {}  # in the order first touched
        self.links: dict[str, LinkRow | None] = {}  # read or made in this step, by child
        self.ended: dict[str, str] = {}  # children ended in this step → their new status
        self.new_links: list[LinkRow] = []

    def chart(self, name: str, version: int | None) -> Chart | None:
        """The router's chart lookup: the runner's own chart or one it was given."""
        return self.path.chart_named(name, version)

    # ---- members -----------------------------------------------------------------------
    def lock_root(self, instance_id: str) -> str:
        """Lock the root of `instance_id`'s family (when it is not the instance itself)
        before anything else; the root's ID."""
        link = self.link(instance_id)
        root = instance_id if link is None else link.root_instance_id
        if root != instance_id:
            self.path.read_locked(root)
            # read again under the root's lock: a family step that held it may have
            # ended this child meanwhile (its link read before the wait is stale)
            del self.links[instance_id]
        return root

    def link(self, child: str) -> LinkRow | None:
        """The link of `child` as this step knows it (None: not invoked)."""
        if child not in self.links:
            self.links[child] = self.store.link(child)
        return self.links[child]

    def status_of(self, member: str) -> str | None:
        """`member`'s link status as of this step (None: not invoked)."""
        if member in self.ended:
            return self.ended[member]
        link = self.link(member)
        return None if link is None else link.status

    def transaction(
        self, instance_id: str, event_id: str | None = None
    ) -> InstanceTransaction | None:
        """The transaction of member `instance_id`: locked and begun when first reached
        (None: no such instance)."""
        tx = self.members.get(instance_id)
        if tx is None:
            row = self.path.read_locked(instance_id, event_id)
            if row is None:
                return None
            tx = self.begin(row)
        return tx

    def begin(self, row: InstanceRow) -> InstanceTransaction:
        """Begin the decisions about the locked member `row`."""
        tx = self.path.begin(row, self.now_ms)
        self.members[row.instance_id] = tx
        return tx

    def member(self, tx: InstanceTransaction) -> Member:
        """The router's view of member `tx` as this step leaves it so far."""
        me = tx.instance_id
        link = self.link(me)
        children = {
            c.invoke_id: c.child_instance_id
            for c in self._children(me)
            if self.status_of(c.child_instance_id) == ACTIVE
        }
        return Member(
            instance_id=me,
            chart=tx.chart.name,
            chart_version=tx.chart.version,
            state=tx.state,
            version=tx.version,
            status=_STATUS[self.status_of(me) or ACTIVE],
            root="" if link is None else link.root_instance_id,
            parent=None if link is None else link.parent_instance_id,
            invoke_id=None if link is None else link.invoke_id,
            children=MappingProxyType(children),
        )

    def _children(self, parent: str) -> list[LinkRow]:
        stored = {c.child_instance_id: c for c in self.store.children(parent)}
        for link in self.new_links:
            if link.parent_instance_id == parent:
                stored[link.child_instance_id] = link
        for child, link in stored.items():
            self.links.setdefault(child, link)
        return list(stored.values())

    # ---- the step ----------------------------------------------------------------------
    def apply(
        self, tx: InstanceTransaction, command: Command, row: InstanceRow, *, reply: bool = False
    ) -> Outcome:
        """Decide the outer `command` on `tx` (its row locked with the record of its event
        ID), then every delivery it causes, in the router's order. The outcome reports
        `tx`'s version and state after all of them. An event only a family makes
        (`done.invoke.<id>`, `error.invoke.<id>`, a `reply:` event unless `reply` says it
        is the one sent back) is REJECTED `FAMILY_EVENT` from outside, by the router's
        rule (`FamilyRouter.refusal`), and recorded in the audit."""
        me = tx.instance_id
        family_only = self.router.refusal(self.member(tx), command.type, reply=reply)
        if family_only is not None and self.store.recorded_event(me, command.event_id) is None:
            return tx.refuse(command, FAMILY_EVENT, family_only)
        outcome = self.decide(tx, command, known_from(row, command.event_id))
        self.drain()
        # the addressed instance as the whole family step leaves it (an `error.invoke`
        # or a child's event may have moved it on): what `expected_version` builds on
        return replace(outcome, version=tx.version, state=tx.state)

    def decide(
        self, tx: InstanceTransaction, command: Command, known: LookedUp | None = None
    ) -> Outcome:
        """One step of a member: refused when it was cancelled, else decided by its
        transaction and handed to the router (which queues its outputs, its own sends
        included: the transaction's queue of them is dropped)."""
        me = tx.instance_id
        before = self.member(tx)
        if before.status is MemberStatus.CANCELLED:
            recorded = tx.recorded_here(command.event_id) or self.store.recorded_event(
                me, command.event_id
            )
            if recorded is None:
                return tx.refuse(command, INVOCATION_CANCELLED, f"instance {me!r} was cancelled")
        outcome = tx.decide(command, self.path.facts(tx, command, known))
        for _sent in tx.sends():  # (the router queues them, in its order)
            pass
        self.stepped(before, outcome, command.payload)
        return outcome

    def fire(self, tx: InstanceTransaction, timer_id: str, generation: int) -> Outcome:
        """The delivery of member `tx`'s armed timer, decided by its transaction (a timer
        the member holds no more is STALE_TIMER), handed to the router, then every
        delivery it causes."""
        before = self.member(tx)
        event_id = timer_event_id(timer_id, generation)
        recorded = self.store.recorded_event(tx.instance_id, event_id)
        timer = tx.state.timer(timer_id)
        facts = NOTHING_RECORDED if recorded is None else HistoryFacts(recorded=recorded)
        if timer is not None and recorded is None:  # (the holder of its event's key)
            pair = (tx.instance_id, event_id)
            known = LookedUp(asked=frozenset((pair,)), found={})
            facts = self.path.facts(tx, delivery_command(timer), known)
        outcome = tx.fire(timer_id, generation, facts)
        for _sent in tx.sends():  # (the router queues them, in its order)
            pass
        self.stepped(before, outcome)
        self.drain()
        return outcome

    def create(self, row: InstanceRow, result: Result) -> InstanceTransaction:
        """The creation of the family's root `row` (inserted at version 0 with `result`,
        its initial step): handed to the router, which starts the children of its
        initial states, then every delivery it causes."""
        tx = self.begin(row)
        tx.state = result.state
        before = replace(self.member(tx), version=-1)  # the initial step makes it 0
        self.stepped(before, _Created(result))
        self.drain()
        return tx

    def stepped(
        self, before: Member, outcome: Outcome | _Created, payload: Mapping[str, Any] | None = None
    ) -> None:
        """Hand a decided step to the router (with its event's payload, for a forwarding
        child), and record a child it finished."""
        result = outcome.result
        if result is None or outcome.duplicate or outcome.status is OutcomeStatus.CONFLICT:
            return
        after = self.router.stepped(before, result, payload)
        self._ended(before, after)

    def drain(self) -> None:
        """Make the router's queued deliveries, in order, until none is left
        (`BoundReached` past its bound)."""
        router = self.router
        while (delivery := router.next()) is not None:
            kind = delivery.kind
            if kind is DeliveryKind.START:
                taken = self.store.instance(delivery.target)
                if taken is not None:  # (a caller created an instance of this ID first)
                    router.refuse_start(delivery, child_id_taken(delivery.target))
                else:
                    self.start(router.deliver(delivery, None))
            elif kind is DeliveryKind.CANCEL:
                tx = self.transaction(delivery.target)
                if tx is not None:
                    before = self.member(tx)
                    record = router.deliver(delivery, before)
                    if record.after is not None:
                        self._ended(before, record.after)
            else:
                self.event(delivery)
        if router.exceeded:
            raise BoundReached

    def event(self, delivery: Delivery) -> None:
        """An event for a member, decided by its transaction (none: nobody to receive it)."""
        event_id = bounded_id(FAMILY_PREFIX, delivery.event_id or "")
        if delivery.address is not None and self._outside(delivery):
            return  # (another family's instance: never locked here)
        tx = self.transaction(delivery.target, event_id) if delivery.target else None
        if tx is None:
            self.router.deliver(delivery, None)  # (counted and classified NO_RECEIVER)
            return
        if delivery.address is not None and (why := _not_taking(self.member(tx))):
            self.router.refuse_address(delivery, self.member(tx), why)
            return
        self.router.count += 1
        told = own_family_send(event_id, tx.instance_id, dict(delivery.payload))
        self.decide(tx, Command(event_id, delivery.event, told))

    def _outside(self, delivery: Delivery) -> bool:
        """Whether the target of an address delivery is an instance of another family
        than its sender's (read from its link, before any lock): then refused, and
        `error.communication` goes back to the sender (`engine.family_addresses`)."""
        link = self.link(delivery.target)
        root = delivery.target if link is None else link.root_instance_id
        if root == delivery.root or self.store.instance(delivery.target) is None:
            return False  # (a missing one is refused when it is not found)
        why = f"the instance {delivery.target!r} is of another family"
        self.router.refuse_address(delivery, None, why)
        return True

    def start(self, record: DeliveryRecord) -> None:
        """Create the child the router started (nothing when it refused to start it: it
        queued `error.invoke.<id>` for the parent)."""
        after, result, delivery = record.after, record.result, record.delivery
        if after is None or result is None:
            return
        chart = self.chart(after.chart, after.chart_version)
        child = after.instance_id
        if chart is None:
            return
        columns = state_columns(result.state)
        initial = canonical_json(dict(delivery.payload))
        if not self.store.insert_instance(
            child, chart=self.path.chart_key(chart), columns=columns, initial_context=initial,
            now=self.now, start_clock_ms=self.now_ms,
        ):  # fmt: skip
            raise RunnerError(f"the child instance {child!r} exists already: not started again")
        if result.emitted:
            self.store.insert_outbox(outbox_rows(child, 0, result.emitted, self.now))
        if result.state.timers:
            self.store.insert_timers([timer_row(child, t, 0) for t in result.state.timers])
        parent = delivery.parent or ""
        sequence = int(child.rsplit("/", 1)[1]) if "/" in child else 0
        link = LinkRow(child, parent, delivery.invoke_id or "", after.family_root, sequence,
                       ACTIVE, self.now)  # fmt: skip
        self.links[child] = link
        self.new_links.append(link)
        if after.status is MemberStatus.DONE:
            self.ended[child] = DONE
        row = InstanceRow(
            instance_id=child, chart_name=chart.name, chart_version=chart.version,
            chart_digest=chart.digest, version=0, columns=columns, initial_context=initial,
            start_clock_ms=self.now_ms,
        )  # fmt: skip
        tx = self.begin(row)
        tx.state = result.state

    def _ended(self, before: Member, after: Member) -> None:
        """Record a linked member the router marked done or cancelled."""
        if before.parent is None or after.status is before.status:
            return
        if after.status is MemberStatus.DONE:
            self.ended[before.instance_id] = DONE
        elif after.status is MemberStatus.CANCELLED:
            self.ended[before.instance_id] = CANCELLED

    # ---- write -------------------------------------------------------------------------
    def write(self) -> None:
        """Write every member's rows, the new links, the ended links and the messages to
        other instances (inside the caller's transaction), and remember the rows. A child
        cancelled in this step loses its armed timers' rows with it."""
        disarm: dict[str, list[str]] = {}
        for child, status in self.ended.items():
            tx = self.members.get(child)
            if status == CANCELLED and tx is not None and tx.state.timers:
                disarm[child] = [t.id for t in tx.state.timers]
                tx.state = disarmed(tx.state)  # (the state its row is remembered with)
        for tx in self.members.values():
            self.path.finish(tx)
        for child, timer_ids in disarm.items():
            self.store.delete_timers(child, timer_ids)
            # its row does not change (no event): the state cached for it must
            tx = self.members[child]
            self.path.rows.put(tx.committed_row(), tx.state)
        if self.new_links:
            self.store.insert_links(self.new_links)
        for child, status in self.ended.items():
            self.store.end_link(child, status, self.now)
        outbound = self.router.outbound
        if outbound:
            self.store.insert_instance_messages(
                [
                    new_message(
                        m.message.chart or "", m.message.to, m.sender, m.sender_version,
                        m.index, m.message.event, dict(m.message.payload), m.message.reply,
                        self.now,
                    )
                    for m in outbound
                ]
            )  # fmt: skip


def new_message(
    target_chart: str,
    target_instance_id: str,
    sender: str,
    sender_version: int,
    index: int,
    event: str,
    payload: Mapping[str, Any],
    reply_event: str | None,
    now: float,
) -> NewInstanceMessage:
    """The inbox row of one message, as the sender's transaction writes it."""
    return NewInstanceMessage(
        target_chart=target_chart,
        target_instance_id=target_instance_id,
        sender_instance_id=sender,
        sender_version=sender_version,
        message_index=index,
        event=event,
        payload=canonical_json(dict(payload)),
        event_id=message_event_id(sender, sender_version, index),
        reply_event=reply_event,
        created_at=now,
    )


def _not_taking(member: Member) -> str | None:
    """Why `member` takes no address delivery (done or cancelled), or None."""
    if member.status is MemberStatus.CANCELLED:
        return f"the instance {member.instance_id!r} is cancelled"
    if member.status is MemberStatus.DONE or member.state.is_final:
        return f"the instance {member.instance_id!r} is done"
    return None
