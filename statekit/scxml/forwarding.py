"""`<invoke autoforward>` as `invoke: {..., forward: true}`.

SCXML's `autoforward="true"` sends the invoked session a copy of every external
event the parent processes; statekit's `forward: true` does the same through the
family step (`statekit.engine.family_forwarding`: the parent's news of its children,
`done.invoke.<id>` and `error.invoke.<id>`, and its `after` timers are not
forwarded, and neither is an event its chart does not declare, which statekit
refuses before any state sees it). `"false"` (the default) forwards nothing; any
other value is refused.
"""

from __future__ import annotations

from typing import Any

from statekit.scxml.context import ImportContext
from statekit.scxml.document import Element


def forwarding(element: Element, c: ImportContext) -> dict[str, Any]:
    """The `invoke:` entry's `forward: true` for `autoforward="true"`, else nothing."""
    value = element.attrs.get("autoforward", "false")
    if value not in ("true", "false"):
        raise c.refuse(element, f"<invoke autoforward={value!r}>: neither 'true' nor 'false'")
    return {"forward": True} if value == "true" else {}
