"""An SCXML document (`document.Element`) as a statekit chart (a YAML-ready dict).

What statekit expresses is written one for one: `<state>`, `<parallel>`,
`<final>`, `<history>`, `initial` (attribute or `<initial>`), transitions with
`event`/`cond`/`target`, eventless transitions (`always`), `done.state.<id>` of
the state itself (`done`), `<raise>`, `<assign>` to a declared `<data>`,
`<data>` with a literal value, `<send>` to this session (`send`, with a
literal `delay` and `id`) and `<cancel>`. `<log>` is dropped with a note.

SCXML matches an event descriptor by prefix (`foo` matches `foo.bar`, `*`
every event); statekit's names are exact. Every event the document names is
known here, so each state gets, per event, the transitions whose descriptors
match it, in document order. Dotted names become `__`-joined (`foo.bar` →
`foo__bar`). Anything else is an `ScxmlError` at the element, naming it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

import yaml

from statekit.compiler.value_types import STRING
from statekit.scxml.context import ImportContext, event_name, quoted
from statekit.scxml.data_types import Write, typed_fields
from statekit.scxml.document import Element
from statekit.scxml.effects import content_of, effects_of

_STATES = ("state", "parallel", "final", "history")
_NAME_OK = re.compile(r"^[^.\s^*][^.\s]*$")
_DONE = "done.state."
DISCARDED = "DISCARDED"
"""The reason of an event no transition takes: SCXML discards it; the chart says so
with one `reject: {"*": DISCARDED}` at its root (so every event is classified)."""
_OPAQUE = {"invoke", "content", "donedata"}  # what they hold is another document or data


@dataclass(frozen=True)
class Translation:
    """The chart (a dict ready for `yaml.safe_dump`) and the notes (dropped elements)."""

    chart: dict[str, Any]
    notes: tuple[str, ...]


def chart_of(root: Element, path: str, name: str) -> Translation:
    """The statekit chart named `name` equivalent to the `<scxml>` `root` read from `path`."""
    context = ImportContext(path)
    if root.attrs.get("binding", "early") != "early":
        raise context.refuse(root, "binding='late' (data bound on first entry) is not expressible")
    chart: dict[str, Any] = {"statechart": _chart_name(name)}
    context.system["_name"] = quoted(root.attrs.get("name", chart["statechart"]))
    _collect(root, (), context, root)
    context.fields, untyped = typed_fields(
        context.data, context.writes, context.translated, context.refuse
    )
    body = _state(root, (), context)
    for problem in untyped:  # after the body: what it cannot express is the better reason
        raise context.refuse(problem.element, problem.message)
    if context.fields:
        chart["context"] = {key: f.spec() for key, f in context.fields.items()}
    chart["events"] = {event_name(e): {} for e in context.events}
    chart.update(body)
    chart["reject"] = {"*": DISCARDED}
    return Translation(chart, tuple(context.notes))


def chart_yaml(translation: Translation) -> str:
    """The chart as YAML text."""
    return yaml.dump(translation.chart, Dumper=_PlainDumper, sort_keys=False, allow_unicode=True)


class _PlainDumper(yaml.SafeDumper):
    """Writes a transition shared by several events in full each time (no anchors)."""

    def ignore_aliases(self, data: Any) -> bool:
        return True


def _chart_name(name: str) -> str:
    cleaned = re.sub(r"[^A-Za-z0-9_-]", "_", name) or "scxml"
    return cleaned if re.match(r"[A-Za-z_]", cleaned) else f"_{cleaned}"


def _collect(
    element: Element, path: tuple[str, ...], context: ImportContext, root: Element
) -> None:
    """Every state id with its path, every `<data>`, every event name, in document order."""
    for child in element.children:
        child_path = path
        if child.tag in _STATES:
            state_id = child.attrs.get("id", f"state_{child.line}_{child.column}")
            if not _NAME_OK.match(state_id):
                raise context.refuse(child, f"the state id {state_id!r} has a '.' or white space")
            if state_id in context.ids:
                raise context.refuse(child, f"a second state with the id {state_id!r}")
            child.attrs.setdefault("id", state_id)
            child_path = (*path, state_id)
            context.ids[state_id] = child_path
            if child.tag == "history":
                context.histories.add(state_id)
        elif child.tag == "data":
            context.data.append((child, _data_value(child, context)))
        elif child.tag == "assign" and "expr" in child.attrs:
            location = child.attrs.get("location", "")
            context.writes.append(Write(location, child, child.attrs["expr"]))
        if child.tag in ("raise", "send") and "event" in child.attrs:
            _add_event(context, child, child.attrs["event"])
        if child.tag == "send" and "idlocation" in child.attrs:
            context.writes.append(Write(child.attrs["idlocation"], child, kind=STRING))
        elif child.tag == "transition":
            for descriptor in child.attrs.get("event", "").split():
                if descriptor != "*" and not descriptor.startswith(_DONE):
                    _add_event(context, child, descriptor.removesuffix(".*").removesuffix("."))
        if child.tag not in _OPAQUE:
            _collect(child, child_path, context, root)


def _add_event(context: ImportContext, element: Element, event: str) -> None:
    if event in context.events or not event:  # `.*` names no event
        return
    name = event_name(event)
    if not _NAME_OK.match(name) or "*" in name:
        raise context.refuse(element, f"the event name {event!r} is not one statekit takes")
    if any(event_name(other) == name for other in context.events):
        raise context.refuse(element, f"the event {event!r} would be named {name!r}, as another")
    context.events.append(event)


def _data_value(element: Element, context: ImportContext) -> str | None:
    """The expression of a `<data>`'s value; None for none (SCXML's undefined)."""
    name = element.attrs.get("id", "")
    if not re.match(r"^[A-Za-z_][A-Za-z0-9_]*$", name):
        raise context.refuse(element, f"<data id={name!r}>: not a name statekit's context takes")
    if name in context.data_names():
        raise context.refuse(element, f"a second <data> with the id {name!r}")
    if "src" in element.attrs or element.children:
        raise context.refuse(element, "<data> with src or inline content is not expressible")
    text = element.attrs.get("expr", element.text).strip()
    return text or None


def _state(element: Element, path: tuple[str, ...], context: ImportContext) -> dict[str, Any]:
    out: dict[str, Any] = {}
    tag = element.tag
    for child in element.children:
        if child.tag in ("invoke", "script", "donedata"):
            raise context.refuse(child, f"<{child.tag}> is not expressible in statekit")
    if tag == "final":
        out["final"] = True
    if tag == "history":
        return _history(element, context)
    children = element.kids(*_STATES)
    if tag == "parallel":
        out["parallel"] = True
    elif children:
        out["initial"] = _initial(element, path, children, context)
    entry = effects_of(element.kids("onentry"), context)
    exit_ = effects_of(element.kids("onexit"), context)
    if entry:
        out["entry"] = entry
    if exit_:
        out["exit"] = exit_
    out.update(_transitions(element, path, bool(children), context))
    if children:
        out["states"] = {
            c.attrs["id"]: _state(c, (*path, c.attrs["id"]), context) for c in children
        }
    return out


def _history(element: Element, context: ImportContext) -> dict[str, Any]:
    out: dict[str, Any] = {"history": element.attrs.get("type", "shallow")}
    if out["history"] not in ("shallow", "deep"):
        raise context.refuse(element, f"<history type={out['history']!r}>: not shallow or deep")
    for transition in element.kids("transition"):
        if transition.children:
            raise context.refuse(transition, "a history's default transition with content")
        targets = [
            context.state_ref(transition, t) for t in transition.attrs.get("target", "").split()
        ]
        if not targets:
            raise context.refuse(transition, "a history's default transition without a target")
        out["default"] = targets[0] if len(targets) == 1 else targets
    return out


def _initial(
    element: Element, path: tuple[str, ...], children: list[Element], context: ImportContext
) -> str:
    targets = element.attrs.get("initial", "").split()
    where = element
    for initial in element.kids("initial"):
        for transition in initial.kids("transition"):
            if transition.children:
                raise context.refuse(transition, "an <initial> transition with content")
            targets, where = transition.attrs.get("target", "").split(), transition
    if not targets:
        return str(children[0].attrs["id"])
    if len(targets) > 1:
        raise context.refuse(where, "an initial of several states is not expressible")
    target = context.ids.get(targets[0])
    if target is None or target[: len(path)] != path or len(target) == len(path):
        raise context.refuse(where, f"the initial {targets[0]!r} is not a descendant")
    return ".".join(target[len(path) :])


def _transitions(
    element: Element, path: tuple[str, ...], compound: bool, context: ImportContext
) -> dict[str, Any]:
    done_name = _DONE + element.attrs.get("id", "")
    universe = [*context.events, *([done_name] if compound else [])]
    on: dict[str, list[dict[str, Any]]] = {}
    always: list[dict[str, Any]] = []
    done: list[dict[str, Any]] = []
    for transition in element.kids("transition"):
        alternative = _alternative(transition, path, context)
        descriptors = transition.attrs.get("event", "").split()
        if not descriptors:
            always.append(alternative)
        for descriptor in descriptors:
            _check_descriptor(transition, descriptor, done_name, context)
        for event in universe:
            if any(_matches(d, event) for d in descriptors):
                target = done if event == done_name else on.setdefault(event_name(event), [])
                target.append(alternative)
    out: dict[str, Any] = {}
    if on:
        out["on"] = on
    if always:
        out["always"] = always
    if done:
        out["done"] = done
    return out


def _check_descriptor(
    transition: Element, descriptor: str, done_name: str, c: ImportContext
) -> None:
    if descriptor.startswith("error"):
        raise c.refuse(transition, f"event {descriptor!r}: statekit raises no error.* events")
    if descriptor.startswith("done.invoke"):
        raise c.refuse(transition, f"event {descriptor!r}: <invoke> is not expressible")
    if descriptor.startswith(_DONE) and not _matches(descriptor, done_name):
        raise c.refuse(
            transition,
            f"event {descriptor!r}: statekit's done transitions belong to the state that is done",
        )


def _matches(descriptor: str, event: str) -> bool:
    stem = descriptor.removesuffix(".*").removesuffix(".")
    return stem == "*" or event == stem or event.startswith(stem + ".")


def _alternative(transition: Element, path: tuple[str, ...], c: ImportContext) -> dict[str, Any]:
    out: dict[str, Any] = {}
    targets = [c.state_ref(transition, t) for t in transition.attrs.get("target", "").split()]
    below = all(c.ids[t][: len(path)] == path and len(c.ids[t]) > len(path) for t in targets)
    if transition.attrs.get("type") == "internal" and targets and below:
        raise c.refuse(transition, "an internal transition to a descendant is not expressible")
    if targets:
        out["to"] = targets[0] if len(targets) == 1 else targets
    if "cond" in transition.attrs:
        out["if"] = c.condition(transition)
    effects = content_of(transition, c)
    if effects:
        out["do"] = effects
    return out
