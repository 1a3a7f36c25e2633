"""The instance page over a store filled like `make demo`, through Starlette's TestClient:
the timeline, every step's highlighted states against the history replayed through the
public API, the context diff, effects, messages, verify, the timers, and the history as
`statekit run` JSON lines reproducing the instance in a fresh store."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path

import pytest
from cli_process import ROOT, statekit
from replayed_steps import PAYMENT, expected_steps
from starlette.testclient import TestClient

import statekit as sk
from statekit.inspect.app import create_app
from statekit.inspect.context import Inspector
from statekit.inspect.layout import instance_href

pytest_plugins = ("inspect_fixtures",)

_STATE_GROUP = re.compile(r'<g id="[^"]*" class="(?:node|cluster) state s_(\d+)([^"]*)">')
_EDGE_GROUP = re.compile(r'<g id="[^"]*" class="edge transition((?: t_\d+)+)([^"]*)">')


@pytest.fixture
def client(demo_inspector: Inspector) -> Iterator[TestClient]:
    with TestClient(create_app(demo_inspector)) as test_client:
        yield test_client


def highlighted(page: str, mark: str) -> frozenset[int]:
    """The state ids whose SVG group carries the class `mark`."""
    return frozenset(int(sid) for sid, extra in _STATE_GROUP.findall(page) if mark in extra.split())


def taken(page: str) -> frozenset[int]:
    """The transition ids of the edges drawn as taken."""
    return frozenset(
        int(t)
        for ids, extra in _EDGE_GROUP.findall(page)
        if "taken" in extra.split()
        for t in re.findall(r"t_(\d+)", ids)
    )


def test_every_step_highlights_the_states_of_the_replayed_history(
    client: TestClient, demo_url: str
) -> None:
    steps = expected_steps(demo_url, "pay-1")
    assert len(steps) == 1 + 6 + 2  # the creation, six accepted events, two rejections
    for number, (event_id, before, after) in enumerate(steps):
        page = client.get(f"/instances/pay-1?step={number}")
        assert page.status_code == 200
        assert f'data-step="{number}"' in page.text
        assert highlighted(page.text, "after") == after, number
        assert highlighted(page.text, "before") == before, number
        if event_id:
            assert f'<code><bdi class="id">{event_id}</bdi></code>' in page.text
    # no step asked: the newest
    assert 'data-step="8"' in client.get("/instances/pay-1").text


def test_a_step_shows_its_transition_context_diff_effects_and_messages(
    client: TestClient,
) -> None:
    page = client.get("/instances/pay-1?step=2").text  # e2: PAY_SUCCESS, processing → success
    chart = sk.load(PAYMENT)
    success = next(t.id for t in chart.ir.transitions if t.event == "PAY_SUCCESS")
    assert taken(page) == {success}
    diff = page[page.index('class="context-diff"') :]
    assert "<code>channel_ref</code>" in diff and "&#34;ch-77&#34;" in diff
    assert "<code>refundable</code>" in diff
    assert "processing --PAY_SUCCESS--&gt; success" in page
    messages = page[page.index('class="messages"') :]
    assert "<code>e2/0</code>" in messages and "PaymentSucceeded" in messages
    assert "cancelled timer <code>after(15m)@processing</code>" in page
    rejected = client.get("/instances/pay-1?step=4").text  # e4: the refund over the limit
    assert "REFUND_EXCEEDS_REFUNDABLE" in rejected and taken(rejected) == frozenset()
    assert "unchanged" in rejected[rejected.index("<h3>Context</h3>") :]


def test_the_timeline_lists_every_kind_the_store_recorded(client: TestClient) -> None:
    page = client.get("/instances/pay-1").text
    timeline = page[
        page.index('class="timeline"') : page.index("</table>", page.index('class="timeline"'))
    ]
    kinds = re.findall(r'<tr class="kind-([a-z-]+)', timeline)
    assert kinds == [
        "applied",
        "applied",
        "already-applied",
        "rejected",
        "applied",
        "applied",
        "applied",
        "rejected",
    ]
    assert "LATE_SUCCESS_AFTER_CLOSE" in timeline
    assert 'class="verify ok"' in page
    assert "not on the timeline" in page  # what the store does not record, said
    pay2 = client.get("/instances/pay-2").text
    assert "PAYMENT_NOT_STARTED" in pay2 and "INVALID_PAYLOAD" in pay2


def test_armed_timers_show_due_time_and_time_left(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'timers.db'}"
    line = {"instance": "t-1", "event_id": "a", "type": "START_PAY", "payload": {"amount": 5}}
    done = statekit(
        "run", str(PAYMENT), "--db", url, "--now", "1000000", stdin=json.dumps(line) + "\n"
    )
    assert done.returncode == 0, done.stderr
    due = 1000 + 15 * 60  # seconds: the 15-minute timeout of `processing`
    inspector = Inspector(url, clock=lambda: due - 125.0)
    with TestClient(create_app(inspector)) as test_client:
        page = test_client.get("/instances/t-1").text
    inspector.close()
    timers = page[page.index('class="timers"') :].replace("<wbr>", "")
    assert "after(15m)@processing" in timers
    assert "1970-01-01 00:31:40.000Z" in timers  # 1,900 s after the epoch
    assert "2m 5s" in timers


def test_the_json_lines_reproduce_the_instance_in_a_fresh_store(
    client: TestClient, demo_url: str, tmp_path: Path
) -> None:
    for instance_id in ("pay-1", "pay-2"):
        answer = client.get(instance_href(instance_id) + "/events.jsonl")
        assert answer.status_code == 200
        assert answer.headers["content-type"].startswith("application/x-ndjson")
        path = tmp_path / f"{instance_id}.jsonl"
        path.write_text(answer.text)
        fresh = f"sqlite:///{tmp_path / (instance_id + '.db')}"
        done = statekit("run", str(PAYMENT), "--db", fresh, "--input", str(path))
        assert done.returncode in (0, 1), done.stderr  # 1: the history's rejections
        chart = sk.load(PAYMENT)
        with sk.open_store(demo_url) as original, sk.open_store(fresh) as copy:
            was, now = sk.Runner(chart, original), sk.Runner(chart, copy)
            first, second = was.load(instance_id), now.load(instance_id)
            assert second.version == first.version
            assert second.state.configuration == first.state.configuration
            assert dict(second.state.context) == dict(first.state.context)
            reasons = [(r["event_id"], r["reason"]) for r in was.rejections(instance_id)]
            assert [(r["event_id"], r["reason"]) for r in now.rejections(instance_id)] == reasons


def test_an_instance_id_ending_in_events_jsonl_is_a_page_not_lines(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'odd.db'}"
    odd = "a/events.jsonl"
    lines = [
        {"instance": odd, "event_id": "x", "type": "START_PAY", "payload": {"amount": 1}},
        {"instance": "a", "event_id": "y", "type": "CLOSE", "payload": {}},
    ]
    done = statekit(
        "run", str(PAYMENT), "--db", url, stdin="".join(json.dumps(x) + "\n" for x in lines)
    )
    assert done.returncode == 0, done.stderr
    inspector = Inspector(url)
    with TestClient(create_app(inspector)) as test_client:
        page = test_client.get(instance_href(odd))
        assert page.headers["content-type"].startswith("text/html")
        assert '<code><bdi class="id">a/events.jsonl</bdi></code>' in page.text
        of_a = test_client.get(instance_href("a") + "/events.jsonl")
        assert of_a.headers["content-type"].startswith("application/x-ndjson")
        assert [json.loads(x)["event_id"] for x in of_a.text.splitlines()] == ["y"]
    inspector.close()


@pytest.mark.parametrize("step", ["9", "-1", "x", "1.5", "99999999999999999"])
def test_a_step_out_of_range_is_a_clear_400(client: TestClient, step: str) -> None:
    page = client.get(f"/instances/pay-1?step={step}")
    assert page.status_code == 400
    assert "step must be a whole number from 0 to 8" in page.text


def test_an_unknown_instance_is_a_404_on_both_addresses(client: TestClient) -> None:
    for path in ("/instances/nope", "/instances/nope/events.jsonl"):
        page = client.get(path)
        assert page.status_code == 404
        assert "no instance &#39;nope&#39; in the store" in page.text


def test_a_timer_delivery_is_a_step_of_its_own(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'timer.db'}"
    line = {"instance": "t-2", "event_id": "a", "type": "START_PAY", "payload": {"amount": 5}}
    done = statekit(
        "run", str(PAYMENT), "--db", url, "--now", "1000000", stdin=json.dumps(line) + "\n"
    )
    assert done.returncode == 0, done.stderr
    due = 1_000_000 + 15 * 60 * 1000
    fired = statekit("worker", "--db", url, "--chart", str(PAYMENT), "--once", "--now", str(due))
    assert fired.returncode == 0, fired.stderr
    chart = sk.load(PAYMENT)
    timeout = next(t.id for t in chart.ir.transitions if t.event == "after(15m)@processing")
    inspector = Inspector(url)
    with TestClient(create_app(inspector)) as test_client:
        page = test_client.get("/instances/t-2?step=2").text
        lines = test_client.get("/instances/t-2/events.jsonl").text
    inspector.close()
    assert '<tr class="kind-timer selected"' in page
    ids = chart.ir.path_index
    assert highlighted(page, "before") == {ids["processing"]}
    assert highlighted(page, "after") == {ids["closed"]}
    assert taken(page) == {timeout}
    assert "PaymentTimedOut" in page and 'class="verify ok"' in page
    assert [json.loads(x)["event_id"] for x in lines.splitlines()] == ["a"]
    assert "1 x timer" in page  # what the lines leave out, said


def test_a_migration_is_a_step_drawn_on_the_newer_version(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'tasks.db'}"
    old, new = ROOT / "tests" / "charts" / "task_v1.yaml", ROOT / "machines" / "task.yaml"
    line = {
        "instance": "t-42",
        "event_id": "e1",
        "type": "TaskStarted",
        "payload": {"attempt": 1, "worker_id": "w1", "lease_until_ms": 4102444800000},
    }
    done = statekit("run", str(old), "--db", url, stdin=json.dumps(line) + "\n")
    assert done.returncode == 0, done.stderr
    moved = statekit("migrate", "--db", url, "--chart", str(new), "--instance", "t-42")
    assert moved.returncode == 0, moved.stderr
    newer = sk.load(new)
    with sk.open_store(url) as store:
        expected = sk.Runner(newer, store).load("t-42").state.active_ids
    inspector = Inspector(url)  # both versions drawn from the sources the store kept
    with TestClient(create_app(inspector)) as test_client:
        page = test_client.get("/instances/t-42?step=2").text
        lines = test_client.get("/instances/t-42/events.jsonl").text
    inspector.close()
    assert '<tr class="kind-migration selected"' in page
    assert highlighted(page, "after") == expected
    assert f'href="/charts/task/{newer.version}"' in page and 'class="verify ok"' in page
    assert [json.loads(x)["event_id"] for x in lines.splitlines()] == ["e1"]
    assert "1 x migration" in page
