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

from statekit.compiler.model.evaluation_errors import ERROR_EXECUTION
from statekit.compiler.value_types import INTEGER, STRING, ValueType
from statekit.scxml.context import ImportContext, event_name, quoted
from statekit.scxml.data_content import content_value
from statekit.scxml.data_types import Write, typed_fields
from statekit.scxml.document import Element
from statekit.scxml.donedata import final_output
from statekit.scxml.effects import certain_failure, content_of, effects_of, not_an_expression
from statekit.scxml.failing_invocations import split_invocations
from statekit.scxml.finalize_writes import finalized
from statekit.scxml.http_sends import collect_http_send, declare_raw, is_http_send, posts_nowhere
from statekit.scxml.invocations import Invoked, invocation, invoke_id
from statekit.scxml.late_binding import bind_late
from statekit.scxml.null_data import compared_types
from statekit.scxml.origin_types import check_short_name
from statekit.scxml.parent_sends import sends_to_parent
from statekit.scxml.payloads import declaration, payload_fields, send_payload
from statekit.scxml.scripts import declare_script_names, script_names
from statekit.scxml.send_targets import ERROR_COMMUNICATION, may_not_reach
from statekit.scxml.start_binding import bind_at_start
from statekit.scxml.state_transitions import pushed_down, state_transitions
from statekit.scxml.system_variables import SESSION_ID

_STATES = ("state", "parallel", "final", "history")
_NAME_OK = re.compile(r"^[^.\s^*][^.\s]*$")
DISCARDED = "DISCARDED"
"""The reason of an event no transition takes: SCXML discards it; the chart says so
with one `reject: {"*": DISCARDED}` at its root (so every event is classified)."""
_OPAQUE = {"content", "donedata"}  # what they hold is another document or data


@dataclass(frozen=True)
class Translation:
    """The chart (a dict ready for `yaml.safe_dump`), the notes (dropped elements), and
    the charts it invokes by invoke id (each a `Translation` of its own)."""

    chart: dict[str, Any]
    notes: tuple[str, ...]
    children: tuple[tuple[str, Translation], ...] = ()


def chart_of(
    root: Element, path: str, name: str, input_types: dict[str, ValueType] | None = None
) -> Translation:
    """The statekit chart named `name` equivalent to the `<scxml>` `root` read from `path`;
    `input_types`: it is invoked, with `<param>`s of these names and types."""
    context = ImportContext(path, invoked=input_types is not None)
    bind_late(root, path, script_names(root), context.refuse)  # binding="late": rewritten
    chart: dict[str, Any] = {"statechart": _chart_name(name), "on_evaluation_error": "raise"}
    context.chart_name = chart["statechart"]
    context.python_datamodel = root.attrs.get("datamodel") == "python"  # `|` is Python's
    context.system["_name"] = quoted(root.attrs.get("name", chart["statechart"]))
    context.system["_sessionid"] = SESSION_ID
    context.system["_sessionid"] = SESSION_ID
    _collect(root, (), context, root)
    declare_script_names(root, context)
    for field_name, kind in (input_types or {}).items():
        if field_name in context.data_names():  # the others are dropped by the parent
            context.writes.append(Write(field_name, root, kind=kind))
    compared = compared_types(root)  # the type an always-null <data> is read as
    context.fields, untyped = typed_fields(
        context.data, context.writes, context.translated, context.refuse, None, compared
    )
    for element in context.computed_events:  # each value an eventexpr can have is an event
        found = context.values_of(element, "eventexpr")
        for value in found[1] if found else ():
            if isinstance(value, str):
                _add_event(context, element, value)
    if context.sends:  # payload types, then the <data> that `_event.data` reads may type
        payloads = [
            (
                event,
                element,
                send_payload(element, context.data_names(), context.translated, context.refuse),
            )
            for event, element in context.sends
            if certain_failure(element, context) is None  # never sent: no payload
        ]
        types = {n: f.type for n, f in context.fields.items()}
        context.payloads = payload_fields(payloads, types, context.refuse)
        every_field = {k: v for fields in context.payloads.values() for k, v in fields.items()}
        context.fields, untyped = typed_fields(
            context.data, context.writes, context.translated, context.refuse, every_field, compared
        )
    context.fields = finalized(context.fields, root)  # a <finalize>'s reads may be null
    declare_raw(context)
    children: list[tuple[str, Translation]] = []
    body = _state(root, (), context, charts=children)
    for problem in untyped:  # after the body: what it cannot express is the better reason
        raise context.refuse(problem.element, problem.message)
    if context.fields:
        chart["context"] = {key: f.spec() for key, f in context.fields.items()}
    chart["events"] = {
        event_name(e): declaration(context.payloads.get(e, {})) for e in context.events
    }
    _raise_at_start(body, context.failed_data, context, root)
    bind_at_start(body, context, root)
    chart.update(body)
    chart["reject"] = {"*": DISCARDED}
    return Translation(chart, tuple(context.notes), tuple(children))


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
        elif child.tag == "invoke":
            index = [id(k) for k in element.kids("invoke")].index(id(child))
            child.attrs["id"] = invoke_id(child, path[-1] if path else "scxml", index, context)
            if child.attrs["id"] in context.invokes:
                raise context.refuse(child, f"a second <invoke> with the id {child.attrs['id']!r}")
            context.invokes.append(child.attrs["id"])
            for event, send in sends_to_parent(child):  # its fields are this chart's event's
                _add_event(context, send, event)
                context.sends.append((event, send))
            if "idlocation" in child.attrs:
                context.writes.append(Write(child.attrs["idlocation"], child, kind=STRING))
        elif child.tag == "foreach":
            _foreach_writes(child, context)
        elif child.tag == "assign" and "expr" in child.attrs:
            location = child.attrs.get("location", "")
            context.writes.append(Write(location, child, child.attrs["expr"]))
        if is_http_send(child):
            collect_http_send(child, context, element)
        if child.tag in ("raise", "send") and "event" in child.attrs:
            _add_event(context, child, child.attrs["event"])
        if (
            child.tag == "send"
            and "event" in child.attrs
            and (child.kids("param", "content") or "namelist" in child.attrs)
        ):
            context.sends.append((child.attrs["event"], child))
        if child.tag == "send" and (may_not_reach(child) or posts_nowhere(child)):
            _add_event(context, child, ERROR_COMMUNICATION)
        if child.tag == "send" and "eventexpr" in child.attrs:
            context.computed_events.append(child)
        if child.tag == "send" and "id" in child.attrs:
            context.send_ids.add(child.attrs["id"])
        if child.tag == "send" and "idlocation" in child.attrs:
            context.send_ids.add(f"send_{child.line}_{child.column}")
            context.writes.append(Write(child.attrs["idlocation"], child, kind=STRING))
        elif child.tag == "transition":
            for descriptor in child.attrs.get("event", "").split():
                if descriptor != "*" and not descriptor.startswith(
                    ("done.state.", "done.invoke", "error")
                ):
                    _add_event(context, child, descriptor.removesuffix(".*").removesuffix("."))
        if child.tag not in _OPAQUE:
            _collect(child, child_path, context, root)


def _foreach_writes(element: Element, context: ImportContext) -> None:
    """A `<foreach>` writes its `item` (an element of its `array`) and its `index` (an
    integer); SCXML declares either when no `<data>` does."""
    array = element.attrs.get("array", "").strip()
    for key, value in (("item", f"({array})[0]"), ("index", None)):
        name = element.attrs.get(key)
        if name is None or not name.isidentifier():  # no name: the <foreach> fails
            continue
        if name not in context.data_names():
            declared = Element("data", {"id": name}, element.line, element.column)
            context.data.append((declared, _data_value(declared, context)))
        kind = None if value else INTEGER
        context.writes.append(Write(name, element, value, kind=kind))


def _add_event(context: ImportContext, element: Element, event: str) -> None:
    if event in context.events or not event:  # `.*` names no event
        return
    name = event_name(event)
    if not _NAME_OK.match(name) or "*" in name:
        raise context.refuse(element, f"the event name {event!r} is not one statekit takes")
    if any(event_name(other) == name for other in context.events):
        raise context.refuse(element, f"the event {event!r} would be named {name!r}, as another")
    context.events.append(event)


def _raise_at_start(
    body: dict[str, Any], reasons: list[str], c: ImportContext, root: Element
) -> None:
    """`error.execution` for each `<data>` that failed, raised first at the start."""
    if not reasons:
        return
    initial = body.get("initial")
    if not isinstance(initial, str) or initial not in body.get("states", {}):
        raise c.refuse(root, "a <data> that fails to evaluate, in this initial configuration")
    state = body["states"][initial]
    raises = [
        {"raise": {"event": ERROR_EXECUTION, "payload": {"reason": quoted(r)}}} for r in reasons
    ]
    state["entry"] = raises + list(state.get("entry", []))


def _data_value(element: Element, context: ImportContext) -> str | None:
    """The expression of a `<data>`'s value; None for none (SCXML's undefined)."""
    name = element.attrs.get("id", "")
    if not re.match(r"^[A-Za-z_][A-Za-z0-9_]*$", name):
        raise context.refuse(element, f"<data id={name!r}>: not a name statekit's context takes")
    if name in context.data_names():
        raise context.refuse(element, f"a second <data> with the id {name!r}")
    if "expr" not in element.attrs:  # a value: inline content or a file (`src`)
        return content_value(element, context.path, context.refuse)
    text = element.attrs["expr"].strip()
    if not_an_expression(text):  # SCXML: error.execution at the start, the data unbound
        context.failed_data.append(f"<data id={name} expr={text}>: not an expression")
        context.note(element, "<data> left unset: its expr is not an expression")
        return None
    return text or None


def _state(
    element: Element,
    path: tuple[str, ...],
    context: ImportContext,
    inherited: tuple[Element, ...] = (),
    *,
    charts: list[tuple[str, Translation]],
) -> dict[str, Any]:
    """The state `element`; `inherited`: its parent's internal transitions to descendants,
    which statekit writes on each child (see `state_transitions.pushed_down`); the
    charts its `<invoke>`s name are added to `charts`."""
    out: dict[str, Any] = {}
    tag = element.tag
    for child in element.children:
        if child.tag == "script" and path:  # `<scxml>`'s own: `scripts.declare_script_names`
            raise context.refuse(child, f"<{child.tag}> is not expressible in statekit")
    if tag == "final":
        out["final"] = True
        if inherited:
            raise context.refuse(
                inherited[0], "an internal transition to a descendant of a state with a <final>"
            )
    if tag == "history":
        return _history(element, context)
    children = element.kids(*_STATES)
    transient: dict[str, Any] | None = None
    if tag == "parallel":
        out["parallel"] = True
    elif children:
        out["initial"], transient = _initial(element, path, children, context)
    entry = effects_of(element.kids("onentry"), context)
    output, failing = final_output(element, context)  # <donedata>: the done event's payload
    entry.extend(failing)
    exit_ = effects_of(element.kids("onexit"), context)
    starting, never_start = split_invocations(element, context)  # <invoke>s that always fail
    invocations = [_invoked(k, context, charts) for k in starting]
    if invocations:
        out["invoke"] = [i.entry for i in invocations]
        entry.extend(effect for i in invocations for effect in i.entry_effects)
    entry.extend(never_start)
    if entry:
        out["entry"] = entry
    if output:
        out["output"] = output
    if exit_:
        out["exit"] = exit_
    compound = bool(children) and tag != "parallel"
    check_short_name(element, context)  # `_event.origintype == 'scxml'`: refused
    out.update(state_transitions(element, path, compound, inherited, context))
    pushed = pushed_down(element, path, context) if compound else ()
    if children:
        states = out["states"] = {}
        if transient is not None:
            states[out["initial"]] = transient
        for c in children:
            kept = pushed if c.tag != "history" else ()
            states[c.attrs["id"]] = _state(c, (*path, c.attrs["id"]), context, kept, charts=charts)
            if c.tag == "history" and "default" not in states[c.attrs["id"]]:
                states[c.attrs["id"]]["default"], states[f"{c.attrs['id']}__default"] = (
                    _history_default(c, tag == "parallel", context)
                )
    return out


def _invoked(
    element: Element, context: ImportContext, children: list[tuple[str, Translation]]
) -> Invoked:
    def child_chart(
        root: Element, path: str, name: str, types: dict[str, ValueType]
    ) -> Translation:
        return chart_of(root, path, name, types)

    invoked = invocation(element, context.chart_name, context, child_chart)
    children.extend(((element.attrs["id"], invoked.child), *invoked.more))
    return invoked


def _history(element: Element, context: ImportContext) -> dict[str, Any]:
    out: dict[str, Any] = {"history": element.attrs.get("type", "shallow")}
    if out["history"] not in ("shallow", "deep"):
        raise context.refuse(element, f"<history type={out['history']!r}>: not shallow or deep")
    for transition in element.kids("transition"):
        if transition.children:
            continue  # its parent writes it (`_history_default`)
        targets = [
            context.state_ref(transition, t) for t in transition.attrs.get("target", "").split()
        ]
        if not targets:
            raise context.refuse(transition, "a history's default transition without a target")
        out["default"] = targets[0] if len(targets) == 1 else targets
    return out


def _history_default(
    element: Element, in_parallel: bool, context: ImportContext
) -> tuple[str, dict[str, Any]]:
    """A history's default transition with content: the default is a transient sibling
    that leaves at once to the targets with the content as effects (SCXML runs it only
    when the default is taken, after the parent's onentry)."""
    transition = element.kids("transition")[0]
    if in_parallel:
        raise context.refuse(
            transition, "a history's default transition with content, in a <parallel>"
        )
    targets = [context.state_ref(transition, t) for t in transition.attrs.get("target", "").split()]
    if not targets:
        raise context.refuse(transition, "a history's default transition without a target")
    name = f"{element.attrs['id']}__default"
    if name in context.ids:
        raise context.refuse(element, f"a state is named {name!r}, the name of its default")
    leave: dict[str, Any] = {"to": targets[0] if len(targets) == 1 else targets}
    leave["do"] = content_of(transition, context)
    context.note(transition, f"the history's default is the transient state {name!r}")
    return name, {"always": [leave]}


def _initial(
    element: Element, path: tuple[str, ...], children: list[Element], context: ImportContext
) -> tuple[str, dict[str, Any] | None]:
    """The `initial:` of a compound state, and the transient state that stands for an
    initial `initial:` cannot name (several states, a history, executable content): it
    is the state's initial child and leaves at once, by an eventless transition, to the
    targets with the content as effects; so it is active for one microstep."""
    targets = element.attrs.get("initial", "").split()
    where, content = element, None
    for initial in element.kids("initial"):
        for transition in initial.kids("transition"):
            targets, where = transition.attrs.get("target", "").split(), transition
            content = transition
    if not targets:
        states = [c for c in children if c.tag != "history"]
        if not states:
            raise context.refuse(element, "a state whose only children are <history>")
        return str(states[0].attrs["id"]), None
    for name in targets:
        target = context.state_ref(where, name)
        below = context.ids[target]
        if below[: len(path)] != path or len(below) == len(path):
            raise context.refuse(where, f"the initial {name!r} is not a descendant")
    effects = content_of(content, context) if content is not None else []
    if len(targets) == 1 and not effects and targets[0] not in context.histories:
        return ".".join(context.ids[targets[0]][len(path) :]), None
    name = f"{element.attrs.get('id', 'scxml')}__initial"
    while name in context.ids:
        name += "_"
    leave: dict[str, Any] = {"to": targets[0] if len(targets) == 1 else targets}
    if effects:
        leave["do"] = effects
    context.note(where, f"the initial is the transient state {name!r} (one microstep)")
    return name, {"always": [leave]}
