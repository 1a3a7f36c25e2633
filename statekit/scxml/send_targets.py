"""`<send>` to a target the document computes (`targetexpr`) or to a session by its ID
(`#_scxml_<sessionid>`), dispatched when the send runs.

SCXML's SCXML event I/O processor delivers by the target's value: `#_internal` to the
internal queue (statekit's `raise`), `#_scxml_<sessionid>` of this session to its own
external queue (a `send` to itself), `#_parent` and `#_<invokeid>` to the family, and
raises `error.communication` for a target it cannot reach (another session statekit
does not know). A target from `_event.origin` is an address statekit resolves when the
send runs (`origin_sends`). When the value is known only at run time, the send is written as an
`if` over the value, each branch the send to that target; the last branch raises
`error.communication`. `#_scxml_` compares with `instance.id`, the ID of the instance
the step is given (`system_variables.OWN_LOCATION`).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Final

from statekit.scxml.context import ImportContext, event_name, quoted
from statekit.scxml.document import Element
from statekit.scxml.origin_sends import from_origin, to_origin
from statekit.scxml.system_variables import OWN_LOCATION, SCXML_TARGET_PREFIX

ERROR_COMMUNICATION: Final = "error.communication"
"""The event SCXML raises for a `<send>` whose target cannot be reached."""
Translator = Callable[[Element, ImportContext], list[dict[str, Any]]]


def may_not_reach(element: Element) -> bool:
    """Whether this `<send>` is dispatched by its target's value at run time (and may
    raise `error.communication`)."""
    target = element.attrs.get("target", "")
    return "targetexpr" in element.attrs or target.startswith(SCXML_TARGET_PREFIX)


def dispatched(element: Element, c: ImportContext, translate: Translator) -> list[dict[str, Any]]:
    """The `<send>` as an `if` over its target's value (the module docstring); `translate`
    writes the send to one literal target (or to this session, with no target)."""
    if "targetexpr" in element.attrs and from_origin(element, c):
        return to_origin(element, c, translate)  # an address, resolved when it runs
    if "targetexpr" in element.attrs:
        value = f"({c.expression(element, 'targetexpr')})"
    else:
        value = quoted(element.attrs["target"])
    known = ["#_internal", *(["#_parent"] if c.invoked else []), *(f"#_{i}" for i in c.invokes)]
    branches = [
        {"cond": f"{value} == {quoted(target)}", "then": translate(_with(element, target), c)}
        for target in known
    ]
    own = {"cond": f"{value} == {OWN_LOCATION}", "then": translate(_with(element, None), c)}
    branches.append(own)
    unreachable = {"raise": event_name(ERROR_COMMUNICATION)}
    out: dict[str, Any] = {**branches[0], "elif": branches[1:], "else": [unreachable]}
    return [{"if": out}]


def _with(element: Element, target: str | None) -> Element:
    """The `<send>` with this literal target (None: none, to this session)."""
    attrs = {k: v for k, v in element.attrs.items() if k not in ("target", "targetexpr")}
    if target is not None:
        attrs["target"] = target
    fixed = Element(element.tag, attrs, element.line, element.column, element.namespace)
    fixed.children = element.children
    return fixed
