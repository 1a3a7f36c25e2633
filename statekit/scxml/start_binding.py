"""`<data>` whose value reads the instance (`_sessionid`): bound when the chart starts.

A statekit context field's default is a constant of the chart, the same for every
instance; `instance.id` is known only when a step is given it. So such a field is
declared with its type's zero value, and the chart's first microstep assigns it: the
chart starts in a transient state that leaves at once, by an eventless transition, to
the document's initial configuration with the assignments as its effects (in document
order, before any `<onentry>` runs, as SCXML binds the datamodel first).
"""

from __future__ import annotations

from typing import Any

from statekit.scxml.context import ImportContext
from statekit.scxml.document import Element

START_STATE = "scxml__start"
"""The transient state the chart starts in when some `<data>` is bound at the start."""


def bind_at_start(body: dict[str, Any], context: ImportContext, root: Element) -> None:
    """Make `body` (the chart's root) start in the transient state that assigns every
    start-bound `<data>` (`DataField.at_start`); nothing when there is none."""
    assigns = [
        {"assign": {name: field.at_start}}
        for name, field in context.fields.items()
        if field.at_start is not None
    ] + context.start_assigns  # then the top-level <script>s' (`scripts`), after the data
    if not assigns:
        return
    name = START_STATE
    while name in context.ids:
        name += "_"
    initial = body.get("initial")
    if not isinstance(initial, str):
        first = next(iter(body.get("states", {})), None)
        initial = first if isinstance(first, str) else None
    if initial is None:
        raise context.refuse(root, "start-bound <data> in a chart without states")
    leave = {"to": initial.rsplit(".", 1)[-1], "do": assigns}
    body["initial"] = name
    body["states"] = {name: {"always": [leave]}, **body.get("states", {})}
    context.note(
        root,
        f"the chart starts in the transient state {name!r}, which assigns the <data> "
        "whose value is the session's and the top-level <script>'s (one microstep)",
    )
