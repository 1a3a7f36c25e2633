"""Events over HTTP from the outside: a chart's `emit: {type: basichttp}` delivered by
the `Dispatcher` with `HttpPoster` to `event_intake` served by a real uvicorn on
loopback, applied by the `Runner` (SQLite); every bad request answered 4xx by name."""

from __future__ import annotations

import json
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest

import statekit
from statekit.http import HttpDeliveryError, HttpPoster
from statekit.http.intake import event_intake, runner_delivery
from statekit.http.loopback import LoopbackServer
from statekit.runner.outbox import OutboxMessage

HERE = Path(__file__).resolve().parent


@pytest.fixture
def served(tmp_path: Path) -> Iterator[tuple[statekit.Runner, LoopbackServer]]:
    store = statekit.open_store(f"sqlite:///{tmp_path / 'ping.db'}")
    runner = statekit.Runner(statekit.load(HERE / "ping.yaml"), store)
    with LoopbackServer(event_intake(runner.chart, runner_delivery(runner))) as server:
        yield runner, server


def _post(
    url: str, body: bytes, kind: str, key: str | None = None
) -> tuple[int, dict[str, object]]:
    headers = {"Content-Type": kind, **({"Idempotency-Key": key} if key else {})}
    request = urllib.request.Request(url, data=body, method="POST", headers=headers)
    try:
        with urllib.request.urlopen(request, timeout=10) as answer:
            return answer.status, json.loads(answer.read())
    except urllib.error.HTTPError as error:
        return error.code, json.loads(error.read())


def test_an_emitted_message_comes_back_as_an_event_through_the_dispatcher(
    served: tuple[statekit.Runner, LoopbackServer],
) -> None:
    runner, server = served
    runner.create("p-1")
    runner.apply("p-1", "e1", "GO", {"n": 41})
    poster = HttpPoster(lambda m: f"{server.url}/instances/{m.instance_id}/events")
    report = statekit.Dispatcher(runner.store, {"basichttp": poster}).run_until_idle()
    assert report.delivered == 1
    instance = runner.load("p-1")
    assert instance.state.configuration == {"done"}
    assert instance.state.context == {"got": 42, "saw_post": True}
    last = runner.history("p-1")[-1]
    assert (last.type, last.event_id) == ("PONG", "p-1/e1/0")  # the Idempotency-Key
    assert "_scxmleventname=PONG&n=42" in str(last.payload["raw"])


def test_a_redelivered_post_is_already_applied(
    served: tuple[statekit.Runner, LoopbackServer],
) -> None:
    runner, server = served
    runner.create("p-1")
    runner.apply("p-1", "e1", "GO", {"n": 1})
    message = OutboxMessage("p-1", "e1/0", 1, "basichttp", {"_scxmleventname": "PONG", "n": 2}, 1)
    poster = HttpPoster(lambda m: f"{server.url}/instances/{m.instance_id}/events")
    assert poster(message) == 200
    assert poster(message) == 200  # the same key: ALREADY_APPLIED, nothing doubled
    assert [e.type for e in runner.history("p-1")] == ["GO", "PONG"]


def test_a_server_that_is_not_there_fails_the_delivery_and_the_dispatcher_retries(
    tmp_path: Path,
) -> None:
    store = statekit.open_store(f"sqlite:///{tmp_path / 'ping.db'}")
    runner = statekit.Runner(statekit.load(HERE / "ping.yaml"), store)
    runner.create("p-1")
    runner.apply("p-1", "e1", "GO", {"n": 1})
    app = event_intake(runner.chart, runner_delivery(runner))
    server = LoopbackServer(app)
    with server:
        url = f"{server.url}/instances/p-1/events"
    # the server stopped: its port refuses the connection
    now = [1000.0]
    dispatcher = statekit.Dispatcher(
        store, {"basichttp": HttpPoster(lambda _m: url)}, clock=lambda: now[0]
    )
    assert dispatcher.dispatch_once().failed == 1
    assert runner.load("p-1").state.configuration == {"waiting"}
    with LoopbackServer(app) as again:
        dispatcher.handlers["basichttp"] = HttpPoster(
            lambda m: f"{again.url}/instances/{m.instance_id}/events"
        )
        now[0] += 3600  # past the backoff
        assert dispatcher.dispatch_once().delivered == 1
    assert runner.load("p-1").state.configuration == {"done"}


def test_a_location_that_is_not_http_is_refused_before_anything_is_sent() -> None:
    message = OutboxMessage("p-1", "e1/0", 1, "basichttp", {}, 1)
    with pytest.raises(HttpDeliveryError, match="an http:// or https:// URL only"):
        HttpPoster(lambda _m: "ftp://127.0.0.1/x")(message)


FORM = "application/x-www-form-urlencoded"
BAD_REQUESTS = [
    # (path instance, body, content type, status, words in the error)
    ("p-1", b"n=1", "text/plain", 415, "application/x-www-form-urlencoded"),
    ("p-1", b"{not json", "application/json", 400, "not JSON"),
    ("p-1", b"[1, 2]", "application/json", 400, "not an object"),
    ("p-1", b"\xff\xfe", FORM, 400, "not UTF-8"),
    ("p-1", b"n=1", FORM, 422, "give the field '_scxmleventname'"),
    ("p-1", b"_scxmleventname=NOPE", FORM, 422, "declares no event 'NOPE'"),
    ("p-1", b"_scxmleventname=PONG&n=x", FORM, 422, "field 'n': expected integer, got 'x'"),
    ("p-1", b"_scxmleventname=PONG", FORM, 422, "field 'n': required by 'PONG', missing"),
    ("p-1", b"_scxmleventname=PONG&n=1&m=2", FORM, 422, "field 'm': the event 'PONG' has no"),
    ("p-1", b"_scxmleventname=PONG&n=1&n=2", FORM, 422, "field 'n': given 2 times"),
    ("p-1", b"_scxmleventname=PONG&n=1&raw=x", FORM, 422, "field 'raw': filled by the intake"),
    ("p-1", b"_scxmleventname=A&_scxmleventname=B", FORM, 400, "given 2 times"),
    ("nobody", b"_scxmleventname=PONG&n=1", FORM, 404, "no instance 'nobody'"),
    ("p-1", b"_scxmleventname=GO&n=1", FORM, 409, "ALREADY_ASKED"),
    ("p-1", b'{"_scxmleventname": "PONG", "n": "x"}', "application/json", 422, "INVALID_PAYLOAD"),
]


@pytest.mark.parametrize(("instance", "body", "kind", "status", "words"), BAD_REQUESTS)
def test_a_bad_request_gets_a_4xx_naming_what_is_wrong(
    served: tuple[statekit.Runner, LoopbackServer],
    instance: str,
    body: bytes,
    kind: str,
    status: int,
    words: str,
) -> None:
    runner, server = served
    runner.create("p-1")
    runner.apply("p-1", "e1", "GO", {"n": 1})  # waiting: a GO is rejected
    got, answer = _post(f"{server.url}/instances/{instance}/events", body, kind)
    assert got == status, answer
    assert words in json.dumps(answer), answer
    assert [e.type for e in runner.history("p-1")] == ["GO"]


def test_a_json_body_and_a_nullable_form_field_are_taken(
    served: tuple[statekit.Runner, LoopbackServer],
) -> None:
    runner, server = served
    for instance, body, kind in [
        ("a", b'{"_scxmleventname": "PONG", "n": 5, "note": "hi"}', "application/json"),
        ("b", b"_scxmleventname=PONG&n=6&note=", FORM),
    ]:
        runner.create(instance)
        runner.apply(instance, "e1", "GO", {"n": 1})
        status, answer = _post(f"{server.url}/instances/{instance}/events", body, kind, "k")
        assert (status, answer["status"]) == (200, "APPLIED")
    notes = [runner.history(i)[-1].payload["note"] for i in ("a", "b")]
    assert notes == ["hi", None]
