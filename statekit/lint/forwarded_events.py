"""invoke-unclassified, for a forwarding invocation: an event the parent forwards that the
child does not declare.

A child invoked with `forward: true` gets every event its parent processes while it
runs (`statekit.engine.family_forwarding`). An event of the parent's that the
child's chart does not declare is `REJECTED UNKNOWN_EVENT` in the child each time it
is forwarded: declare it in the child (and classify it there, as `undefined-pair`
asks of every event it mentions), or do not forward. `done.invoke.<id>` and
`error.invoke.<id>` are not forwarded, so they are not asked for.
"""

from __future__ import annotations

from collections.abc import Iterator

from statekit.compiler.chart_set import InvokedChart
from statekit.compiler.diagnostics import Diagnostic, RelatedLocation, Severity
from statekit.compiler.invocations import DONE_INVOKE_PREFIX, ERROR_INVOKE_PREFIX

_NOT_FORWARDED = (DONE_INVOKE_PREFIX, ERROR_INVOKE_PREFIX)


def undeclared_forwards(slug: str, invoked: InvokedChart) -> Iterator[Diagnostic]:
    """One finding per event the parent declares and its forwarding child does not."""
    child, invocation, parent = invoked.child, invoked.invocation, invoked.parent
    if child is None or not invocation.forward:
        return
    for name, decl in parent.events.items():
        if name.startswith(_NOT_FORWARDED) or name in child.events:
            continue
        yield Diagnostic(
            slug,
            Severity.ERROR,
            f"event {name}, which invoke '{invocation.id}' forwards (forward: true), is not "
            f"declared in chart '{child.name}'",
            invocation.span,
            (
                f"every {name} chart '{parent.name}' processes while the child runs is "
                f"forwarded to it, and REJECTED UNKNOWN_EVENT there",
                f"declare {name} under `events:` of chart '{child.name}' and classify it, "
                "or drop `forward: true`",
            ),
            (RelatedLocation(decl.span, f"{name} declared in '{parent.name}'"),),
        )
