"""`event_intake`: an HTTP endpoint that takes events for a chart's instances.

    app = event_intake(runner.chart, runner_delivery(runner))
    uvicorn.run(app, host="127.0.0.1", port=8000)

`POST /instances/{instance_id}/events` with a form body (`application/x-www-form-
urlencoded`) or a JSON object. The field `_scxmleventname` names the event (SCXML's
Basic HTTP Event I/O Processor); without it the event is `unnamed_event` (SCXML's
`HTTP.POST`; None: the request is refused). The other fields are the event's payload:
a form's text values are read as the types the chart declares for the event's fields
(`statekit.http.form_fields`), a JSON object's values are taken as they are (the step
checks them). When the event declares a string field named `raw_field` (`raw`), the
intake fills it with the request as text (request line, headers, body), SCXML's
`_event.raw`. The header `Idempotency-Key`, when given, is the event ID (what
`HttpPoster` sends), so a redelivered POST is `ALREADY_APPLIED`; else a fresh one.

The event goes to `deliver` (sync, run off the event loop): `runner_delivery(runner)`
applies it with `Runner.apply`. Answers are JSON: 200 `{"status": "APPLIED" |
"ALREADY_APPLIED", "version"}`; 409 for `REJECTED`/`CONFLICT` with its reason and
message (422 for `INVALID_PAYLOAD`: a JSON value of the wrong type); 404 for an
unknown instance; 415 for another content type; 400 for a body that is not a form or a
JSON object, or over `max_body` bytes; 422 for an event the chart does not declare or
a field it cannot take, naming the field. Never a traceback.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import parse_qsl

from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route

from statekit.engine.chart import Chart
from statekit.http.form_fields import FormFieldError, typed_payload
from statekit.runner.errors import RunnerError, UnknownInstanceError
from statekit.runner.outcome import OutcomeStatus
from statekit.runner.runner import Runner

EVENT_NAME_FIELD = "_scxmleventname"
MAX_BODY = 1 << 20


@dataclass(frozen=True, slots=True)
class IntakeEvent:
    """One event taken from a request, for `deliver`."""

    instance_id: str
    event_id: str
    type: str
    payload: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class IntakeAnswer:
    """What `deliver` answers: the HTTP status and the JSON body."""

    status: int
    body: dict[str, Any]


Deliver = Callable[[IntakeEvent], IntakeAnswer]


def runner_delivery(runner: Runner) -> Deliver:
    """`deliver` that applies each event with `runner.apply` (module docstring)."""

    def deliver(event: IntakeEvent) -> IntakeAnswer:
        try:
            outcome = runner.apply(event.instance_id, event.event_id, event.type, event.payload)
        except UnknownInstanceError:
            return IntakeAnswer(404, {"error": f"no instance {event.instance_id!r}"})
        except (RunnerError, ValueError) as error:
            return IntakeAnswer(422, {"error": str(error)})
        body: dict[str, Any] = {"status": outcome.status.value, "version": outcome.version}
        if outcome.status in (OutcomeStatus.APPLIED, OutcomeStatus.ALREADY_APPLIED):
            return IntakeAnswer(200, body)
        status = 422 if outcome.reason == "INVALID_PAYLOAD" else 409  # the body's fault
        return IntakeAnswer(status, {**body, "reason": outcome.reason, "message": outcome.message})

    return deliver


def event_intake(
    chart: Chart,
    deliver: Deliver,
    *,
    unnamed_event: str | None = None,
    raw_field: str = "raw",
    max_body: int = MAX_BODY,
) -> Starlette:
    """The Starlette app (module docstring)."""

    async def take(request: Request) -> JSONResponse:
        body = await request.body()
        if len(body) > max_body:
            return _error(400, f"the body is {len(body)} bytes, over the limit of {max_body}")
        try:
            event = _event(request, body, chart, unnamed_event, raw_field)
        except _Refused as refused:
            return _error(refused.status, str(refused))
        answer = await run_in_threadpool(deliver, event)
        return JSONResponse(answer.body, status_code=answer.status)

    return Starlette(routes=[Route("/instances/{instance_id}/events", take, methods=["POST"])])


class _Refused(ValueError):
    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status


def _error(status: int, message: str) -> JSONResponse:
    return JSONResponse({"error": message}, status_code=status)


def _event(
    request: Request, body: bytes, chart: Chart, unnamed: str | None, raw_field: str
) -> IntakeEvent:
    kind = request.headers.get("content-type", "").split(";")[0].strip().lower()
    try:
        text = body.decode("utf-8")
    except UnicodeDecodeError as error:
        raise _Refused(400, f"the body is not UTF-8 (byte {error.start})") from None
    pairs: list[tuple[str, str]] = []
    values: dict[str, Any] = {}
    if kind == "application/x-www-form-urlencoded":
        try:
            pairs = parse_qsl(text, keep_blank_values=True, strict_parsing=bool(text))
        except ValueError as error:
            raise _Refused(400, f"the body is not form fields: {error}") from None
    elif kind == "application/json":
        try:
            parsed = json.loads(text)
        except ValueError as error:
            raise _Refused(400, f"the body is not JSON: {error}") from None
        if not isinstance(parsed, dict):
            raise _Refused(400, "the JSON body is not an object of fields")
        values = parsed
    else:
        raise _Refused(
            415,
            f"Content-Type {kind or 'none'!r}: send application/x-www-form-urlencoded "
            "or application/json",
        )
    names = [v for k, v in pairs if k == EVENT_NAME_FIELD]
    named = values.pop(EVENT_NAME_FIELD, names[0] if len(names) == 1 else None)
    if len(names) > 1:
        raise _Refused(400, f"the field {EVENT_NAME_FIELD!r} is given {len(names)} times")
    name = named if named is not None else unnamed
    if name is None:
        raise _Refused(422, f"no event: give the field {EVENT_NAME_FIELD!r}")
    declared = chart.ir.events.get(name) if isinstance(name, str) else None
    if declared is None:
        raise _Refused(422, f"the chart {chart.name!r} declares no event {name!r}")
    types = declared.field_types()
    raw_type = types.get(raw_field)
    given = {raw_field: _raw(request, text)} if raw_type and raw_type.base.value == "string" else {}
    form = [(k, v) for k, v in pairs if k != EVENT_NAME_FIELD]
    try:
        if kind == "application/json":
            if raw_field in values and given:
                raise FormFieldError(f"field {raw_field!r}: filled by the intake, not by the body")
            payload = {**values, **given}
        else:
            payload = typed_payload(form, declared, given)
    except FormFieldError as error:
        raise _Refused(422, str(error)) from None
    instance_id = request.path_params["instance_id"]
    event_id = request.headers.get("idempotency-key") or f"http-{uuid.uuid4().hex}"
    return IntakeEvent(instance_id, event_id, name, payload)


def _raw(request: Request, body: str) -> str:
    """The request as text: request line, headers, an empty line, the body."""
    target = request.url.path + (f"?{request.url.query}" if request.url.query else "")
    version = request.scope.get("http_version", "1.1")
    lines = [f"{request.method} {target} HTTP/{version}"]
    lines.extend(f"{k.decode('latin-1')}: {v.decode('latin-1')}" for k, v in request.headers.raw)
    return "\r\n".join(lines) + "\r\n\r\n" + body
