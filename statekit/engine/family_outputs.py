"""What one step of an instance produces for other instances, as frozen values.

A step's `Result` carries them (`invocations_started`, `invocations_cancelled`,
`messages`; `statekit.engine.invocation_changes` derives the first two); the family
step (`statekit.engine.family`) routes them, and the
runner turns `MessageKind.INSTANCE` messages into inbox rows. A chart without
`invoke:` and without `send: {to: ...}` produces none and pays nothing: the
starts and cancels are derived from the evidence only when the chart invokes.

- `InvocationStart`: a state with `invoke:` entered (and not left) in the
  macrostep: the child to start at its end, in entry order, with its input
  evaluated against the context the macrostep ended with (`input` None and
  `error` set when that evaluation failed: the parent then gets
  `error.invoke.<id>`).
- `InvocationCancel`: a state with `invoke:` left in the macrostep (and entered
  in an earlier one): its child is cancelled.
- `OutgoingMessage`: an undelayed `send` with `to:`, in effect order.
"""

from __future__ import annotations

import enum
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True, slots=True)
class InvocationStart:
    """Start the child of invocation `invoke_id` (of the state `state`, a dotted path):
    an instance of `chart` (version `version`, None: the newest known) with `input` as
    its context fields, or, when the input could not be evaluated, `error` (the
    `EVALUATION_ERROR` message) and `input` None."""

    invoke_id: str
    state: str
    chart: str
    version: int | None
    input: Mapping[str, Any] | None
    error: str | None = None


@dataclass(frozen=True, slots=True)
class InvocationCancel:
    """Cancel the child of invocation `invoke_id`: its state `state` was left."""

    invoke_id: str
    state: str


class MessageKind(enum.Enum):
    """Who receives an `OutgoingMessage`."""

    PARENT = "parent"
    """The instance that invoked the sender."""
    CHILD = "child"
    """The sender's child of invocation `OutgoingMessage.to`."""
    INSTANCE = "instance"
    """Instance `OutgoingMessage.to` of chart `OutgoingMessage.chart`, outside the family
    step (delivered later, exactly once, in order per sender)."""
    ADDRESS = "address"
    """The member of the sender's family the address `OutgoingMessage.to` names
    (`statekit.engine.addresses`; "" for a null address)."""


@dataclass(frozen=True, slots=True)
class OutgoingMessage:
    """An undelayed `send` with `to:`: `event` with `payload` for the receiver `kind` names.

    `to` is "parent" (PARENT), the invoke id (CHILD), the receiving instance's ID
    (INSTANCE, with its `chart`) or an address (ADDRESS); `reply` names the sender's
    event that brings back the receiver's classification (INSTANCE only), None for
    fire-and-forget.
    """

    kind: MessageKind
    to: str
    event: str
    payload: Mapping[str, Any]
    chart: str | None = None
    reply: str | None = None

    def __hash__(self) -> int:  # the payload is a read-only mapping: not hashable itself
        return hash((self.kind, self.to, self.event))
