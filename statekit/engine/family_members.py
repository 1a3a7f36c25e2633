"""The values of a family of instances: its members, the deliveries between them, and
what one family step did (`statekit.engine.family` runs the step).

A *family* is a root instance and the children it invoked, transitively. Each
member is an instance of its own chart and version, with its own `State`; the
links (`parent`, `invoke_id`, `children`) are the member's, not its state's, so
a chart's `State` and JSON form are the same whether it is invoked or not.
"""

from __future__ import annotations

import enum
import hashlib
from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

from statekit.engine.family_outputs import OutgoingMessage
from statekit.engine.result import Result
from statekit.engine.state import State
from statekit.engine.timers import Timers

NO_CHILDREN: Mapping[str, str] = MappingProxyType({})
NO_PAYLOAD: Mapping[str, Any] = MappingProxyType({})

CHILD_ID_SEPARATOR = "/"
"""Joins a child's instance ID: `<parent id>/<invoke id>/<parent version at start>`."""


MAX_CHILD_ID_BYTES = 512
"""The most UTF-8 bytes of a child's instance ID: the stores' bound on every identifier
(`statekit.runner.identifier_bounds.MAX_ID_BYTES`, which equals it)."""
HASHED_CHILD_PREFIX = "sha256:"
"""The start of a child ID whose whole form would be over `MAX_CHILD_ID_BYTES`."""


def child_instance_id(parent_id: str, invoke_id: str, parent_version: int) -> str:
    """The deterministic ID of the child an invocation starts: unique per invocation
    (the parent's version differs at each step) and the same on every replay.

    `<parent id>/<invoke id>/<parent version>`, or, when that is over
    `MAX_CHILD_ID_BYTES` UTF-8 bytes, `sha256:<hex of that>/<parent version>`: still
    unique and replayable, and within the bound on both stores."""
    sep = CHILD_ID_SEPARATOR
    whole = f"{parent_id}{sep}{invoke_id}{sep}{parent_version}"
    if len(whole) * 4 <= MAX_CHILD_ID_BYTES:
        return whole
    encoded = whole.encode("utf-8", "surrogatepass")
    if len(encoded) <= MAX_CHILD_ID_BYTES:
        return whole
    return f"{HASHED_CHILD_PREFIX}{hashlib.sha256(encoded).hexdigest()}{sep}{parent_version}"


class MemberStatus(enum.Enum):
    """Where a member of a family is in its life."""

    ACTIVE = "active"
    """It takes events (its chart classifies them)."""
    DONE = "done"
    """Its chart reached a top-level final state (a child: `done.invoke.<id>` was sent)."""
    CANCELLED = "cancelled"
    """Its invoking state was left: terminal, its timers cancelled with it (`disarmed`:
    its `State` holds none, its arming counter kept), every later event REJECTED
    `INVOCATION_CANCELLED`."""


def disarmed(state: State) -> State:
    """`state` with its armed timers cancelled (its arming counter kept, as a state that
    cancelled them keeps it): the state of a cancelled member, whose timers go with it."""
    timers = state._timers
    if not timers.armed:
        return state
    return State(state._config, state._context, state._history, Timers((), timers.generation))


@dataclass(frozen=True, slots=True)
class Member:
    """One instance of a family: `state` of chart `chart` version `chart_version`, at
    instance version `version` (0 when created, +1 per applied step, as the runner
    counts), `status`, its `parent` and the `invoke_id` that started it (None for the
    root), and its running children by invoke id."""

    instance_id: str
    chart: str
    chart_version: int
    state: State
    version: int = 0
    status: MemberStatus = MemberStatus.ACTIVE
    root: str = ""
    parent: str | None = None
    invoke_id: str | None = None
    children: Mapping[str, str] = field(default_factory=lambda: NO_CHILDREN)

    def moved(
        self,
        state: State,
        *,
        version: int | None = None,
        status: MemberStatus | None = None,
        children: Mapping[str, str] | None = None,
    ) -> Member:
        """This member with a new state and, when given, version, status and children
        (`dataclasses.replace` without its checks: one per delivery)."""
        return Member(
            self.instance_id,
            self.chart,
            self.chart_version,
            state,
            self.version if version is None else version,
            self.status if status is None else status,
            self.root,
            self.parent,
            self.invoke_id,
            self.children if children is None else children,
        )

    @property
    def family_root(self) -> str:
        """The family's root instance ID (itself for the root)."""
        return self.root or self.instance_id


class DeliveryKind(enum.Enum):
    """What a queued delivery does to its target."""

    EVENT = "event"
    """An event for the target's chart (from the outside, a parent, a child or itself)."""
    TIMER = "timer"
    """The delivery of the target's armed timer `event` (its ID) of `generation`
    (`Chart.fire`)."""
    START = "start"
    """Create the child `target` of invocation `invoke_id` with `payload` as its input."""
    CANCEL = "cancel"
    """Cancel the member `target` (and, in turn, its running children)."""


@dataclass(frozen=True, slots=True)
class Delivery:
    """One item of the family queue: `kind` for member `target`. `event_id` is
    derived from the member step that produced it (`<sender>@<version>#<index>`), so
    a replay produces the same IDs; the first delivery carries the caller's own.
    For START, `chart`/`chart_version` name the child's chart, `parent`, `root` and
    `invoke_id` its link; for EVENT from a child, `invoke_id` is that child's, and
    `unlink` says the child is gone (done, or never started): the parent forgets it.
    `reply` marks the classification sent back for a `send` with `reply:` (the one
    delivery from outside that may carry a reply event, `statekit.engine.family_events`).
    `address` is the address a `send: {to: {address}}` was given (`root` then the
    sender's family root): a target that is not an active member of that family sends
    `error.communication` back to the sender instead (`statekit.engine.addresses`)."""

    kind: DeliveryKind
    target: str
    event: str = ""
    payload: Mapping[str, Any] = field(default_factory=lambda: NO_PAYLOAD)
    event_id: str | None = None
    sender: str | None = None
    invoke_id: str | None = None
    parent: str | None = None
    chart: str | None = None
    chart_version: int | None = None
    root: str | None = None
    unlink: bool = False
    generation: int | None = None
    reply: bool = False
    address: str | None = None


@dataclass(frozen=True, slots=True)
class DeliveryRecord:
    """What one delivery did: its `delivery`, the member before (None: created or not
    found) and after (None: not created), the chart's `result` (None for a
    cancellation, a refused start or a delivery no chart classified) and, when no
    chart classified it, `reason` and `message` (the delivery's target is missing,
    cancelled, or its chart unknown)."""

    delivery: Delivery
    before: Member | None
    after: Member | None
    result: Result | None = None
    reason: str | None = None
    message: str | None = None


@dataclass(frozen=True, slots=True)
class OutboundMessage:
    """A `send: {to: {chart, instance}}` for an instance outside the family: not applied
    in this family step (the runner writes it as an inbox row of the receiver in the
    same transaction). `event_id` is derived from the sender's instance, its version
    after the step and the message's index in that step: delivered exactly once."""

    sender: str
    sender_version: int
    index: int
    event_id: str
    message: OutgoingMessage
