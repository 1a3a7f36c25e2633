"""Addresses: a `send: {to: {address: <expression>}}`'s receiver, named by a string the
send computes, resolved when it runs.

An address names a member of the sender's family:

- `#_parent`: the instance that invoked the sender;
- `#_<invoke id>`: the sender's running child of that invocation;
- `#_scxml_<instance id>`, or the instance ID itself (what `_event.origin` gives):
  that instance: the sender itself (its own external queue, as a `send` without
  `to:`), its parent, a child, or any other member of its family.

SCXML's forms are read first, so a root ID beginning with `#_` is reached as
`#_scxml_<id>`. The sender itself is resolved in its own step
(`addressed_sends`: a `SentEvent`, so every driver delivers it as its own send);
any other address is an `OutgoingMessage` of kind `ADDRESS` that the family step
resolves (`statekit.engine.family`). An address that reaches nobody (null, a
finished or cancelled child, an instance of another family, no instance) sends
`error.communication` `{reason}` back to the sender, after its step.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Final

PARENT_ADDRESS: Final = "#_parent"
SESSION_PREFIX: Final = "#_scxml_"
CHILD_PREFIX: Final = "#_"


def names_self(address: str | None, me: str | None) -> bool:
    """Whether `address` names the sending instance `me` itself."""
    return me is not None and address in (me, SESSION_PREFIX + me)


def resolved(
    address: str | None, parent: str | None, children: Mapping[str, str]
) -> tuple[str | None, str]:
    """The instance ID `address` names for a member with this `parent` and running
    `children` (invoke id → instance ID), or None with why it names nobody; the second
    value says what it named (for `error.communication`'s reason)."""
    if not address:
        return None, "no address (null or empty)"
    if address == PARENT_ADDRESS:
        if parent is None:
            return None, f"{address!r}: the sender was not invoked"
        return parent, "the parent"
    if address.startswith(SESSION_PREFIX):
        instance = address.removeprefix(SESSION_PREFIX)
        return (instance, f"the instance {instance!r}") if instance else (None, "no ID")
    if address.startswith(CHILD_PREFIX):
        invoke_id = address.removeprefix(CHILD_PREFIX)
        child = children.get(invoke_id)
        if child is None:
            return None, f"no running child of the invocation {invoke_id!r}"
        return child, f"the child of invocation {invoke_id!r}"
    return address, f"the instance {address!r}"


def unreachable_reason(address: str | None, what: str) -> str:
    """`error.communication`'s reason: the address and why it reaches no instance."""
    return f"the address {address!r} reaches no instance of this family: {what}"
