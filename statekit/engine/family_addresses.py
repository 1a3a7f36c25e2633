"""The family step's half of `send: {to: {address}}` (`statekit.engine.addresses`): the
delivery an address message makes, and `error.communication` when it reaches nobody.

An address is resolved against the sender as its step left it (its parent, its running
children); the delivery then carries the address and the sender's family root, and
`unreachable` checks the loaded target when the queue reaches it: no instance, an
instance of another family, or one that is done or cancelled is no receiver, and
`error.communication` `{reason}` goes back to the sender (an event of its own chart,
declared by the compiler, `statekit.compiler.model.addresses`).
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType
from typing import Any

from statekit.compiler.expressions.event_meta import sent_as
from statekit.compiler.model.addresses import ERROR_COMMUNICATION, REASON_FIELD
from statekit.engine.addresses import resolved, unreachable_reason
from statekit.engine.family_members import (
    Delivery,
    DeliveryKind,
    DeliveryRecord,
    Member,
    MemberStatus,
)
from statekit.engine.family_outputs import OutgoingMessage

NO_RECEIVER = "NO_RECEIVER"
"""A `send` to `parent` from the root, to an invoke id whose child is not running, or to
an address that reaches no member."""


def address_delivery(
    member: Member, message: OutgoingMessage, children: Mapping[str, str], event_id: str
) -> Delivery:
    """The delivery of `member`'s send to the address `message.to` (its `children` as
    its step left them), or `error.communication` back to it when the address names
    nobody."""
    me = member.instance_id
    target, what = resolved(message.to or None, member.parent, children)
    if target is None:
        return communication_error(me, unreachable_reason(message.to, what), event_id)
    payload: Mapping[str, Any] = message.payload
    if target == me:  # its own ID written another way: its own send
        payload = sent_as(message.payload, None)
    return Delivery(
        DeliveryKind.EVENT,
        target,
        message.event,
        payload,
        event_id,
        sender=me,
        invoke_id=member.invoke_id if target == member.parent else None,
        root=member.family_root,
        address=message.to,
    )


def unreachable(
    delivery: Delivery, member: Member | None
) -> tuple[Delivery, DeliveryRecord] | None:
    """For an address delivery whose target (`member`, None: not found) is no active
    member of the sender's family: `error.communication` to the sender, and the record
    of the delivery (`NO_RECEIVER`); None when the target takes it."""
    if member is None:
        why = "no such instance"
    elif member.family_root != delivery.root:
        why = f"the instance {member.instance_id!r} is of another family"
    elif member.status is not MemberStatus.ACTIVE or member.state.is_final:
        done = "cancelled" if member.status is MemberStatus.CANCELLED else "done"
        why = f"the instance {member.instance_id!r} is {done}"
    else:
        return None
    return refused_address(delivery, member, why)


def refused_address(
    delivery: Delivery, member: Member | None, why: str
) -> tuple[Delivery, DeliveryRecord]:
    """`error.communication` to the sender of the address delivery, which reaches no
    member (`why`), and the record of the delivery (`NO_RECEIVER`)."""
    reason = unreachable_reason(delivery.address, why)
    error = communication_error(delivery.sender or "", reason, f"{delivery.event_id}#unreachable")
    return error, DeliveryRecord(delivery, member, member, reason=NO_RECEIVER, message=reason)


def communication_error(sender: str, reason: str, event_id: str) -> Delivery:
    """`error.communication` `{reason}` for `sender`, from nobody (`_event.origin` null)."""
    payload = MappingProxyType({REASON_FIELD: reason})
    return Delivery(DeliveryKind.EVENT, sender, ERROR_COMMUNICATION, payload, event_id)
