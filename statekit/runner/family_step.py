"""A family step in ONE database transaction: the member's step and every child it starts,
feeds or cancels, transitively, commit together or not at all.

A *family* is a root instance and the children it invoked (docs/semantics.md, "Invoking
charts"); each child is a durable instance of its own chart and version with its own
history, linked to its parent and root in `statekit_family_links`. `FamilyStep` runs in
the caller's write transaction:

- lock order: the family's root first (an event for a child is routed through the
  child's stored link to the root), then each member as the queue reaches it, so two
  steps of one family serialize on the root and never deadlock;
- the member's command is decided as any event (its undelayed sends after it); what an
  accepted step produces for other members joins ONE FIFO queue in the order produced
  (cancellations of the invocations of states left, messages to the parent or a child,
  then the invocations of states entered, in entry order); each queued item is a
  classified step of its target, whose own outputs join the queue's end;
- a child starts as an instance `<parent>/<invoke id>/<parent version>` of its chart (the
  pinned version, else the newest this runner knows), created with the invocation's
  input as its context; a child that cannot start (no such chart, its input refused)
  gives its parent `error.invoke.<id>` with the reason, as does a child step REJECTED
  with EVALUATION_ERROR; a child whose chart reaches a final state gives its parent
  `done.invoke.<id>` and its link becomes `done`; a cancelled child's link becomes
  `cancelled` (its descendants' too), and a later event for an ended child is REJECTED
  (`CHILD_ENDED`), recorded in its audit;
- each member's step is an event of that member, under an event ID derived from the
  family step (`member_event_id`: the outer instance, its event ID and the delivery's
  place in the queue), so a redelivery of the outer event is ALREADY_APPLIED for all of
  it: it was committed with it, or not at all;
- messages to instances outside the family become rows of the inbox between instances,
  written in this transaction and delivered later (`runner.message_delivery`);
- `MAX_DELIVERIES` deliveries bound a step (a ping-pong between parent and child): past
  it nothing of the step is kept and the outer event is REJECTED (`FAMILY_STEP_BOUND`).
"""

from __future__ import annotations

import time
from collections import deque
from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Any

from statekit.compiler.canonical import canonical_json
from statekit.compiler.invocations import done_event, error_event
from statekit.engine.chart import START_EVENT, Chart, StartError
from statekit.engine.errors import EvaluationError
from statekit.engine.evaluation import computed_value
from statekit.engine.family_outputs import InvocationStart, MessageKind
from statekit.engine.result import Result
from statekit.engine.state import State
from statekit.runner.decision_inputs import Command
from statekit.runner.errors import RunnerError
from statekit.runner.family_ids import (
    CHILD_ENDED,
    child_instance_id,
    member_event_id,
    message_event_id,
)
from statekit.runner.identifier_bounds import MAX_ID_BYTES, utf8_length
from statekit.runner.outcome import Outcome, OutcomeStatus
from statekit.runner.store.family_rows import ACTIVE, CANCELLED, DONE, LinkRow, NewInstanceMessage
from statekit.runner.store.rows import InstanceRow
from statekit.runner.stored_state import state_columns
from statekit.runner.timers import timer_row
from statekit.runner.transaction import InstanceTransaction, outbox_rows
from statekit.runner.write_stages import WriteStages, known_from

MAX_DELIVERIES = 1000
"""The most deliveries (child starts, cancellations, events between members) one family
step makes; past it the step is refused (`FAMILY_STEP_BOUND`), never a hang."""

FAMILY_STEP_BOUND = "FAMILY_STEP_BOUND"
EVALUATION_ERROR = "EVALUATION_ERROR"


@dataclass(frozen=True, slots=True)
class _Event:
    """Deliver `event` to `target` (a member)."""

    target: str
    event: str
    payload: Mapping[str, Any]


@dataclass(frozen=True, slots=True)
class _Start:
    """Start `start`'s child of `parent` (at the parent's `version`)."""

    parent: str
    start: InvocationStart
    version: int


@dataclass(frozen=True, slots=True)
class _Cancel:
    """Cancel `parent`'s child of invocation `invoke_id`."""

    parent: str
    invoke_id: str


class BoundReached(Exception):
    """The family step made `MAX_DELIVERIES` deliveries and still had more to make."""


class FamilyStep:
    """One family step inside the caller's write transaction (see the module docstring)."""

    def __init__(self, path: WriteStages, origin: str, event_id: str, now_ms: int) -> None:
        self.path, self.store = path, path.store
        self.origin, self.event_id, self.now_ms = origin, event_id, now_ms
        self.now = time.time()
        self.members: dict[str, InstanceTransaction] = {}  # in the order first touched
        self.links: dict[str, LinkRow] = {}  # read or made in this step, by child
        self.ended: dict[str, str] = {}  # children ended in this step → their new status
        self.new_links: list[LinkRow] = []
        self.messages: list[NewInstanceMessage] = []
        self.sent_by: dict[tuple[str, int], int] = {}  # (sender, version) → messages so far
        self.queue: deque[_Event | _Start | _Cancel] = deque()
        self.deliveries = 0

    # ---- members -----------------------------------------------------------------------
    def lock_root(self, instance_id: str) -> str:
        """Lock the root of `instance_id`'s family (when it is not the instance itself)
        before anything else; the root's ID."""
        link = self.link(instance_id)
        root = instance_id if link is None else link.root_instance_id
        if root != instance_id:
            self.path.read_locked(root)
        return root

    def link(self, child: str) -> LinkRow | None:
        """The link of `child` as this step knows it (None: not invoked)."""
        if child not in self.links:
            found = self.store.link(child)
            if found is None:
                return None
            self.links[child] = found
        return self.links[child]

    def member(self, instance_id: str, event_id: str | None = None) -> InstanceTransaction | None:
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
        tx = self.path.begin(row, self.now_ms)
        self.members[row.instance_id] = tx
        return tx

    # ---- the step ----------------------------------------------------------------------
    def apply(self, tx: InstanceTransaction, command: Command, row: InstanceRow) -> Outcome:
        """Decide the outer `command` on `tx` (its row locked with the record of its event
        ID), then every delivery it causes, in queue order."""
        outcome = self.path.decide(tx, command, known_from(row, command.event_id))
        self.route(tx, outcome)
        self.drain()
        return outcome

    def drain(self) -> None:
        """Make the queued deliveries, in order, until none is left (`BoundReached` past
        `MAX_DELIVERIES`)."""
        while self.queue:
            self.deliveries += 1
            if self.deliveries > MAX_DELIVERIES:
                raise BoundReached
            item = self.queue.popleft()
            if isinstance(item, _Event):
                self.deliver(item)
            elif isinstance(item, _Start):
                self.start(item)
            else:
                self.cancel(item.parent, item.invoke_id)

    def route(self, tx: InstanceTransaction, outcome: Outcome) -> None:
        """Queue what `outcome` (an outcome of member `tx`, with its sends') produces for
        other members; a child whose step failed or whose chart finished tells its parent."""
        member = tx.instance_id
        for each in (outcome, *outcome.sent):
            result = each.result
            if each.status is OutcomeStatus.APPLIED and result is not None:
                self.outputs(member, each.version, result)
            elif each.reason == EVALUATION_ERROR:
                self.fail(member, each.message or EVALUATION_ERROR)
        if tx.state.is_final:
            self.finish(member, tx)

    def outputs(self, member: str, version: int, result: Result) -> None:
        """Queue the cancellations, messages and starts of one accepted step of `member`."""
        for cancel in result.invocations_cancelled:
            self.queue.append(_Cancel(member, cancel.invoke_id))
        for message in result.messages:
            if message.kind is MessageKind.INSTANCE:
                index = self.sent_by.get((member, version), 0)
                self.sent_by[(member, version)] = index + 1
                self.messages.append(
                    new_message(
                        message.chart or "", message.to, member, version, index, message.event,
                        dict(message.payload), message.reply, self.now,
                    )
                )  # fmt: skip
                continue
            target = self.parent_of(member) if message.kind is MessageKind.PARENT else None
            if message.kind is MessageKind.CHILD:
                target = self.active_child(member, message.to)
            if target is not None:
                self.queue.append(_Event(target, message.event, message.payload))
        for start in result.invocations_started:
            self.queue.append(_Start(member, start, version))

    def deliver(self, item: _Event) -> None:
        """One event for a member: decided as any event (an ended child REJECTS it)."""
        event_id = member_event_id(self.origin, self.event_id, self.deliveries)
        tx = self.member(item.target, event_id)
        if tx is None:
            return  # (a child's row is created with its link: never missing)
        command = Command(event_id, item.event, dict(item.payload))
        ended = self.status_of(item.target)
        if ended not in (None, ACTIVE):
            tx.refuse(command, CHILD_ENDED, f"instance {item.target!r} is {ended}")
            return
        outcome = self.path.decide(tx, command)
        self.route(tx, outcome)

    def start(self, item: _Start) -> None:
        """Create and start the child of `item`, linked to its parent and root."""
        parent, start = item.parent, item.start
        if start.error is not None or start.input is None:
            self.tell_parent(parent, error_event(start.invoke_id), start.error or "no input")
            return
        chart = self.path.chart_named(start.chart, start.version)
        child = child_instance_id(parent, start.invoke_id, item.version)
        version = "" if start.version is None else f" version {start.version}"
        if chart is None:
            why = f"chart {start.chart!r}{version} is not known to the runner"
        elif utf8_length(child) > MAX_ID_BYTES:
            why = f"the child's instance ID is over {MAX_ID_BYTES} UTF-8 bytes"
        else:
            why = None
        if why is not None or chart is None:
            self.tell_parent(parent, error_event(start.invoke_id), why or "")
            return
        try:
            result = chart.initialize(dict(start.input), event_id=START_EVENT, now_ms=self.now_ms)
        except StartError as exc:
            self.tell_parent(parent, error_event(start.invoke_id), str(exc))
            return
        columns, initial = state_columns(result.state), canonical_json(dict(start.input))
        key = self.path.chart_key(chart)
        if not self.store.insert_instance(
            child, chart=key, columns=columns, initial_context=initial, now=self.now,
            start_clock_ms=self.now_ms,
        ):  # fmt: skip
            raise RunnerError(f"the child instance {child!r} exists already: not started again")
        if result.emitted:
            self.store.insert_outbox(outbox_rows(child, 0, result.emitted, self.now))
        if result.state.timers:
            self.store.insert_timers([timer_row(child, t, 0) for t in result.state.timers])
        above = self.link(parent)
        root = parent if above is None else above.root_instance_id
        link = LinkRow(child, parent, start.invoke_id, root, item.version, ACTIVE, self.now)
        self.links[child] = link
        self.new_links.append(link)
        row = InstanceRow(
            instance_id=child, chart_name=chart.name, chart_version=chart.version,
            chart_digest=chart.digest, version=0, columns=columns, initial_context=initial,
            start_clock_ms=self.now_ms,
        )  # fmt: skip
        tx = self.begin(row)
        tx.state = result.state
        tx.queue_sends(START_EVENT, result)
        sent = self.path.decide_sends(tx)
        self.outputs(child, 0, result)
        for each in sent:
            self.route(tx, replace(each, sent=()))
        if tx.state.is_final and not sent:
            self.finish(child, tx)

    def cancel(self, parent: str, invoke_id: str) -> None:
        """Cancel `parent`'s active child of `invoke_id` and, transitively, its children."""
        child = self.active_child(parent, invoke_id)
        if child is None:
            return
        self.ended[child] = CANCELLED
        for grandchild in self.active_children(child):
            self.cancel(child, grandchild.invoke_id)

    def finish(self, member: str, tx: InstanceTransaction) -> None:
        """`member`'s chart reached a final state: if it is an active child, it is done and
        its parent gets `done.invoke.<id>`."""
        link = self.link(member)
        if link is None or self.status_of(member) != ACTIVE:
            return
        try:
            output = chart_output(tx.chart, tx.state)
        except EvaluationError as exc:
            self.fail(member, str(exc))
            return
        self.ended[member] = DONE
        self.queue.append(_Event(link.parent_instance_id, done_event(link.invoke_id), output))

    def fail(self, member: str, reason: str) -> None:
        """A step of child `member` failed with an evaluation error: its parent gets
        `error.invoke.<id>`."""
        link = self.link(member)
        if link is not None and self.status_of(member) == ACTIVE:
            self.tell_parent(link.parent_instance_id, error_event(link.invoke_id), reason)

    def tell_parent(self, parent: str, event: str, reason: str) -> None:
        self.queue.append(_Event(parent, event, {"reason": reason}))

    # ---- links -------------------------------------------------------------------------
    def parent_of(self, member: str) -> str | None:
        link = self.link(member)
        return None if link is None else link.parent_instance_id

    def status_of(self, member: str) -> str | None:
        """`member`'s link status as of this step (None: not invoked)."""
        if member in self.ended:
            return self.ended[member]
        link = self.link(member)
        return None if link is None else link.status

    def active_children(self, parent: str) -> list[LinkRow]:
        """`parent`'s children still active as of this step, oldest first."""
        stored = {c.child_instance_id: c for c in self.store.children(parent)}
        for link in self.new_links:
            if link.parent_instance_id == parent:
                stored[link.child_instance_id] = link
        for child, link in stored.items():
            self.links.setdefault(child, link)
        return [c for c in stored.values() if self.status_of(c.child_instance_id) == ACTIVE]

    def active_child(self, parent: str, invoke_id: str) -> str | None:
        """`parent`'s active child of invocation `invoke_id` (None: none)."""
        for link in reversed(self.active_children(parent)):
            if link.invoke_id == invoke_id:
                return link.child_instance_id
        return None

    # ---- write -------------------------------------------------------------------------
    def write(self) -> None:
        """Write every member's rows, the new links, the ended links and the messages to
        other instances (inside the caller's transaction), and remember the rows."""
        for tx in self.members.values():
            self.path.finish(tx)
        if self.new_links:
            self.store.insert_links(self.new_links)
        for child, status in self.ended.items():
            self.store.end_link(child, status, self.now)
        if self.messages:
            self.store.insert_instance_messages(self.messages)


def chart_output(chart: Chart, state: State) -> dict[str, Any]:
    """The output of `chart` ended in `state`: its active top-level final state's
    `output:` evaluated in the final context (empty when it declares none);
    `EvaluationError` when an expression fails."""
    for node in chart.ir.states:
        if node.output and node.id in state.active_ids:
            return {
                name: computed_value(f"output field '{name}'", expr, state.context, {},
                                     state.active_ids)
                for name, expr in node.output
            }  # fmt: skip
    return {}


def new_message(
    target_chart: str,
    target_instance_id: str,
    sender: str,
    sender_version: int,
    index: int,
    event: str,
    payload: dict[str, Any],
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
        payload=canonical_json(payload),
        event_id=message_event_id(sender, sender_version, index),
        reply_event=reply_event,
        created_at=now,
    )
