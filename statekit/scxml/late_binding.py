"""`binding="late"`: a state's `<data>` get their values when the state is first entered.

SCXML creates every `<data>` when the document starts; with early binding (the
default) it also gives each its value then, with late binding only when the state
that declares it is entered for the first time, before that state's `<onentry>`.
The `<data>` of `<scxml>` itself are bound at the start either way (the document's
root is entered first).

The import writes late binding as the early-binding document it means, before
translating it:

- each `<data id expr>` of a state loses its value: it is unset (null) until the
  state's first entry, so it is a nullable field typed by the value it is given;
- the state gets, first of its entry, `<if cond="<flag> == false">` that sets the
  flag and assigns each value in document order;
- the flag is a boolean `<data>` of the document, false at the start, named after
  the state (`<state>__bound`, with `_` added while a `<data>` or a name a
  `<script>` assigns has that name).

A read before the first entry sees null, as SCXML's unbound data reads as an error
that a condition takes for false (test280's `Var2 == 1`); a later entry does not
bind again.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator

from statekit.scxml.data_content import content_value
from statekit.scxml.document import Element, ScxmlError

Refuse = Callable[[Element, str], ScxmlError]
_STATES = ("state", "parallel", "final")
_OPAQUE = ("content", "donedata")
LATE = "late"


def bind_late(root: Element, document: str, names: frozenset[str], refuse: Refuse) -> None:
    """Rewrite `root` (read from `document`) in place when its `binding` is late;
    `names`: the names the document's `<script>`s assign (a flag takes none of them).
    Any `binding` other than early or late is refused."""
    binding = root.attrs.get("binding", "early")
    if binding not in ("early", LATE):
        raise refuse(root, f"binding={binding!r}: SCXML has only 'early' and 'late'")
    if binding != LATE:
        return
    taken = set(names) | {d.attrs.get("id", "") for d in _descendants(root) if d.tag == "data"}
    flags: list[Element] = []
    for state in list(_descendants(root)):
        if state.tag not in _STATES:
            continue
        data = [d for block in state.kids("datamodel") for d in block.kids("data")]
        bound = [_unbound(d, document, refuse) for d in data]
        values = [(d, value) for d, value in zip(data, bound, strict=True) if value is not None]
        if not values:
            continue
        flag = re.sub(r"\W", "_", f"{state.attrs.get('id', 'state')}__bound")
        while flag in taken:
            flag += "_"
        taken.add(flag)
        first = values[0][0]
        flags.append(_element("data", {"id": flag, "expr": "false"}, first))
        test = _element("if", {"cond": f"{flag} == false"}, first)
        test.children = [_element("assign", {"location": flag, "expr": "true"}, first)]
        test.children += [
            _element("assign", {"location": d.attrs["id"], "expr": value}, d) for d, value in values
        ]
        entry = _element("onentry", {}, first)
        entry.children = [test]
        state.children.insert(0, entry)
    if flags:
        model = _element("datamodel", {}, root)
        model.children = flags
        root.children.append(model)


def _unbound(data: Element, document: str, refuse: Refuse) -> str | None:
    """The value expression of `data`, which is then left without one (unset until its
    state's first entry); None when it has none."""
    if "expr" in data.attrs:
        return data.attrs.pop("expr").strip() or None
    if data.text.strip() or "src" in data.attrs:
        value = content_value(data, document, refuse)
        data.attrs.pop("src", None)
        data.text = ""
        return value
    return None


def _element(tag: str, attrs: dict[str, str], at: Element) -> Element:
    return Element(tag, attrs, at.line, at.column, at.namespace)


def _descendants(element: Element) -> Iterator[Element]:
    """Every element below `element` in this document (not inside `<content>` or
    `<donedata>`, whose documents and data are their own)."""
    for child in element.children:
        yield child
        if child.tag not in _OPAQUE:
            yield from _descendants(child)
