"""`_event.origintype` compared with a short name of the SCXML event processor.

statekit's `_event.origintype` of an event a `send` delivered is the URI SCXML
defines for its event I/O processor (`http://www.w3.org/TR/scxml/#SCXMLEventProcessor`),
null for any other event. A document that compares it (or a `<data>` assigned from
it) with `'scxml'` expects an interpreter whose value also equals that short name
(python-statemachine's does). Where a state's transitions accept either name (the
suite's test253) the comparison with `'scxml'` is simply never true and the one with
the URI decides; where they accept only `'scxml'` the document is refused, since
statekit would give the other answer.
"""

from __future__ import annotations

import re

from statekit.scxml.context import ImportContext
from statekit.scxml.document import Element

SHORT_NAME = re.compile(r"""==\s*['"]scxml['"]|['"]scxml['"]\s*==""")
URI = "http://www.w3.org/TR/scxml/#SCXMLEventProcessor"
_READ = "_event.origintype"


def check_short_name(state: Element, c: ImportContext) -> None:
    """Refuse `state` when a transition's `cond` compares `_event.origintype`, or a
    `<data>` an `<assign>` gives it, with `'scxml'` and none compares it with the URI."""
    transitions = state.kids("transition")
    conds = [t.attrs.get("cond", "") for t in transitions]
    short = [t for t in transitions if SHORT_NAME.search(t.attrs.get("cond", ""))]
    if not short or any(URI in cond for cond in conds):
        return
    origin_types = {"_event.origintype"}
    origin_types |= {w.location for w in c.writes if (w.expr or "").strip() == _READ}
    for transition in short:
        if any(name in transition.attrs["cond"] for name in origin_types):
            raise c.refuse(
                transition,
                "_event.origintype compared with the short name 'scxml' (statekit's is the "
                f"URI {URI})",
            )
