"""An `<invoke>` whose `typeexpr` or `srcexpr` reads a `<data>` given only constants, as
statekit's `chart: {by, cases}`: the document is chosen when the child starts.

SCXML evaluates `typeexpr`/`srcexpr` when the invocation starts (tests 215, 216 assign
the `<data>` in `<onentry>` before). When the expression is one `<data>` whose every
value in the document is a constant (`ImportContext.values_of`, as for `eventexpr`),
each value is a case: a type URI of an SCXML document (`SCXML_TYPES`) starts the
inline `<content>` (or `src`) document; a `srcexpr` value naming a file beside the
document starts that file's document (imported like any `src`). Any other value has
no case: the child does not start and the parent gets `error.invoke.<id>`, where
SCXML's processor fails the invocation too. A `<data>` of one value is a constant
(read as before), an expression of another form is refused, and so is an invoke
whose every value fails (there is no chart to choose).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from statekit.compiler.value_types import BaseType
from statekit.scxml.context import ImportContext
from statekit.scxml.document import Element, read_scxml

COMPUTED = ("typeexpr", "srcexpr")


@dataclass(frozen=True)
class DocumentChoice:
    """`by` (the expression over `ctx`) and each value that starts a document, with
    the document's `<scxml>` and its file (a value's case absent: it starts none)."""

    by: str
    cases: tuple[tuple[str, Element, str], ...]


def document_choice(
    element: Element,
    c: ImportContext,
    inline: Callable[[], tuple[Element, str]],
    scxml_types: frozenset[str],
) -> DocumentChoice | None:
    """The choice the `<invoke>` `element` makes (None: its type and source are fixed or
    constants, read as before). `inline` gives its `<content>` or `src` document."""
    found = {a: c.values_of(element, a) for a in COMPUTED if a in element.attrs}
    chosen = {a: v for a, v in found.items() if v is not None and len(v[1]) > 1}
    if not chosen:
        return None
    if len(chosen) > 1:
        raise c.refuse(element, "<invoke typeexpr=...> and srcexpr=... both computed")
    ((attribute, (data, values)),) = chosen.items()
    field = c.fields[data]
    if field.type.base is not BaseType.STRING:
        raise c.refuse(element, f"<invoke {attribute}={data!r}>: not a string <data>")
    if attribute == "typeexpr":
        root, path = inline()
        cases = tuple((v, root, path) for v in values if v in scxml_types)
    else:
        cases = tuple(_source_cases(element, c, values, scxml_types))
    if not cases:
        raise c.refuse(
            element, f"<invoke {attribute}={data!r}>: none of its values {values!r} starts one"
        )
    return DocumentChoice(by=c.expression(element, attribute), cases=cases)


def _source_cases(
    element: Element, c: ImportContext, values: list[Any], scxml_types: frozenset[str]
) -> list[tuple[str, Element, str]]:
    if element.kids("content"):
        raise c.refuse(element, "<invoke srcexpr=...> with <content>: one of them")
    kind = element.attrs.get("type", "http://www.w3.org/TR/scxml/")
    if "typeexpr" in element.attrs:
        kind = c.constant(element, "typeexpr")
    if kind not in scxml_types:
        raise c.refuse(element, f"<invoke srcexpr=...> of the type {kind!r}: only SCXML")
    cases: list[tuple[str, Element, str]] = []
    for value in values:
        if not isinstance(value, str):
            continue
        file = Path(c.path).parent / value.removeprefix("file:")
        if file.is_file():
            cases.append((value, read_scxml(file), str(file)))
    return cases
