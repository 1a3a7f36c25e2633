"""An `<invoke>` that fails whenever it starts: SCXML evaluates an invocation's
arguments when it starts it, and an error there cancels the invocation and raises
`error.execution`. An argument that can never be evaluated (a `namelist` naming no
`<data>`) makes that certain, so the import writes what SCXML does: no invocation,
and `raise: error.execution` where it would have started, at the end of its state's
entry.

SCXML starts invocations at the end of the macrostep that entered their state, and
only if the state is still active; an entry's `raise` is queued when the state is
entered. The two agree when nothing else can happen in that macrostep after the
entry: the state has no child states, no eventless transition, and its `<onentry>`
raises no internal event. Any other such `<invoke>` stays refused.
"""

from __future__ import annotations

from typing import Any

from statekit.compiler.model.evaluation_errors import ERROR_EXECUTION
from statekit.scxml.context import ImportContext, quoted
from statekit.scxml.document import Element

_STATES = ("state", "parallel", "final", "history")


def split_invocations(
    state: Element, c: ImportContext
) -> tuple[list[Element], list[dict[str, Any]]]:
    """The `<invoke>`s of `state` that may start, and the effects its entry ends with
    for those that never can (`failed_invocation`)."""
    starting: list[Element] = []
    failing: list[dict[str, Any]] = []
    for element in state.kids("invoke"):
        failure = invocation_failure(element, c)
        if failure is None:
            starting.append(element)
        else:
            failing.append(failed_invocation(element, state, failure, c))
    return starting, failing


def invocation_failure(element: Element, c: ImportContext) -> str | None:
    """Why this `<invoke>` fails whenever it starts, or None when it may start."""
    for name in element.attrs.get("namelist", "").split():
        if name not in c.data_names():
            return f"<invoke namelist>: {name!r} names no <data>"
    return None


def failed_invocation(
    element: Element, state: Element, failure: str, c: ImportContext
) -> dict[str, Any]:
    """The `raise: error.execution` written for the `<invoke>` `element` of `state`
    that fails with `failure` (refused when its place in the macrostep is not exact)."""
    if "idlocation" in element.attrs:
        raise c.refuse(element, f"{failure} (an error), with an idlocation")
    if state.kids(*_STATES):
        raise c.refuse(element, f"{failure} (an error), in a state with child states")
    if any("event" not in t.attrs for t in state.kids("transition")):
        raise c.refuse(element, f"{failure} (an error), in a state with an eventless transition")
    if any(_raises(block) for block in state.kids("onentry")):
        raise c.refuse(element, f"{failure} (an error), in a state whose <onentry> raises")
    c.note(element, f"{failure}: no invocation, error.execution is raised at entry")
    c.never_started.add(element.attrs["id"])  # its done.invoke never comes
    return {"raise": {"event": ERROR_EXECUTION, "payload": {"reason": quoted(failure)}}}


def _raises(element: Element) -> bool:
    return element.tag == "raise" or any(_raises(k) for k in element.children)
