"""`<send type="...#BasicHTTPEventProcessor">` as statekit's HTTP messages.

SCXML's Basic HTTP Event I/O Processor POSTs an event as form fields to a URL;
`_ioprocessors['basichttp']['location']` is the URL at which this session takes such
POSTs. statekit's engine stays pure: the send is an outbox message of type
`basichttp` (`emit:`), whose payload is the form fields: `_scxmleventname` (the event's
name as statekit names it; absent for a send without an event, which arrives as
`HTTP.POST`), then the `namelist` and `<param>`s, or the `<content>` as the field
`content`. Where it goes is the delivery's setting, not the chart's: `statekit.http.
HttpPoster` posts it to the instance's intake (`statekit.http.intake`), which applies
it as an event, with the raw request in the event's field `raw` (SCXML's
`_event.raw`). So only a send to this session's own location is expressible; another
URL, a delay or an id is refused; a send with no target raises `error.communication`
(there is nowhere to post it). `_event.raw.search(...)` is read by
`statekit.scxml.raw_search`.
"""

from __future__ import annotations

import re

from statekit.compiler.value_types import STRING
from statekit.scxml.context import ImportContext, event_name, quoted
from statekit.scxml.document import Element
from statekit.scxml.payloads import send_payload
from statekit.scxml.send_targets import ERROR_COMMUNICATION

BASIC_HTTP = "http://www.w3.org/TR/scxml/#BasicHTTPEventProcessor"
HTTP_MESSAGE = "basichttp"
"""The `emit:` type of an HTTP event (what a `Dispatcher` maps to an `HttpPoster`)."""
EVENT_NAME_FIELD = "_scxmleventname"
RAW_FIELD = "raw"
UNNAMED_EVENT = "HTTP.POST"
_UNNAMED = "statekit:unnamed"  # no XML attribute has a ':' without a namespace here
_OWN_LOCATION = re.compile(
    r"^\s*_ioprocessors\s*(?:\[\s*(['\"])basichttp\1\s*\]|\.basichttp)"
    r"\s*(?:\[\s*(['\"])location\2\s*\]|\.location)\s*$"
)


def is_http_send(element: Element) -> bool:
    return element.tag == "send" and element.attrs.get("type") in (BASIC_HTTP, "basichttp")


def posts_nowhere(element: Element) -> bool:
    """Whether this is an HTTP `<send>` with no target (it raises `error.communication`)."""
    return is_http_send(element) and not {"target", "targetexpr"} & set(element.attrs)


def collect_http_send(element: Element, context: ImportContext, block: Element) -> None:
    """Before the document's events are collected: a `<param name="_scxmleventname">` of a
    constant string is the send's event; a send without one is `HTTP.POST`. An undelayed
    `<send>` to this session after it in its `block` is refused: the HTTP message leaves
    after the step, so that event would come first, where SCXML's order is the
    platform's."""
    after = block.children[block.children.index(element) + 1 :]
    for later in after:
        timed = {"delay", "delayexpr", "target", "targetexpr", "type"} & set(later.attrs)
        if later.tag == "send" and not timed:
            raise context.refuse(
                later,
                "an undelayed <send> after a <send type=basichttp>: statekit posts HTTP "
                "messages after the step, so this event would arrive first",
            )
    for param in element.kids("param"):
        if param.attrs.get("name") != EVENT_NAME_FIELD:
            continue
        text = param.attrs.get("expr", "").strip()
        if not re.fullmatch(r"'[^'\\]*'|\"[^\"\\]*\"", text) or "event" in element.attrs:
            raise context.refuse(param, f"<param name={EVENT_NAME_FIELD}> that is not a constant")
        element.attrs["event"] = text[1:-1]
        element.children = [k for k in element.children if k is not param]
    if "eventexpr" in element.attrs:
        raise context.refuse(element, "<send type=basichttp> with eventexpr")
    if "event" not in element.attrs:
        element.attrs["event"] = UNNAMED_EVENT
        element.attrs[_UNNAMED] = "true"
    if element.attrs["event"] not in context.http_events:
        context.http_events.append(element.attrs["event"])


def http_send(element: Element, c: ImportContext) -> list[dict[str, object]]:
    """The `emit:` of an HTTP `<send>` (module docstring)."""
    location = element.attrs.get("targetexpr")
    if posts_nowhere(element):
        return [{"raise": event_name(ERROR_COMMUNICATION)}]
    if location is None or not _OWN_LOCATION.match(location):
        where = location or element.attrs.get("target")
        raise c.refuse(element, f"<send type=basichttp targetexpr={where!r}>: another location")
    extra = set(element.attrs) - {"type", "targetexpr", "event", "namelist", _UNNAMED}
    if extra:
        raise c.refuse(element, f"<send type=basichttp> with {', '.join(sorted(extra))}")
    fields: dict[str, str] = {}
    if _UNNAMED not in element.attrs:
        fields[EVENT_NAME_FIELD] = quoted(event_name(element.attrs["event"]))
    fields.update(send_payload(element, c.data_names(), c.translated, c.refuse))
    return [{"emit": {"type": HTTP_MESSAGE, "payload": fields}}]


def declare_raw(context: ImportContext) -> None:
    """Every event an HTTP `<send>` sends has the string field `raw` (`_event.raw`)."""
    for event in context.http_events:
        context.payloads.setdefault(event, {})[RAW_FIELD] = STRING
