"""The id SCXML generates for an `<invoke>` without `id`, as the document sees it.

SCXML gives such an invocation an id of the form `<state id>.<platform id>`, a value the
document can store (`idlocation`), compare (W3C test 224: it starts with `s0.`) and
receive as `_event.invokeid` (test 338). A statekit invoke id is a name (letters,
digits, `_`, `-`; `done.invoke.<id>` is an event), so the chart's invocation is named
`<state id>_invoke<n>`, and the document's value of its id is `<state id>.invoke<n>`:
the import stores that value where SCXML stores it and reads `_event.invokeid` as it
(`invokeid_read`), so the document only ever compares values of one spelling.
"""

from __future__ import annotations

from collections.abc import Mapping

from statekit.scxml.document import Element

EVENT_INVOKEID = "_event.invokeid"
"""The key, among the translation's system variables, of `_event.invokeid`'s reading
when the document generates invoke ids."""


def invoke_name(element: Element, state_id: str, index: int, generated: dict[str, str]) -> str:
    """The statekit name of the `<invoke>` `element` (its own `id`, else made from its
    state and position, whose SCXML value `generated` records)."""
    own = element.attrs.get("id")
    if own:
        return own
    name = f"{state_id}_invoke{index}"
    generated[name] = f"{state_id}.invoke{index}"
    return name


def with_invokeid(system: Mapping[str, str], generated: Mapping[str, str]) -> Mapping[str, str]:
    """The system variables of the translation, with `_event.invokeid`'s reading when the
    document generates invoke ids: a generated id spelled as SCXML's value."""
    if not generated:
        return system
    text = "_event.invokeid"
    for name, value in generated.items():
        text = f"({value!r} if _event.invokeid == {name!r} else {text})"
    return {**system, EVENT_INVOKEID: text}
