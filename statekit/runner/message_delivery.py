"""Messages between instances: written in the sender's transaction, delivered later.

A `send: {to: {chart, instance}}` to an instance outside the sender's family is not
applied in the sender's transaction: it is written there as a row of the instance inbox
(`store.migrations_v11`), pending, under an event ID derived from the sender, the version
its step produced and the message's index in that step (`message_event_id`), and
`Runner.deliver_messages` (which `statekit worker` calls) applies it later, each message
in a transaction of its own on the receiver:

- the message row is read again as of the transaction (on PostgreSQL locked, so that a
  second deliverer waits and then finds it delivered), and only while it is the first
  pending message of its sender: a sender's messages are delivered in the order sent;
- the receiver's family root is locked first when the receiver is an invoked child (the
  one lock order of families, docs/transactions.md), then the receiver with the record
  of the event ID;
- the event is decided as any event (its undelayed sends after it), so a message
  delivered twice (a crash after the commit, before the worker knew) is
  ALREADY_APPLIED: exactly once;
- the row is marked delivered with the receiving step's status and reason, and when the
  sender asked for a `reply`, that classification is written as a message back to the
  sender (`{status, reason}`), delivered the same way.

A receiver that is not stored, or that runs on another chart than the message names, is
answered REJECTED (`UNKNOWN_INSTANCE`, `WRONG_CHART`); one whose chart this runner was
not given stays pending (the message and its sender's later ones wait for a runner that
knows it) and is reported in `Runner.message_problems`.
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass
from typing import Any

from statekit.compiler.canonical import canonical_json
from statekit.runner.decision_inputs import Command
from statekit.runner.errors import RunnerError
from statekit.runner.family_ids import REPLY_PREFIX, message_event_id, reply_event_id
from statekit.runner.family_step import FamilyStep, new_message
from statekit.runner.outcome import Outcome
from statekit.runner.store.family_rows import InstanceMessageRow, NewInstanceMessage
from statekit.runner.store.hold_points import LOCKED
from statekit.runner.write_stages import WriteStages

UNKNOWN_INSTANCE = "UNKNOWN_INSTANCE"
WRONG_CHART = "WRONG_CHART"


@dataclass(frozen=True, slots=True)
class Delivery:
    """One message delivered: to whom, from whom, under which event ID, and the receiving
    step's classification (`outcome`: None when no step ran, the receiver unknown or
    of another chart)."""

    message_id: int
    target_instance_id: str
    sender_instance_id: str
    event_id: str
    event: str
    status: str
    reason: str | None
    outcome: Outcome | None = None

    def to_data(self) -> dict[str, Any]:
        """The JSON line `statekit worker` writes for it."""
        data: dict[str, Any] = {
            "delivered": self.event_id,
            "instance_id": self.target_instance_id,
            "from": self.sender_instance_id,
            "type": self.event,
            "status": self.status,
            "reason": self.reason,
        }
        if self.outcome is not None:
            data["version"] = self.outcome.version
        return data


def deliver_messages(path: WriteStages, limit: int, problems: dict[int, str]) -> list[Delivery]:
    """Deliver up to `limit` pending messages, each in its own transaction (see the module
    docstring); `problems`: messages left pending and why (skipped from then on)."""
    store = path.store
    with store.read():
        heads = store.deliverable_messages(limit + len(problems))
    deliveries = []
    for head in heads:
        if head.id in problems:
            continue
        try:
            with store.write():
                delivered = _deliver(path, head.id)
        except RunnerError as exc:  # the receiver's chart unknown here, a damaged row
            problems[head.id] = str(exc)
            continue
        if delivered is not None:
            deliveries.append(delivered)
        if len(deliveries) >= limit:
            break
    return deliveries


def _deliver(path: WriteStages, message_id: int) -> Delivery | None:
    """Inside a write transaction: deliver the message if it is still the first pending
    one of its sender (None: delivered meanwhile, or not at the head any more)."""
    store = path.store
    m = store.pending_message(message_id)
    if m is None:
        return None
    target = m.target_instance_id
    step = FamilyStep(path, path.now_ms())
    step.lock_root(target)  # the family's root first: the one lock order
    row = path.read_locked(target, m.event_id)
    store.reach(LOCKED)
    outcome: Outcome | None = None
    reason: str | None
    if row is None:
        status, reason = "REJECTED", UNKNOWN_INSTANCE
    elif row.chart_name != m.target_chart:
        status, reason = "REJECTED", WRONG_CHART
    else:
        chart = path.chart_of(row)
        if chart.name != row.chart_name:
            raise RunnerError(
                f"message {m.event_id!r} to instance {target!r}: this runner was not given "
                f"chart {row.chart_name!r} (pass it too: Runner(..., charts=[...]) or another "
                "--chart); it stays pending"
            )
        tx = step.begin(row)
        command = Command(m.event_id, m.event, json.loads(m.payload))
        reply = m.event_id.startswith(REPLY_PREFIX)  # (a caller's event ID cannot start so)
        outcome = step.apply(tx, command, row, reply=reply)
        step.write()
        status, reason = outcome.status.value, outcome.reason
    now = time.time()
    store.settle_message(m.id, status, reason, now)
    if m.reply_event is not None:
        _reply(path, m, status, reason, outcome, now)
    return Delivery(m.id, target, m.sender_instance_id, m.event_id, m.event, status, reason,
                    outcome)  # fmt: skip


def _reply(
    path: WriteStages,
    m: InstanceMessageRow,
    status: str,
    reason: str | None,
    outcome: Outcome | None,
    now: float,
) -> None:
    """Write the receiving step's classification back to the sender as `m.reply_event`."""
    sender = path.store.instance(m.sender_instance_id)
    if sender is None or m.reply_event is None:
        return  # nobody to tell any more
    version = 0 if outcome is None else outcome.version
    path.store.insert_instance_messages(
        [
            NewInstanceMessage(
                target_chart=sender.chart_name,
                target_instance_id=m.sender_instance_id,
                sender_instance_id=m.target_instance_id,
                sender_version=version,
                message_index=0,
                event=m.reply_event,
                payload=canonical_json({"status": status, "reason": reason}),
                event_id=reply_event_id(m.event_id),
                reply_event=None,
                created_at=now,
            )
        ]
    )


__all__ = ["Delivery", "deliver_messages", "message_event_id", "new_message", "reply_event_id"]
