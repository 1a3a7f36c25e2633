"""`send: {to: {address: <expression>}}`: the `error.communication` event such a chart
receives when an address names no member its family can reach.

The address is resolved when the send runs (`statekit.engine.addresses`); one that
names nobody reachable sends `error.communication` with payload `{reason: string}`
back to the sender, as SCXML's event I/O processor does. The event is declared for
every chart with such a send (no `events:` entry), so `on: {error.communication: ...}`
is typed like any event, as `error.execution` is for `on_evaluation_error: raise`.
"""

from __future__ import annotations

from typing import Final

from statekit.compiler.ir import EventDecl
from statekit.compiler.model.evaluation_errors import REASON_FIELD as REASON_FIELD
from statekit.compiler.model.evaluation_errors import reason_event
from statekit.compiler.source.nodes import MappingNode, Node, SequenceNode

ERROR_COMMUNICATION: Final = "error.communication"
"""The event an unreachable address sends back to the sender."""
ADDRESS_KEY: Final = "address"
"""The key of `to:` that makes it an address."""


def first_address(node: Node | None) -> Node | None:
    """The first `to: {address: ...}` mapping under `node` (in document order), else None."""
    stack: list[Node] = [] if node is None else [node]
    while stack:
        item = stack.pop()
        if isinstance(item, MappingNode):
            to = item.get("to")
            if isinstance(to, MappingNode) and to.get(ADDRESS_KEY) is not None:
                return to
            stack.extend(value for _, value in reversed(item.items))
        elif isinstance(item, SequenceNode):
            stack.extend(reversed(item.items))
    return None


def error_communication_decl(root: MappingNode) -> EventDecl | None:
    """The declaration of `error.communication` when the chart sends to an address (at
    the first such `to:`), else None."""
    found = first_address(root)
    if found is None:
        return None
    return reason_event(
        ERROR_COMMUNICATION,
        "Why the address reaches no instance (the address and what it names).",
        found.span,
    )
