"""SCXML `<invoke>` as statekit's `invoke:`: the invoked document becomes a chart of its
own (inline `<content>`, or the file `src` names, imported likewise), `<param>` and
`namelist` its `input`, `idlocation` a string `<data>` holding the invoke id.

The child chart is named `<parent chart>-<invoke id>`. An `<invoke>` without `id` gets
`<state id>_invoke<n>`, whose value in the document is `<state id>.invoke<n>`
(`statekit.scxml.generated_invoke_ids`). `autoforward="true"` is `forward: true`
(`statekit.scxml.forwarding`). `<finalize>` is the invocation's `finalize:` (its
`<assign>`s, run on each event from the child before the parent's transitions select it).
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
from statekit.scxml.chosen_documents import document_choice
from statekit.scxml.context import ImportContext, quoted
from statekit.scxml.document import Element, read_scxml
from statekit.scxml.effects import effects_of
from statekit.scxml.forwarding import forwarding
from statekit.scxml.generated_invoke_ids import invoke_name

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
    more: tuple[tuple[str, Any], ...] = ()
    """The other charts a chosen document may start, by `<invoke id>-<n>`."""


def invoke_id(element: Element, state_id: str, index: int, c: ImportContext) -> str:
    """The `<invoke>`'s id (its own, or one made from its state and position)."""
    return invoke_name(element, state_id, index, c.generated_invokes)


def invocation(
    element: Element, chart_name: str, c: ImportContext, child_chart: ChildTranslator
) -> Invoked:
    """The `<invoke>` `element` (whose id `_collect` has set)."""
    forward = forwarding(element, c)
    extra = set(element.attrs) - _ALLOWED
    if extra:
        raise c.refuse(element, f"<invoke> with {', '.join(sorted(extra))} is not expressible")
    for child in element.children:
        if child.tag not in ("param", "content", "finalize"):
            raise c.refuse(child, f"<{child.tag}> in <invoke> is not expressible")
    choice = document_choice(element, c, lambda: _document(element, c), SCXML_TYPES)
    if choice is None:
        kind = c.constant(element, "typeexpr") if "typeexpr" in element.attrs else None
        kind = element.attrs.get("type", kind)
        if kind is not None and kind not in SCXML_TYPES:
            raise c.refuse(element, f"<invoke> of the type {kind!r}: only SCXML documents")
    name = element.attrs["id"]
    inputs = _input(element, c)
    types = {field: _type_of(expr, element, c) for field, expr in inputs.items()}
    cases = choice.cases if choice is not None else (("", *_document(element, c)),)
    charts: dict[str, tuple[str, Any]] = {}  # the document's file → its chart's name and chart
    for _value, root, path in cases:
        if path not in charts:
            chart = f"{chart_name}-{name}" + (f"-{len(charts) + 1}" if charts else "")
            charts[path] = (chart, child_chart(root, path, chart, types))
    # SCXML sets only the child's declared <data>: the child says which it has
    for field in dict.fromkeys(
        f for f in inputs for _, t in charts.values() if f not in _context(t)
    ):
        c.note(element, f"<param name={field!r}> dropped: the invoked document has no such <data>")
        inputs.pop(field, None)
    (first, child), *others = charts.values()
    entry: dict[str, Any] = {"id": name, "chart": first}
    if choice is not None:
        entry["chart"] = {"by": choice.by, "cases": {v: charts[p][0] for v, _, p in cases}}
    entry.update(forward)
    if inputs:
        entry["input"] = inputs
    finalize = effects_of(element.kids("finalize"), c)  # run on each event from the child
    if finalize:
        entry["finalize"] = finalize
    effects: tuple[dict[str, Any], ...] = ()
    if "idlocation" in element.attrs:
        location = element.attrs["idlocation"]
        if location not in c.data_names():
            raise c.refuse(element, f"<invoke idlocation={location!r}>: not a declared <data>")
        effects = ({"assign": {location: quoted(c.generated_invokes.get(name, name))}},)
    more = tuple((f"{name}-{k}", other) for k, (_, other) in enumerate(others, start=2))
    return Invoked(entry, effects, child, more)


def _context(child: Any) -> dict[str, Any]:
    found: dict[str, Any] = child.chart.get("context", {})
    return found


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
