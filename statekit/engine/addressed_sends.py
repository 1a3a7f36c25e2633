"""A `send` with `to:` turned into an `OutgoingMessage` (`statekit.engine.family_outputs`).

The payload is computed as for any `send` (by the run's value domain, before this);
here the receiver is resolved: `parent`, a child by invoke id, or another instance
whose ID the `instance:` expression computes (`EvaluationError` when it fails or
is not a string: the step is then `REJECTED EVALUATION_ERROR`, as for any effect),
or the member an `address:` names (`statekit.engine.addresses`): the sender itself
is a `SentEvent` (its own external queue, as a `send` without `to:`), any other
address a message the family step resolves.
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType
from typing import Any

from statekit.compiler.expressions.instance_reading import STEP_INSTANCE
from statekit.compiler.invocations import PARENT, ToAddress, ToChild, ToParent
from statekit.compiler.ir import Send
from statekit.engine.addresses import names_self
from statekit.engine.family_outputs import MessageKind, OutgoingMessage
from statekit.engine.timers import SentEvent
from statekit.engine.value_domain import ValueDomain


def addressed(
    effect: Send,
    body: dict[str, Any],
    values: ValueDomain,
    context: Mapping[str, Any],
    payload: Mapping[str, Any],
    active: frozenset[int],
) -> OutgoingMessage | SentEvent:
    """The message of a `send` with `to:` whose payload is `body` (the receiver's ID by
    `values`, the run's domain)."""
    target = effect.to
    frozen = MappingProxyType(body)
    if isinstance(target, ToParent):
        return OutgoingMessage(MessageKind.PARENT, PARENT, effect.event, frozen)
    if isinstance(target, ToChild):
        return OutgoingMessage(MessageKind.CHILD, target.invoke_id, effect.event, frozen)
    if isinstance(target, ToAddress):
        role = f"send {effect.event} address"
        address = values.address(role, target.address, context, payload, active)
        if names_self(address, STEP_INSTANCE.get()):
            return SentEvent(effect.event, frozen, None)
        return OutgoingMessage(MessageKind.ADDRESS, address or "", effect.event, frozen)
    assert target is not None
    role = f"send {effect.event} instance ID"
    instance = values.instance_id(role, target.instance, context, payload, active)
    return OutgoingMessage(
        MessageKind.INSTANCE, instance, effect.event, frozen, target.chart, target.reply
    )
