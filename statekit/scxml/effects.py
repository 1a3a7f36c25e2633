"""Executable content (`<onentry>`, `<onexit>`, a transition's content) as statekit
effects: `<raise>`, `<assign>`, `<send>` to this session, `<cancel>`; `<log>` dropped."""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from statekit.compiler.model.evaluation_errors import ERROR_EXECUTION
from statekit.scxml.context import (
    SYSTEM_VARIABLES,
    ImportContext,
    event_name,
    literal,
    quoted,
)
from statekit.scxml.data_types import constant_value
from statekit.scxml.document import Element
from statekit.scxml.failing_loops import first_item_then_failure, foreach_failure
from statekit.scxml.http_sends import http_send, is_http_send
from statekit.scxml.parent_sends import PARENT_TARGET, constant_payload
from statekit.scxml.payloads import send_payload
from statekit.scxml.scripts import script_effects
from statekit.scxml.send_targets import dispatched, may_not_reach

_DELAY = re.compile(r"^\s*(\d*(?:\.\d+)?)\s*(ms|s|m|h|d)\s*$")
_UNIT_MS = {"ms": 1, "s": 1000, "m": 60_000, "h": 3_600_000, "d": 86_400_000}
_IGNORED = {"log"}
_STRINGS = re.compile(r"'[^']*'|\"[^\"]*\"")
_NOT_AN_EXPRESSION = re.compile(r"(?<![=!<>])=(?!=)")  # `1 = 1`: an assignment
Translator = Callable[[Element, ImportContext], list[dict[str, Any]]]
_SCXML_PROCESSOR = "http://www.w3.org/TR/scxml/#SCXMLEventProcessor"
_PROCESSORS = {_SCXML_PROCESSOR, "scxml", "http://www.w3.org/TR/scxml/#BasicHTTPEventProcessor"}


def effects_of(blocks: list[Element], c: ImportContext) -> list[dict[str, Any]]:
    return [effect for block in blocks for effect in content_of(block, c)]


def content_of(block: Element, c: ImportContext, nested: str | None = None) -> list[dict[str, Any]]:
    """The effects of a block; `nested`: the `<if>` or `<foreach>` it is the body of."""
    effects: list[dict[str, Any]] = []
    for element in block.children:
        rest = block.children[block.children.index(element) + 1 :]
        if (failure := certain_failure(element, c)) is not None:
            if nested is not None:  # SCXML stops the block around the <if>/<foreach> too
                raise c.refuse(element, f"{failure}, inside <{nested}>: not expressible")
            # SCXML raises error.execution and runs nothing more of the block
            reason = {"reason": quoted(failure)}
            effects.append({"raise": {"event": ERROR_EXECUTION, "payload": reason}})
            for dropped in rest:
                c.note(dropped, f"<{dropped.tag}> dropped: the <{element.tag}> before it fails")
            break
        if element.tag == "foreach" and nested is None:  # a body that always fails
            loop = first_item_then_failure(element, rest, c, content_of, certain_failure)
            if loop is not None:
                effects.append(loop)
                break
        if element.tag == "raise" and element.attrs.get("event"):
            effects.append({"raise": event_name(element.attrs["event"])})
        elif element.tag == "assign":
            effects.append(_assign(element, c))
        elif element.tag == "if":
            effects.append(_if(element, c))
        elif element.tag == "foreach" and {"array", "item"} <= set(element.attrs):
            effects.append(_foreach(element, c))
        elif element.tag == "send":
            effects.extend(_send(element, c))
        elif element.tag == "cancel" and set(element.attrs) == {"sendid"}:
            if element.attrs["sendid"] in c.send_ids:
                effects.append({"cancel": element.attrs["sendid"]})
            else:  # SCXML cancels only this session's sends: another id does nothing
                c.note(
                    element,
                    f"<cancel sendid={element.attrs['sendid']!r}> dropped: no "
                    "<send> of this document has that id",
                )
        elif element.tag == "cancel" and set(element.attrs) == {"sendidexpr"}:
            effects.extend(_cancel(element, c))
        elif element.tag == "script":
            effects.extend(script_effects(element, c))
        elif element.tag in _IGNORED:
            c.note(element, "<log> dropped: statekit has no log effect")
        else:
            attrs = "".join(f" {k}" for k in sorted(element.attrs))
            raise c.refuse(element, f"<{element.tag}{attrs}> is not expressible in statekit")
    return effects


def _if(element: Element, c: ImportContext) -> dict[str, Any]:
    """`<if cond>A<elseif cond/>B<else/>C</if>`: the markers split the children."""
    branches: list[tuple[Element, list[Element]]] = [(element, [])]
    otherwise: list[Element] | None = None
    for child in element.children:
        if child.tag == "elseif" and otherwise is None:
            branches.append((child, []))
        elif child.tag == "else" and otherwise is None:
            otherwise = []
        elif child.tag in ("elseif", "else"):
            raise c.refuse(child, f"<{child.tag}> after <else>")
        else:
            (otherwise if otherwise is not None else branches[-1][1]).append(child)
    clauses = [
        {
            "cond": c.condition(marker),
            "then": content_of(Element("block", {}, 0, 0, children=kids), c, "if"),
        }
        for marker, kids in branches
    ]
    out: dict[str, Any] = dict(clauses[0])
    if len(clauses) > 1:
        out["elif"] = clauses[1:]
    if otherwise is not None:
        out["else"] = content_of(Element("block", {}, 0, 0, children=otherwise), c, "if")
    return {"if": out}


def _foreach(element: Element, c: ImportContext) -> dict[str, Any]:
    """`<foreach array item index>`: statekit's `foreach`, whose body first assigns its
    read-only locals to the `<data>` SCXML names as `item` and `index` (so they hold
    the last element after the loop, as in SCXML)."""
    where = f"{element.line}_{element.column}"
    local = {"item": f"item_{where}", "index": f"index_{where}"}
    assigns = {element.attrs[k]: v for k, v in local.items() if k in element.attrs}
    written = {k.attrs.get("location") for k in _descendants(element) if k.tag == "assign"}
    reads = {} if written & set(assigns) else {name: local for name, local in assigns.items()}
    before = dict(c.system)
    c.system.update(reads)  # the body reads the local its <data> was just given
    try:
        body = content_of(Element("block", {}, 0, 0, children=element.children), c, "foreach")
    finally:
        c.system.clear()
        c.system.update(before)
    loop: dict[str, Any] = {"array": c.expression(element, "array"), "item": local["item"]}
    if "index" in element.attrs:
        loop["index"] = local["index"]
    loop["do"] = [{"assign": assigns}, *body]
    return {"foreach": loop}


def _descendants(element: Element) -> list[Element]:
    return [d for k in element.children for d in (k, *_descendants(k))]


def _assign(element: Element, c: ImportContext) -> dict[str, Any]:
    location = element.attrs.get("location", "")
    if location not in c.data_names():  # a part of one (`certain_failure` took the rest)
        raise c.refuse(element, f"<assign location={location!r}>: not a declared <data> name")
    if "expr" not in element.attrs:
        raise c.refuse(element, "<assign> with inline content is not expressible")
    return {"assign": {location: c.expression(element, "expr")}}


def _by_value(
    element: Element, attribute: str, c: ImportContext, translate: Translator
) -> list[dict[str, Any]] | None:
    """An `attribute` (eventexpr, delayexpr, sendidexpr) that reads one `<data>` given
    only constants: one `if` branch per value it can have, each the element translated
    with that value written in; None when it is a constant or not of that form."""
    if attribute not in element.attrs:
        return None
    known, _ = constant_value(c.expression(element, attribute), element, c.fields)
    found = None if known else c.values_of(element, attribute)
    if found is None:
        return None
    name, values = found
    branches = []
    for value in values:
        attrs = {**element.attrs, attribute: literal(value)}
        fixed = Element(element.tag, attrs, element.line, element.column, element.namespace)
        fixed.children = element.children
        branches.append({"cond": f"ctx.{name} == {literal(value)}", "then": translate(fixed, c)})
    if not branches:
        return None
    out: dict[str, Any] = dict(branches[0])
    if len(branches) > 1:
        out["elif"] = branches[1:]
    return [{"if": out}]


def _cancel(element: Element, c: ImportContext) -> list[dict[str, Any]]:
    branched = _by_value(element, "sendidexpr", c, _cancel)
    if branched is not None:
        return branched
    sendid = str(c.constant(element, "sendidexpr"))
    if sendid not in c.send_ids:  # another session's id, or none: SCXML cancels nothing
        c.note(element, f"<cancel> of {sendid!r} dropped: no <send> of this document has it")
        return []
    return [{"cancel": sendid}]


def not_an_expression(text: str) -> bool:
    """Whether `text` is an assignment (`1 = 1`), which no datamodel evaluates."""
    return _NOT_AN_EXPRESSION.search(_STRINGS.sub("", text)) is not None


def certain_failure(element: Element, c: ImportContext) -> str | None:
    """Why this `<assign>` or `<send>` fails whenever it runs, for which SCXML raises
    `error.execution` and skips the rest of its block; None when it may succeed.

    An `<assign>` to a system variable or to a location whose name no `<data>`
    declares, or of an expression that is no expression (a bare `=`); a `<send>` of
    a `type` that names no event processor, to a `target` that is no URI, or whose
    `namelist` names no `<data>`."""
    if element.tag == "assign":
        location = element.attrs.get("location", "")
        if location in c.system or location in SYSTEM_VARIABLES:
            return f"<assign location={location}>: a system variable is read-only"
        if location.split(".", 1)[0].strip() not in c.data_names():
            return f"<assign location={location}>: no <data> declares it"
        if not_an_expression(element.attrs.get("expr", "")):
            return f"<assign expr={element.attrs['expr']}>: not an expression"
        return None
    if element.tag == "foreach":
        return foreach_failure(element, c)
    if element.tag != "send":
        return None
    for name in element.attrs.get("namelist", "").split():
        if name not in c.data_names():
            return f"<send namelist>: no <data> {name}"
    kind = element.attrs.get("type")
    if kind is not None and kind not in _PROCESSORS and ":" not in kind:
        return f"<send type={kind}>: no such event processor"
    target = element.attrs.get("target")
    if target is not None and not target.startswith("#") and ":" not in target:
        return f"<send target={target}>: not a target of the SCXML event processor"
    return None


def _send(element: Element, c: ImportContext) -> list[dict[str, Any]]:
    if is_http_send(element):
        return http_send(element, c)
    for attribute in ("eventexpr", "delayexpr", "typeexpr", "targetexpr"):
        branched = _by_value(element, attribute, c, _checked_send)
        if branched is not None:
            return branched
    fixed = _constants_written(element, c)
    if fixed is not element:
        return _checked_send(fixed, c)
    if may_not_reach(element):
        return dispatched(element, c, _checked_send)
    if element.attrs.get("type") == _SCXML_PROCESSOR:
        element.attrs.pop("type")
    allowed = {"event", "eventexpr", "target", "delay", "delayexpr", "id", "idlocation"}
    allowed |= {"namelist"}
    extra = set(element.attrs) - allowed
    others = {f"<{k.tag}>" for k in element.children if k.tag not in ("param", "content")}
    if extra or others:
        what = ", ".join(sorted(extra | others))
        raise c.refuse(element, f"<send> with {what} is not expressible")
    event = _send_event(element, c)
    target = element.attrs.get("target")
    timed = {"delay", "delayexpr", "id", "idlocation"} & set(element.attrs)
    if target == "#_internal" and not timed:
        payload = send_payload(element, c.data_names(), c.translated, c.refuse)
        return [{"raise": {"event": event, "payload": payload} if payload else event}]
    send: dict[str, Any] = {"event": event}
    payload = send_payload(element, c.data_names(), c.translated, c.refuse)
    if payload and "event" not in element.attrs:
        raise c.refuse(element, "<send eventexpr> with data is not expressible")
    to_parent = target == PARENT_TARGET and constant_payload(payload, c.path, element)
    if payload and target not in (None, "#_internal") and not to_parent:
        raise c.refuse(element, f"<send target={target!r}> with data")
    if payload:
        send["payload"] = payload
    if target is not None:
        send["to"] = _send_target(element, target, c)  # delayed: a timer of the sender
    delay = _send_delay(element, c)
    if delay is not None:
        send["delay"] = delay
    effects: list[dict[str, Any]] = [{"send": send}]
    if "id" in element.attrs:
        send["id"] = element.attrs["id"]
    elif "idlocation" in element.attrs:
        location = element.attrs["idlocation"]
        if location not in c.data_names():
            raise c.refuse(element, f"<send idlocation={location!r}>: not a declared <data>")
        send["id"] = f"send_{element.line}_{element.column}"
        effects.append({"assign": {location: quoted(send["id"])}})
    return effects


def _checked_send(element: Element, c: ImportContext) -> list[dict[str, Any]]:
    """The `<send>`, or the `error.execution` it raises when it always fails."""
    failure = certain_failure(element, c)
    if failure is None:
        return _send(element, c)
    return [{"raise": {"event": ERROR_EXECUTION, "payload": {"reason": quoted(failure)}}}]


def _constants_written(element: Element, c: ImportContext) -> Element:
    """The `<send>` with a constant `typeexpr`/`targetexpr` written as `type`/`target`
    (the element itself when it has neither, or they are not constants)."""
    attrs = dict(element.attrs)
    for attribute, written in (("typeexpr", "type"), ("targetexpr", "target")):
        if attribute not in attrs:
            continue
        known, value = constant_value(c.expression(element, attribute), element, c.fields)
        if known:
            del attrs[attribute]
            attrs[written] = value if isinstance(value, str) else literal(value)
    if attrs == element.attrs:
        return element
    fixed = Element(element.tag, attrs, element.line, element.column, element.namespace)
    fixed.children = element.children
    return fixed


def _send_target(element: Element, target: str, c: ImportContext) -> str:
    """`#_parent` (in an invoked document) or `#_<invoke id>` of this document."""
    if target == "#_parent" and c.invoked:
        return "parent"
    if target.startswith("#_") and target[2:] in c.invokes:
        return target[2:]
    raise c.refuse(element, f"<send target={target!r}>: another target is not expressible")


def _send_event(element: Element, c: ImportContext) -> str:
    if "event" in element.attrs:
        return event_name(element.attrs["event"])
    if "eventexpr" not in element.attrs:
        raise c.refuse(element, "<send> without event is not expressible")
    value = c.constant(element, "eventexpr")
    if not isinstance(value, str) or value not in c.events:
        raise c.refuse(
            element, f"<send eventexpr=...> is {value!r}, not an event the document names"
        )
    return event_name(value)


def _send_delay(element: Element, c: ImportContext) -> str | None:
    if "delayexpr" in element.attrs:
        text = c.constant(element, "delayexpr")
    elif "delay" in element.attrs:
        text = element.attrs["delay"]
    else:
        return None
    match = _DELAY.match(text) if isinstance(text, str) else None
    ms = float(match.group(1) or "0") * _UNIT_MS[match.group(2)] if match else -1.0
    if ms < 0 or ms != int(ms):
        raise c.refuse(element, f"<send> with the delay {text!r}: not a delay")
    return f"{int(ms)}ms"
