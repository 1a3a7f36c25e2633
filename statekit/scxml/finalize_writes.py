"""The `<data>` an `<invoke>`'s `<finalize>` assigns are nullable.

A `<finalize>` runs on every event from its child (`invoke: {finalize: ...}`), and its
`_event.data.<field>` reads null on an event without that field (the child's
`done.invoke`, an `error.invoke`): SCXML's `_event.data.get('x')` is `None` there. So
a `<data>` a finalize assigns may hold null, whatever its first value: it is declared
nullable (its default kept).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator

from statekit.scxml.data_types import DataField
from statekit.scxml.document import Element


def finalized(fields: dict[str, DataField], root: Element) -> dict[str, DataField]:
    """`fields` with each one a `<finalize>` of the document `root` assigns nullable."""
    names = set(_assigned(root, inside=False))
    return {
        name: dataclasses.replace(f, type=dataclasses.replace(f.type, nullable=True))
        if name in names
        else f
        for name, f in fields.items()
    }


def _assigned(element: Element, *, inside: bool) -> Iterator[str]:
    for child in element.children:
        if child.tag in ("content", "donedata"):
            continue  # another document, or data
        if inside and child.tag == "assign" and "location" in child.attrs:
            yield child.attrs["location"]
        yield from _assigned(child, inside=inside or child.tag == "finalize")
