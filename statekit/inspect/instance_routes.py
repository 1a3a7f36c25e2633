"""One instance's pages: `GET /instances/{instance_id}` (`?step=N` selects a step) and
`GET /instances/{instance_id}/events.jsonl` (its history as `statekit run` JSON lines).
`?step=N&value=payload|context|message&message=ID` serves one whole value as JSON (the
page shows long values cut to a preview, `value_preview`).

An instance ID is URL-escaped in every link (`layout.instance_href`: a `/` is
`%2F`), so the address of the lines is told from the page of an instance whose
ID ends in `/events.jsonl` by the raw path: only a literal `/` before
`events.jsonl` asks for the lines.
"""

from __future__ import annotations

import json

from starlette.convertors import PathConvertor, register_url_convertor
from starlette.datastructures import QueryParams
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import BaseRoute, Route

from statekit.inspect import live
from statekit.inspect.context import Inspector
from statekit.inspect.instance_page import instance_body
from statekit.inspect.instance_story import InstanceStory, read_story
from statekit.inspect.layout import error_page, page
from statekit.inspect.run_lines_export import RunLines, run_lines, run_lines_count
from statekit.inspect.step_view import StepView, step_view
from statekit.inspect.visible_text import plain_id
from statekit.runner.json_text import parse_json

LINES_SUFFIX = "/events.jsonl"
LINES_MEDIA_TYPE = "application/x-ndjson; charset=utf-8"
JSON_MEDIA_TYPE = "application/json; charset=utf-8"


def routes(inspector: Inspector) -> list[BaseRoute]:
    """`GET /instances/{instance_id}` and `GET /instances/{instance_id}/events.jsonl`."""

    def story_of(instance_id: str) -> InstanceStory | None:
        return read_story(inspector.store(), inspector.charts.values(), instance_id)

    def instance_page(request: Request) -> Response:
        instance_id = request.path_params["instance_id"]
        if _asks_for_lines(request):
            return lines_of(instance_id[: -len(LINES_SUFFIX)])
        store = inspector.store()
        now = live.current(store, instance_id)
        story = story_of(instance_id)
        if story is None:
            return error_page(
                404, "No such instance", f"no instance '{plain_id(instance_id)}' in the store"
            )
        number = _step_number(request.query_params.get("step"), len(story.timeline))
        if number is None:
            return error_page(
                400,
                "No such step",
                f"step must be a whole number from 0 to {len(story.timeline)}, not "
                f"{request.query_params.get('step')!r}",
            )
        view = step_view(story, number)
        if "value" in request.query_params:
            return _raw_value(story, view, request.query_params)
        lines = run_lines_count(story.timeline)
        body = instance_body(story, view, lines, inspector.clock(), _chart_hint(story))
        return page(f"Instance {plain_id(instance_id)}", body, section="instances", live=now)

    def lines_of(instance_id: str) -> Response:
        story = story_of(instance_id)
        if story is None:
            return error_page(
                404, "No such instance", f"no instance '{plain_id(instance_id)}' in the store"
            )
        lines = _lines(story)
        # a header is latin-1: the file name keeps ASCII letters, digits and -_. only
        filename = "".join(
            c if c.isascii() and (c.isalnum() or c in "-_.") else "_" for c in instance_id
        )[:80]
        return Response(
            lines.text,
            media_type=LINES_MEDIA_TYPE,
            headers={"Content-Disposition": f'inline; filename="{filename}.events.jsonl"'},
        )

    return [Route("/instances/{instance_id:any_text}", instance_page, methods=["GET"])]


class AnyText(PathConvertor):
    """Any text, a `/` and line breaks included: an instance ID is whatever the runner
    accepts, and Starlette's `path` (`.*`, without DOTALL) stops at a newline."""

    regex = "(?s:.*)"


register_url_convertor("any_text", AnyText())


def _asks_for_lines(request: Request) -> bool:
    """Whether the raw path ends in a literal `/events.jsonl` (not an escaped `%2F`)."""
    raw = request.scope.get("raw_path")
    path = raw.decode("latin-1") if isinstance(raw, bytes) else request.url.path
    return path.split("?", 1)[0].endswith(LINES_SUFFIX) and request.path_params[
        "instance_id"
    ].endswith(LINES_SUFFIX)


def _raw_value(story: InstanceStory, view: StepView, params: QueryParams) -> Response:
    """One whole value the page shows a preview of (`value_preview.raw_value_href`), as
    the store holds it: served as text, never drawn, so no size makes a page unusable."""
    value = params.get("value")
    if value == "payload" and view.entry is not None:
        return Response(view.entry.payload_text, media_type=JSON_MEDIA_TYPE)
    if value == "context" and view.after is not None:
        text = json.dumps(dict(view.after.context), ensure_ascii=False, sort_keys=True, default=str)
        return Response(text, media_type=JSON_MEDIA_TYPE)
    if value == "message":
        for message in story.outbox:
            if message.message_id == params.get("message"):
                return Response(message.payload, media_type=JSON_MEDIA_TYPE)
    return error_page(
        404,
        "No such value",
        f"value must be payload (a step with an event), context (a step with a state) or "
        f"message (with message=ID of one of its messages), not {value!r}",
    )


def _no_such_instance(instance_id: str) -> Response:
    shown = plain_id(instance_id)
    return error_page(404, "No such instance", f"no instance '{shown}' in the store")


def _step_number(text: str | None, count: int) -> int | None:
    """The step asked for (the last one when none is), None when it is not a number in
    0..count."""
    if text is None or text == "":
        return count
    if not text.isdigit() or len(text) > 12:
        return None
    number = int(text)
    return number if number <= count else None


def _lines(story: InstanceStory) -> RunLines:
    try:
        context = parse_json(story.row.initial_context)
    except ValueError:
        context = None
    return run_lines(story.row.instance_id, context, story.timeline)


def _chart_hint(story: InstanceStory) -> str:
    """How the reproduction command names the chart (its file is not known to the store)."""
    return f"chart {story.row.chart_name!r} version {story.row.chart_version}"
