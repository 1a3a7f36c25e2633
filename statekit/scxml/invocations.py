"""SCXML `<invoke>` as statekit's `invoke:`: the invoked document becomes a chart of its
own (inline `<content>`, or the file `src` names, imported likewise), `<param>` and
`namelist` its `input`, `idlocation` a string `<data>` holding the invoke id.

The child chart is named `<parent chart>-<invoke id>`. An `<invoke>` without `id` gets
`<state id>_invoke<n>` (SCXML leaves the form to the platform). `autoforward="true"`
is `forward: true` (`statekit.scxml.forwarding`); `<finalize>` is refused (statekit
runs no parent code for a child's event before the parent's own transition selection).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from statekit.compiler.diagnostics import SourceSpan
from statekit.compiler.expressions.expression import Expression, compile_expression
from statekit.compiler.expressions.scope import ExpressionScope, NoEvent
from statekit.compiler.value_types import ValueType
from statekit.scxml.context import ImportContext, quoted
from statekit.scxml.document import Element, read_scxml
from statekit.scxml.forwarding import forwarding

SCXML_TYPES = frozenset(
    {
        "http://www.w3.org/TR/scxml/",
        "http://www.w3.org/TR/scxml",
        "scxml",
        "http://www.w3.org/TR/scxml/#SCXMLEventProcessor",
    }
)
_ALLOWED = {"id", "idlocation", "type", "typeexpr", "src", "srcexpr", "namelist", "autoforward"}

ChildTranslator = Callable[[Element, str, str, dict[str, ValueType]], Any]
"""(the child's `<scxml>`, its file, its chart name, its input types) → its translation."""


@dataclass(frozen=True)
class Invoked:
    """One `<invoke>`: the parent's `invoke:` entry and effects, and the child's translation."""

    entry: dict[str, Any]
    entry_effects: tuple[dict[str, Any], ...]
    child: Any


def invoke_id(element: Element, state_id: str, index: int) -> str:
    """The `<invoke>`'s id (its own, or one made from its state and position)."""
    return element.attrs.get("id") or f"{state_id}_invoke{index}"


def invocation(
    element: Element, chart_name: str, c: ImportContext, child_chart: ChildTranslator
) -> Invoked:
    """The `<invoke>` `element` (whose id `_collect` has set)."""
    forward = forwarding(element, c)
    extra = set(element.attrs) - _ALLOWED
    if extra:
        raise c.refuse(element, f"<invoke> with {', '.join(sorted(extra))} is not expressible")
    for child in element.children:
        if child.tag == "finalize":
            raise c.refuse(child, "<finalize> (parent code run on a child's event) is refused")
        if child.tag not in ("param", "content"):
            raise c.refuse(child, f"<{child.tag}> in <invoke> is not expressible")
    kind = c.constant(element, "typeexpr") if "typeexpr" in element.attrs else None
    kind = element.attrs.get("type", kind)
    if kind is not None and kind not in SCXML_TYPES:
        raise c.refuse(element, f"<invoke> of the type {kind!r}: only SCXML documents")
    name = element.attrs["id"]
    inputs = _input(element, c)
    types = {field: _type_of(expr, element, c) for field, expr in inputs.items()}
    # SCXML sets only the child's declared <data>: the child says which it has
    child_root, child_path = _document(element, c)
    child = child_chart(child_root, child_path, f"{chart_name}-{name}", types)
    declared = child.chart.get("context", {})
    for field in [f for f in inputs if f not in declared]:
        c.note(element, f"<param name={field!r}> dropped: the invoked document has no such <data>")
        del inputs[field]
    entry: dict[str, Any] = {"id": name, "chart": f"{chart_name}-{name}"}
    entry.update(forward)
    if inputs:
        entry["input"] = inputs
    effects: tuple[dict[str, Any], ...] = ()
    if "idlocation" in element.attrs:
        location = element.attrs["idlocation"]
        if location not in c.data_names():
            raise c.refuse(element, f"<invoke idlocation={location!r}>: not a declared <data>")
        effects = ({"assign": {location: quoted(name)}},)
    return Invoked(entry, effects, child)


def _input(element: Element, c: ImportContext) -> dict[str, str]:
    inputs: dict[str, str] = {}
    for name in element.attrs.get("namelist", "").split():
        if name not in c.data_names():
            raise c.refuse(element, f"<invoke namelist>: {name!r} names no <data> (an error)")
        inputs[name] = f"ctx.{name}"
    for param in element.kids("param"):
        name = param.attrs.get("name", "")
        if "expr" in param.attrs:
            inputs[name] = c.expression(param, "expr")
        elif param.attrs.get("location") in c.data_names():
            inputs[name] = f"ctx.{param.attrs['location']}"
        else:
            raise c.refuse(param, "<param> without expr or a declared location")
    return inputs


def _type_of(source: str, element: Element, c: ImportContext) -> ValueType:
    scope = ExpressionScope(
        context={n: f.type for n, f in c.fields.items()},
        event=NoEvent("an <invoke>'s <param> has no event"),
        resolve_state=lambda _ref, _span: 0,
    )
    span = SourceSpan(c.path, element.line, element.column, element.line, element.column + 1)
    compiled = compile_expression(source, span, scope)
    if not isinstance(compiled, Expression):
        raise c.refuse(element, f"<param> {source!r}: {compiled[0].message}")
    return ValueType(compiled.type.base)


def _document(element: Element, c: ImportContext) -> tuple[Element, str]:
    contents = element.kids("content")
    sources = [k for k in ("src", "srcexpr") if k in element.attrs]
    if len(contents) + len(sources) != 1:
        raise c.refuse(element, "<invoke> needs one of src, srcexpr or <content>")
    if contents:
        content = contents[0]
        documents = content.kids("scxml")
        if "expr" in content.attrs or len(documents) != 1:
            raise c.refuse(content, "<content> other than one inline <scxml> document")
        return documents[0], c.path
    source = element.attrs["src"] if "src" in element.attrs else c.constant(element, "srcexpr")
    if not isinstance(source, str):
        raise c.refuse(element, f"<invoke> src {source!r} is not a file name")
    file = Path(c.path).parent / source.removeprefix("file:")
    if not file.is_file():
        raise c.refuse(element, f"<invoke> src {source!r}: no such file next to this one")
    return read_scxml(file), str(file)
