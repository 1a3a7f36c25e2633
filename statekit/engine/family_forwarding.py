"""Forwarding: `invoke: {..., forward: true}` sends the child every event its parent processes.

While the child of a forwarding invocation runs, each external event its parent
processes is also delivered to it, through the family step's one queue
(`statekit.engine.family`), exactly once:

- an event from outside, from another member (the child's own sends to its parent
  included, as SCXML's `autoforward`), a member's undelayed `send` to itself, and the
  delivery of its own delayed `send` are forwarded; an `after` timer (a state's own
  clock), a delayed message to another member, `done.invoke.<id>` and
  `error.invoke.<id>` (the parent's news of its children) are not;
- "processed" means classified by the parent's chart: `APPLIED`, `ALREADY_APPLIED`,
  or `REJECTED` by its transitions (`UNDEFINED_TRANSITION`, a guard's or a `reject:`
  reason, `TERMINAL_STATE`, ...). An event refused before the chart selects
  anything (`UNKNOWN_EVENT`, `INVALID_PAYLOAD`, a stale, paused or clock-less timer)
  and a repeated one (its event ID known: the runner does not hand it over) are not;
- the children forwarded to are those running when the parent processed the event
  (a child its step starts is not, one its step cancels still is: the forwarded
  event is queued before the step's own outputs, as SCXML forwards an event when it
  is taken from the queue, before the transitions it selects run);
- the forwarded event keeps its name and payload; it comes from the parent
  (`_event.origin` is the parent's instance ID), and its event ID is derived from
  the parent's (`<event ID>>`+ invoke id), so a runner that replays the family step
  forwards it under the same ID.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from statekit.compiler.invocations import DONE_INVOKE_PREFIX, ERROR_INVOKE_PREFIX
from statekit.engine.chart import Chart
from statekit.engine.family_members import Delivery, DeliveryKind, Member
from statekit.engine.result import (
    CLOCK_REQUIRED,
    INVALID_PAYLOAD,
    PAUSED_TIMER,
    STALE_TIMER,
    UNKNOWN_EVENT,
    Result,
)

NOT_PROCESSED = frozenset(
    {UNKNOWN_EVENT, INVALID_PAYLOAD, STALE_TIMER, PAUSED_TIMER, CLOCK_REQUIRED}
)
"""The rejections of an event the parent's chart never selected on: not forwarded."""

_FAMILY_NEWS = (DONE_INVOKE_PREFIX, ERROR_INVOKE_PREFIX)


def forwarding_ids(chart: Chart) -> frozenset[str]:
    """The invoke ids of `chart`'s forwarding invocations (`forward: true`)."""
    return frozenset(i.id for i in chart.ir.invocations if i.forward)


def forwards(
    chart: Chart,
    member: Member,
    result: Result,
    payload: Mapping[str, Any] | None,
    event_id: str | None,
) -> list[Delivery]:
    """The deliveries forwarding `result`'s event (with `payload`, None: the delivered
    timer's) from `member` (the parent before its step) to its forwarding children (see
    the module docstring); none when its chart forwards nothing."""
    children = member.children
    if not children or not any(i.forward for i in chart.ir.invocations):
        return []
    event = result.event
    if event.startswith(_FAMILY_NEWS) or result.reason in NOT_PROCESSED:
        return []
    timer = result.timer
    if timer is not None:
        if timer.owner is not None or timer.to is not None:
            return []  # an `after` timer, or a delayed message to another member
        payload = timer.payload
    body: Mapping[str, Any] = {} if payload is None else payload
    me = member.instance_id
    origin = event_id or f"{me}@{member.version}"
    ids = forwarding_ids(chart)
    return [
        Delivery(DeliveryKind.EVENT, child, event, body, f"{origin}>{invoke_id}", sender=me)
        for invoke_id, child in children.items()
        if invoke_id in ids
    ]
