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
from dataclasses import dataclass, field
from typing import Any

import yaml

from statekit.scxml.document import Element, ScxmlError
from statekit.scxml.expressions import UnsupportedExpression, translate

_STATES = ("state", "parallel", "final", "history")
_NAME_OK = re.compile(r"^[^.\s^*][^.\s]*$")
_DELAY = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*(ms|s|m|h|d)\s*$")
_UNIT_MS = {"ms": 1, "s": 1000, "m": 60_000, "h": 3_600_000, "d": 86_400_000}
_INTEGER = re.compile(r"^[-+]?\d+$")
_NUMBER = re.compile(r"^[-+]?\d*\.\d+$")
_QUOTED = re.compile(r"^('[^'\\]*'|\"[^\"\\]*\")$")
_DONE = "done.state."
DISCARDED = "DISCARDED"
"""The reason of an event no transition takes: SCXML discards it; the chart says so
with one `reject: {"*": DISCARDED}` at its root (so every event is classified)."""
_IGNORED = {"log"}
_OPAQUE = {"invoke", "content", "donedata"}  # what they hold is another document or data
_SCXML_PROCESSOR = "http://www.w3.org/TR/scxml/#SCXMLEventProcessor"


@dataclass
class _Context:
    path: str
    ids: dict[str, tuple[str, ...]] = field(default_factory=dict)
    data: dict[str, tuple[str, Any]] = field(default_factory=dict)
    events: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    def refuse(self, element: Element, message: str) -> ScxmlError:
        return ScxmlError(self.path, element.line, element.column, message)

    def note(self, element: Element, message: str) -> None:
        self.notes.append(f"{self.path}:{element.line}:{element.column}: note[scxml] {message}")

    def expression(self, element: Element, attribute: str) -> str:
        text = element.attrs[attribute]
        try:
            return translate(text, frozenset(self.data), lambda name: self.state_ref(element, name))
        except UnsupportedExpression as error:
            raise self.refuse(
                element, f"<{element.tag} {attribute}={text!r}>: {error} is not expressible"
            ) from None

    def state_ref(self, element: Element, name: str) -> str:
        if name not in self.ids:
            raise self.refuse(element, f"no state has the id {name!r}")
        return name


@dataclass(frozen=True)
class Translation:
    """The chart (a dict ready for `yaml.safe_dump`) and the notes (dropped elements)."""

    chart: dict[str, Any]
    notes: tuple[str, ...]


def chart_of(root: Element, path: str, name: str) -> Translation:
    """The statekit chart named `name` equivalent to the `<scxml>` `root` read from `path`."""
    context = _Context(path)
    if root.attrs.get("binding", "early") != "early":
        raise context.refuse(root, "binding='late' (data bound on first entry) is not expressible")
    _collect(root, (), context, root)
    chart: dict[str, Any] = {"statechart": _chart_name(name)}
    if context.data:
        chart["context"] = {
            key: {"type": kind, "default": value} for key, (kind, value) in context.data.items()
        }
    body = _state(root, (), context)
    chart["events"] = {_event_name(e): {} for e in context.events}
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


def _event_name(event: str) -> str:
    return event.replace(".", "__")


def _collect(element: Element, path: tuple[str, ...], context: _Context, root: Element) -> None:
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
        elif child.tag == "data":
            context.data[child.attrs.get("id", "")] = _literal(child, context)
        elif child.tag in ("raise", "send") and "event" in child.attrs:
            _add_event(context, child, child.attrs["event"])
        elif child.tag == "transition":
            for descriptor in child.attrs.get("event", "").split():
                if descriptor != "*" and not descriptor.startswith(_DONE):
                    _add_event(context, child, descriptor.removesuffix(".*").removesuffix("."))
        if child.tag not in _OPAQUE:
            _collect(child, child_path, context, root)


def _add_event(context: _Context, element: Element, event: str) -> None:
    if event in context.events or not event:  # `.*` names no event
        return
    name = _event_name(event)
    if not _NAME_OK.match(name) or "*" in name:
        raise context.refuse(element, f"the event name {event!r} is not one statekit takes")
    if any(_event_name(other) == name for other in context.events):
        raise context.refuse(element, f"the event {event!r} would be named {name!r}, as another")
    context.events.append(event)


def _literal(element: Element, context: _Context) -> tuple[str, Any]:
    name = element.attrs.get("id", "")
    if not re.match(r"^[A-Za-z_][A-Za-z0-9_]*$", name):
        raise context.refuse(element, f"<data id={name!r}>: not a name statekit's context takes")
    if "src" in element.attrs or element.children:
        raise context.refuse(element, "<data> with src or inline content is not expressible")
    text = element.attrs.get("expr", element.text).strip()
    if _INTEGER.match(text):
        return "integer", int(text)
    if _NUMBER.match(text):
        return "number", float(text)
    if text in ("true", "false"):
        return "boolean", text == "true"
    if _QUOTED.match(text):
        return "string", text[1:-1]
    shown = f"expr={text!r}" if text else "no value"
    raise context.refuse(element, f"<data id={name!r}> with {shown}: only a literal is expressible")


def _state(element: Element, path: tuple[str, ...], context: _Context) -> dict[str, Any]:
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
    entry = _effects(element.kids("onentry"), context)
    exit_ = _effects(element.kids("onexit"), context)
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


def _history(element: Element, context: _Context) -> dict[str, Any]:
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
    element: Element, path: tuple[str, ...], children: list[Element], context: _Context
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
    element: Element, path: tuple[str, ...], compound: bool, context: _Context
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
                target = done if event == done_name else on.setdefault(_event_name(event), [])
                target.append(alternative)
    out: dict[str, Any] = {}
    if on:
        out["on"] = on
    if always:
        out["always"] = always
    if done:
        out["done"] = done
    return out


def _check_descriptor(transition: Element, descriptor: str, done_name: str, c: _Context) -> None:
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


def _alternative(transition: Element, path: tuple[str, ...], c: _Context) -> dict[str, Any]:
    out: dict[str, Any] = {}
    targets = [c.state_ref(transition, t) for t in transition.attrs.get("target", "").split()]
    below = all(c.ids[t][: len(path)] == path and len(c.ids[t]) > len(path) for t in targets)
    if transition.attrs.get("type") == "internal" and targets and below:
        raise c.refuse(transition, "an internal transition to a descendant is not expressible")
    if targets:
        out["to"] = targets[0] if len(targets) == 1 else targets
    if "cond" in transition.attrs:
        out["if"] = c.expression(transition, "cond")
    effects = _content(transition, c)
    if effects:
        out["do"] = effects
    return out


def _effects(blocks: list[Element], c: _Context) -> list[dict[str, Any]]:
    return [effect for block in blocks for effect in _content(block, c)]


def _content(block: Element, c: _Context) -> list[dict[str, Any]]:
    effects: list[dict[str, Any]] = []
    for element in block.children:
        if element.tag == "raise" and element.attrs.get("event"):
            effects.append({"raise": _event_name(element.attrs["event"])})
        elif element.tag == "assign":
            effects.append(_assign(element, c))
        elif element.tag == "send":
            effects.append(_send(element, c))
        elif element.tag == "cancel" and set(element.attrs) == {"sendid"}:
            effects.append({"cancel": element.attrs["sendid"]})
        elif element.tag in _IGNORED:
            c.note(element, "<log> dropped: statekit has no log effect")
        else:
            attrs = "".join(f" {k}" for k in sorted(element.attrs))
            raise c.refuse(element, f"<{element.tag}{attrs}> is not expressible in statekit")
    return effects


def _assign(element: Element, c: _Context) -> dict[str, Any]:
    location = element.attrs.get("location", "")
    if location not in c.data:
        raise c.refuse(element, f"<assign location={location!r}>: not a declared <data> name")
    if "expr" not in element.attrs:
        raise c.refuse(element, "<assign> with inline content is not expressible")
    return {"assign": {location: c.expression(element, "expr")}}


def _send(element: Element, c: _Context) -> dict[str, Any]:
    if element.attrs.get("type") == _SCXML_PROCESSOR:
        element.attrs.pop("type")
    extra = set(element.attrs) - {"event", "target", "delay", "id"}
    if extra or element.children:
        what = ", ".join(sorted(extra | {f"<{k.tag}>" for k in element.children}))
        raise c.refuse(element, f"<send> with {what} is not expressible")
    if "event" not in element.attrs:
        raise c.refuse(element, "<send> without event is not expressible")
    target = element.attrs.get("target")
    event = _event_name(element.attrs["event"])
    if target == "#_internal" and not {"delay", "id"} & set(element.attrs):
        return {"raise": event}
    if target is not None:
        raise c.refuse(element, f"<send target={target!r}>: another target is not expressible")
    send: dict[str, Any] = {"event": event}
    if "delay" in element.attrs:
        match = _DELAY.match(element.attrs["delay"])
        ms = float(match.group(1)) * _UNIT_MS[match.group(2)] if match else -1.0
        if ms < 0 or ms != int(ms):
            raise c.refuse(element, f"<send delay={element.attrs['delay']!r}>: not a delay")
        send["delay"] = f"{int(ms)}ms"
    if "id" in element.attrs:
        send["id"] = element.attrs["id"]
    return {"send": send}
