"""`statekit run`, `verify` and `outbox` as a shell script uses them, on both stores."""

from __future__ import annotations

import json
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest
from cli_process import statekit
from runner_charts import COUNTER, MACHINES, write_chart

from statekit.runner.outbox import Dispatcher
from statekit.runner.store import open_store

ROOT = Path(__file__).resolve().parents[2]


def lines(*items: object) -> str:
    return "".join((x if isinstance(x, str) else json.dumps(x)) + "\n" for x in items)


def test_run_writes_one_outcome_per_line(store_url: str) -> None:
    chart = str(MACHINES / "payment.yaml")
    done = statekit(
        "run", chart, "--db", store_url,
        stdin=lines(
            {"instance": "p1", "event_id": "e1", "type": "START_PAY", "payload": {"amount": 100}},
            {"instance": "p1", "event_id": "e1", "type": "START_PAY", "payload": {"amount": 100}},
            {"instance": "p1", "event_id": "e1", "type": "START_PAY", "payload": {"amount": 7}},
            "",
            "{not json",
            {"instance": "p1", "event_id": "e2", "type": "PAY_SUCCESS",
             "payload": {"channel_ref": "c"}, "expected_version": 0},
            {"instance": "p1", "event_id": "e2", "type": "PAY_SUCCESS",
             "payload": {"channel_ref": "c"}, "sequence": 3},
            {"instance": "p1", "event_id": "e2", "type": "PAY_SUCCESS",
             "payload": {"channel_ref": "c"}, "expected_version": 1, "sequence": 2},
            {"instance": "p1", "event_id": "e3", "type": "PAY_FAILED", "payload": {"code": "x"}},
            {"instance": "p1", "event_id": "e4", "kind": "PAY_FAILED"},
        ),
    )  # fmt: skip
    assert done.returncode == 1, done.stderr  # two bad lines
    out = [json.loads(line) for line in done.stdout.splitlines()]
    assert [(o["status"], o.get("reason")) for o in out] == [
        ("APPLIED", None),
        ("ALREADY_APPLIED", None),
        ("CONFLICT", "EVENT_ID_PAYLOAD_CONFLICT"),
        ("ERROR", None),
        ("CONFLICT", "VERSION_CONFLICT"),
        ("CONFLICT", "SEQUENCE_GAP"),
        ("APPLIED", None),
        ("REJECTED", "CONFLICTING_RESULT"),
        ("ERROR", None),
    ]
    assert out[3]["line"] == 5 and "not JSON" in out[3]["error"]
    assert out[5]["missing"] == [2, 2]
    assert out[6] == {
        "instance": "p1", "event_id": "e2", "status": "APPLIED", "reason": None, "version": 2,
        "sequence": 2, "state": ["success"], "emitted": ["e2/0"],
    }  # fmt: skip
    assert "unknown field(s) ['kind']" in out[8]["error"]

    verified = statekit("verify", "--db", store_url)
    assert verified.returncode == 0, verified.stdout + verified.stderr
    assert verified.stdout == "p1: ok (version 2, 2 events)\n"

    listed = statekit("outbox", "--db", store_url, "--format", "json")
    assert listed.returncode == 0
    [message] = [json.loads(line) for line in listed.stdout.splitlines()]
    assert (message["message_id"], message["status"], message["type"]) == (
        "e2/0",
        "pending",
        "PaymentSucceeded",
    )


def test_run_batches_an_import_and_refuses_unknown_instances_on_request(
    store_url: str, tmp_path: Path
) -> None:
    chart = str(write_chart(COUNTER, tmp_path, "counter"))
    events = [
        {"instance": f"c{n // 50}", "event_id": f"e{n}", "type": "Incr", "payload": {"by": 1}}
        for n in range(200)
    ]
    source = tmp_path / "events.jsonl"
    source.write_text(lines(*events))
    done = statekit("run", chart, "--db", store_url, "--input", str(source), "--batch", "20")
    assert done.returncode == 0, done.stderr
    out = [json.loads(line) for line in done.stdout.splitlines()]
    assert len(out) == 200 and {o["status"] for o in out} == {"APPLIED"}
    assert [o["version"] for o in out[:50]] == list(range(1, 51))
    refused = statekit(
        "run", chart, "--db", store_url, "--no-create",
        stdin=lines({"instance": "new", "event_id": "x", "type": "Incr", "payload": {"by": 1}}),
    )  # fmt: skip
    assert refused.returncode == 1
    assert json.loads(refused.stdout)["error"] == "unknown instance 'new'"


def test_verify_reports_a_difference_without_choosing_a_side(store_url: str) -> None:
    chart = str(MACHINES / "payment.yaml")
    event = {"instance": "p1", "event_id": "e1", "type": "START_PAY", "payload": {"amount": 5}}
    assert statekit("run", chart, "--db", store_url, stdin=lines(event)).returncode == 0
    store = open_store(store_url)
    with store.write():
        store.execute("UPDATE statekit_instances SET context = REPLACE(context, '5', '6')")
    done = statekit("verify", "--db", store_url)
    assert done.returncode == 1
    assert "p1: DIFFERS" in done.stdout and "context.amount: stored 6, replayed 5" in done.stdout
    assert "6" in store.execute("SELECT context FROM statekit_instances").fetchone()[0]


def test_outbox_lists_dead_messages(store_url: str) -> None:
    chart = str(MACHINES / "payment.yaml")
    events = [
        {"instance": "p1", "event_id": "e1", "type": "START_PAY", "payload": {"amount": 5}},
        {"instance": "p1", "event_id": "e2", "type": "PAY_SUCCESS", "payload": {"channel_ref": ""}},
    ]
    statekit("run", chart, "--db", store_url, stdin=lines(*events))
    Dispatcher(open_store(store_url), {}, max_attempts=1).dispatch_once()
    done = statekit("outbox", "--db", store_url)
    assert done.returncode == 0
    assert done.stdout.startswith("dead     p1 e2/0 PaymentSucceeded attempts=1")
    assert "no handler" in done.stdout and "1 dead in the outbox" in done.stderr


def test_bad_store_url_is_a_usage_error() -> None:
    done = statekit("outbox", "--db", "mysql://x/y")
    assert done.returncode == 2 and "unknown store" in done.stderr


def test_run_reports_lines_the_runner_refuses_and_goes_on(tmp_path: Path) -> None:
    # lines that parse but that `Runner.apply` refuses (a reserved event ID, a sequence
    # below 1, a payload that is not an object) are ERROR lines, not the end of the run
    chart = str(MACHINES / "payment.yaml")
    done = statekit(
        "run", chart, "--db", f"sqlite:///{tmp_path / 'run.db'}",
        stdin=lines(
            {"instance": "p1", "event_id": "statekit.start", "type": "CLOSE"},
            {"instance": "p1", "event_id": "e1", "type": "CLOSE", "sequence": 0},
            {"instance": "p1", "event_id": "e2", "type": "CLOSE", "payload": []},
            {"instance": "p1", "event_id": "e3", "type": "CLOSE", "payload": None},
        ),
    )  # fmt: skip
    assert done.returncode == 1, done.stderr
    out = [json.loads(line) for line in done.stdout.splitlines()]
    assert [(o.get("line"), o["status"]) for o in out] == [
        (1, "ERROR"),
        (2, "ERROR"),
        (3, "ERROR"),
        (None, "APPLIED"),
    ]
    assert "reserved" in out[0]["error"] and "sequence must be at least 1" in out[1]["error"]
    assert "'payload' must be a JSON object" in out[2]["error"]


def test_outbox_lists_a_message_whose_payload_is_damaged(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'out.db'}"
    event = {"instance": "p1", "event_id": "e1", "type": "START_PAY", "payload": {"amount": 5}}
    success = {**event, "event_id": "e2", "type": "PAY_SUCCESS", "payload": {"channel_ref": "c"}}
    statekit("run", str(MACHINES / "payment.yaml"), "--db", url, stdin=lines(event, success))
    store = open_store(url)
    with store.write():
        store.execute("UPDATE statekit_outbox SET payload = '{oops'")
    done = statekit("outbox", "--db", url, "--format", "json")
    assert done.returncode == 0, done.stderr
    [message] = [json.loads(line) for line in done.stdout.splitlines()]
    assert message["message_id"] == "e2/0" and message["payload"] is None
    assert "not valid JSON" in message["payload_error"]


def test_verify_uses_a_stored_chart_only_when_its_source_has_the_recorded_digest(
    store_url: str, tmp_path: Path
) -> None:
    chart = str(write_chart(COUNTER, tmp_path, "counter"))
    event = {"instance": "c1", "event_id": "e1", "type": "Incr", "payload": {"by": 1}}
    assert statekit("run", chart, "--db", store_url, stdin=lines(event)).returncode == 0
    assert statekit("verify", "--db", store_url).returncode == 0  # the stored source replays
    # the stored source now compiles to another chart of the same name and version (one
    # more event declared): the instance never ran on it, so it must not replay it
    store = open_store(store_url)
    [row] = store.charts()
    assert row.source is not None
    tampered = row.source.replace("  Ping: {}\n", "  Ping: {}\n  Pong: {}\n", 1)
    assert tampered != row.source
    with store.write():
        store.execute("UPDATE statekit_charts SET source = ?", (tampered,))
    done = statekit("verify", "--db", store_url)
    assert done.returncode == 1, done.stdout + done.stderr
    assert done.stdout.splitlines()[0::2] == ["store: DIFFERS", "c1: DIFFERS"]
    assert f"stored chart 'counter' version 1 ({row.digest}): its stored source has digest" in (
        done.stdout
    )
    assert "  chart 'counter' is not available: pass it with --chart\n" in done.stdout
    # with the chart given the instance replays; the tampered stored source is still reported
    given = statekit("verify", "--db", store_url, "--chart", chart)
    assert given.returncode == 1 and "c1: ok" in given.stdout
    assert given.stdout.startswith("store: DIFFERS\n  stored chart 'counter' version 1")


@pytest.mark.parametrize("batch", ["2", "5", "64"])
def test_run_batch_across_instances_answers_as_one_line_at_a_time(
    store_url: str, tmp_path: Path, batch: str
) -> None:
    """Interleaved instances, redeliveries (same and other payload), guard rejections,
    stale expected versions, a sequence gap, a bad line and an instance the chart does
    not fit: `--batch N` answers every line as `--batch 1` does, on the same store."""
    chart = str(write_chart(COUNTER, tmp_path, "counter"))
    rows: list[str] = []
    for n in range(60):
        event: dict[str, object] = {
            "instance": f"c{n % 4}",
            "event_id": f"e{n % 40}",
            "type": "Incr",
            "payload": {"by": (n % 5) - 1},
        }
        if n % 11 == 0:
            event["expected_version"] = n % 3
        if n % 17 == 0:
            event["sequence"] = 9
        rows.append(json.dumps(event))
        if n == 30:
            rows.append("{not json")
    one_url = f"sqlite:///{tmp_path / 'one.db'}"
    text = "\n".join(rows) + "\n"
    one = statekit("run", chart, "--db", one_url, "--batch", "1", stdin=text)
    many = statekit("run", chart, "--db", store_url, "--batch", batch, stdin=text)
    assert many.stdout == one.stdout and many.returncode == one.returncode == 1
    answers = [json.loads(line) for line in many.stdout.splitlines()]
    assert {a["status"] for a in answers} >= {"APPLIED", "REJECTED", "CONFLICT", "ERROR"}
    assert any(a.get("duplicate") for a in answers)
    for url in (one_url, store_url):
        verified = statekit("verify", "--db", url, "--chart", chart)
        assert verified.returncode == 0, verified.stdout


NO_START = """\
statechart: no_start
context:
  x: {type: integer, default: 5}
  d: {type: integer, default: 0}
events:
  GO: {}
initial: a
states:
  a:
    entry: [{assign: {x: ctx.x // ctx.d}}]
    on:
      GO: {do: [{assign: {x: 1}}]}
"""


@pytest.mark.parametrize("batch", ["1", "3"])
def test_run_says_why_an_instance_could_not_be_created(tmp_path: Path, batch: str) -> None:
    chart = str(write_chart(NO_START, tmp_path, "no_start"))
    url = f"sqlite:///{tmp_path / 'store.db'}"
    event = {"instance": "x", "event_id": "e1", "type": "GO"}
    done = statekit("run", chart, "--db", url, "--batch", batch, stdin=lines(event, event))
    assert done.returncode == 1, done.stderr
    for answer in map(json.loads, done.stdout.splitlines()):
        assert answer["status"] == "ERROR"
        assert answer["error"].startswith("instance 'x' could not be created: the initial")
        assert "ZeroDivisionError" in answer["error"] and "unknown instance" not in answer["error"]
    refused = statekit("run", chart, "--db", url, "--no-create", stdin=lines(event))
    assert json.loads(refused.stdout)["error"] == "unknown instance 'x'"  # not asked to create


DIVIDES = """\
statechart: divides
context:
  x: {type: integer, default: 5}
events:
  DIV: {by: integer}
initial: a
states:
  a:
    on:
      DIV: {do: [{assign: {x: ctx.x // event.by}}]}
"""


def test_verify_of_evaluation_errors_does_not_depend_on_the_charts_folder(tmp_path: Path) -> None:
    here, elsewhere = tmp_path / "here", tmp_path / "elsewhere" / "deeper"
    (here / "machines").mkdir(parents=True)
    elsewhere.mkdir(parents=True)
    (here / "machines" / "divides.yaml").write_text(DIVIDES, encoding="utf-8")
    url = f"sqlite:///{tmp_path / 'store.db'}"

    def run_in(
        folder: Path, *args: str, stdin: str | None = None
    ) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "statekit.cli", *args],
            cwd=folder, capture_output=True, text=True, input=stdin, check=False,
        )  # fmt: skip

    events = lines(
        {"instance": "d1", "event_id": "e1", "type": "DIV", "payload": {"by": 0}},
        {"instance": "d1", "event_id": "e2", "type": "DIV", "payload": {"by": 1}},
        {"instance": "d1", "event_id": "e3", "type": "DIV", "payload": {"by": 0}},
    )
    done = run_in(here, "run", "machines/divides.yaml", "--db", url, stdin=events)
    answers = [json.loads(line) for line in done.stdout.splitlines()]
    assert [a["reason"] for a in answers] == ["EVALUATION_ERROR", None, "EVALUATION_ERROR"]
    assert "machines" not in answers[0]["message"] and "divides.yaml" not in answers[0]["message"]
    copy = elsewhere / "renamed.yaml"
    copy.write_text(DIVIDES, encoding="utf-8")
    for folder, chart in [
        (here, []),
        (elsewhere, []),
        (here, ["--chart", "machines/divides.yaml"]),
        (elsewhere, ["--chart", "renamed.yaml"]),
        (tmp_path, ["--chart", str(copy)]),
    ]:
        verified = run_in(folder, "verify", "--db", url, *chart)
        assert verified.returncode == 0, (folder, chart, verified.stdout + verified.stderr)
        assert "d1: ok" in verified.stdout


def test_verify_accepts_the_file_naming_message_earlier_versions_stored(tmp_path: Path) -> None:
    # releases up to 0.1.0 wrote `at <chart file>:L:C:` into the rejection row's message
    chart = write_chart(DIVIDES, tmp_path, "divides")
    url = f"sqlite:///{tmp_path / 'store.db'}"
    event = {"instance": "d1", "event_id": "e1", "type": "DIV", "payload": {"by": 0}}
    done = statekit("run", str(chart), "--db", url, stdin=lines(event))
    message = json.loads(done.stdout)["message"]
    assert "at line 10, column 31: " in message
    old = message.replace("at line 10, column 31: ", f"at {tmp_path}/gone/divides.yaml:10:31: ")
    with sqlite3.connect(tmp_path / "store.db") as connection:
        changed = connection.execute("UPDATE statekit_rejections SET message = ?", (old,))
        assert changed.rowcount == 1
    connection.close()
    verified = statekit("verify", "--db", url)
    assert verified.returncode == 0, verified.stdout + verified.stderr
    with sqlite3.connect(tmp_path / "store.db") as connection:  # another position still differs
        connection.execute(
            "UPDATE statekit_rejections SET message = ?", (old.replace(":10:", ":9:"),)
        )
    connection.close()
    assert statekit("verify", "--db", url).returncode == 1
