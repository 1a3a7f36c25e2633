"""The command line a team scripts against, through the real command in a pipe: `run`'s
creation context and first events, `worker --now`, `timers --chart/--instance`, folders
of charts, and `explain` and `diff` as plain text (both stores where a store is used)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest
import runner_charts
from cli_process import ROOT, statekit
from runner_charts import COUNTER, LEASE, chart_from

from statekit.runner.runner import Runner
from statekit.runner.store import open_store

PAST = 1_000_000  # epoch ms: the creation clock of the instances these tests arm timers on


def write_chart(text: str, folder: Path, name: str) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    return runner_charts.write_chart(text, folder, name)


def lines(*items: object) -> str:
    return "".join(json.dumps(x) + "\n" for x in items)


def answers(text: str) -> list[dict[str, object]]:
    return [json.loads(line) for line in text.splitlines()]


def stored(url: str) -> list[str]:
    store = open_store(url)
    try:
        with store.read():
            return store.instance_ids()
    finally:
        store.close()


def incr(instance: str, event_id: str, by: int = 1, **extra: object) -> dict[str, object]:
    line = {"instance": instance, "event_id": event_id, "type": "Incr", "payload": {"by": by}}
    return {**line, **extra}


def test_run_creates_an_instance_with_the_context_its_line_gives(
    store_url: str, tmp_path: Path
) -> None:
    chart = str(write_chart(COUNTER, tmp_path, "counter"))
    done = statekit(
        "run", chart, "--db", store_url,
        stdin=lines(
            incr("a", "e1", 2, context={"total": 40}),
            incr("b", "e1", context={"totl": 40}),
            incr("c", "e1", context={"total": "many"}),
            incr("d", "e1", context=[1]),
            incr("a", "e2", 1, context={"total": 0}),  # a exists: its context stays
        ),
    )  # fmt: skip
    assert done.returncode == 1, done.stderr
    out = answers(done.stdout)
    assert [o["status"] for o in out] == ["APPLIED", "ERROR", "ERROR", "ERROR", "APPLIED"]
    assert out[1]["error"] == "instance 'b' could not be created: unknown context field(s) 'totl'"
    assert out[2]["error"] == (
        "instance 'c' could not be created: context field 'total': expected integer, got string"
    )
    assert out[3] == {"line": 4, "status": "ERROR", "error": "'context' must be a JSON object"}
    assert "Traceback" not in done.stderr
    assert stored(store_url) == ["a"]
    runner = Runner(chart_from(COUNTER), open_store(store_url))
    assert runner.load("a").state.context["total"] == 43


def test_run_refuses_a_context_with_no_create(store_url: str, tmp_path: Path) -> None:
    chart = str(write_chart(COUNTER, tmp_path, "counter"))
    done = statekit(
        "run", chart, "--db", store_url, "--no-create",
        stdin=lines(incr("a", "e1", context={"total": 1})),
    )  # fmt: skip
    assert done.returncode == 1
    [out] = answers(done.stdout)
    assert "--no-create" in str(out["error"]) and out["status"] == "ERROR"


@pytest.mark.parametrize("batch", ["1", "4"])
def test_a_malformed_first_event_creates_nothing(
    store_url: str, tmp_path: Path, batch: str
) -> None:
    chart = str(write_chart(COUNTER, tmp_path, "counter"))
    done = statekit(
        "run", chart, "--db", store_url, "--batch", batch,
        stdin=lines(
            {"instance": "s1", "event_id": "e1", "type": "SCAN"},
            incr("s2", "e1", payload={"by": "x"}),
            incr("s3", "e1", sequence=4),
            incr("s4", "e1", expected_version=2),
            incr("s5", "e1", -1),  # the chart's guard rejects it: recorded on s5
            {"instance": "s1", "event_id": "e2", "type": "Incr", "payload": {"by": 1}},
        ),
    )  # fmt: skip
    assert done.returncode == 1, done.stderr
    out = answers(done.stdout)
    assert [(o["status"], o.get("reason")) for o in out] == [
        ("ERROR", None),
        ("ERROR", None),
        ("ERROR", None),
        ("ERROR", None),
        ("REJECTED", "NOT_POSITIVE"),
        ("APPLIED", None),
    ]
    assert out[0]["error"] == (
        "instance 's1' could not be created: its first event is not one the chart takes "
        "(UNKNOWN_EVENT): event 'SCAN' is not declared in chart 'counter' v1"
    )
    assert "(INVALID_PAYLOAD)" in str(out[1]["error"])
    assert "sequence is 4" in str(out[2]["error"])
    assert "expects version 2" in str(out[3]["error"])
    assert stored(store_url) == ["s1", "s5"]


def test_an_event_for_an_instance_of_an_earlier_version_names_that_version(
    store_url: str, tmp_path: Path
) -> None:
    old = str(write_chart(COUNTER, tmp_path, "counter"))
    new_text = COUNTER.replace("version: 1", "version: 2").replace(
        "  Ping: {}", "  Ping: {}\n  Reset: {}"
    )
    new = str(write_chart(new_text, tmp_path / "v2", "counter"))
    assert statekit("run", old, "--db", store_url, stdin=lines(incr("a", "e1"))).returncode == 0
    done = statekit(
        "run", new, "--db", store_url,
        stdin=lines({"instance": "a", "event_id": "e2", "type": "Reset"}),
    )  # fmt: skip
    [out] = answers(done.stdout)
    assert out["message"] == "event 'Reset' is not declared in chart 'counter' v1"


def armed(url: str) -> None:
    """Instance `l` of LEASE, started at PAST: `reminder` due at PAST + 10s and the
    `after(30s)` timer at PAST + 30s."""
    runner = Runner(chart_from(LEASE), open_store(url), clock=lambda: PAST)
    runner.create("l")
    runner.apply("l", "s", "Start")
    runner.store.close()


def test_worker_once_now_delivers_what_is_due_by_then(store_url: str, tmp_path: Path) -> None:
    armed(store_url)
    charts = tmp_path / "charts"
    write_chart(LEASE, charts, "lease")
    write_chart(COUNTER, charts, "counter")
    first = statekit(
        "worker", "--db", store_url, "--chart", str(charts), "--once", "--now", str(PAST + 20_000)
    )
    assert first.returncode == 0, first.stderr
    assert "delivering the timers of counter v1, lease v1" in first.stderr
    assert [o["event_id"] for o in answers(first.stdout)] == ["statekit.timer/reminder/2"]
    left = statekit("timers", "--db", store_url, "--format", "json")
    assert [(t["timer"], t["due_ms"]) for t in answers(left.stdout)] == [
        ("after(30s)@running", PAST + 30_000)
    ]
    later = statekit(
        "worker", "--db", store_url, "--chart", str(charts), "--once", "--now", str(PAST + 30_000)
    )
    assert [o["state"] for o in answers(later.stdout)] == [["expired"]]


def test_worker_now_is_a_clock_reading(store_url: str, tmp_path: Path) -> None:
    chart = str(write_chart(LEASE, tmp_path, "lease"))
    for bad in ("-1", "soon", str(2**63)):
        done = statekit("worker", "--db", store_url, "--chart", chart, "--once", "--now", bad)
        assert done.returncode == 2 and "--now" in done.stderr, done.stderr
        assert "Traceback" not in done.stderr


def test_timers_filters_by_chart_and_instance_and_shows_the_chart(
    store_url: str, tmp_path: Path
) -> None:
    armed(store_url)
    lease = write_chart(LEASE, tmp_path / "charts", "lease")
    counter = write_chart(COUNTER, tmp_path / "others", "counter")
    everything = statekit("timers", "--db", store_url)
    assert everything.stdout.splitlines()[0].startswith("l  lease v1  reminder  due ")
    by_chart = statekit(
        "timers", "--db", store_url, "--chart", str(lease.parent), "--format", "json"
    )
    assert {t["chart"] for t in answers(by_chart.stdout)} == {"lease"}
    assert len(answers(by_chart.stdout)) == 2
    none = statekit("timers", "--db", store_url, "--chart", str(counter))
    assert none.stdout == "" and "0 timer(s) armed" in none.stderr
    other = statekit("timers", "--db", store_url, "--instance", "nobody", "--format", "json")
    assert other.returncode == 0 and other.stdout == ""
    one = statekit("timers", "--db", store_url, "--instance", "l", "--format", "json")
    assert [t["instance"] for t in answers(one.stdout)] == ["l", "l"]


def test_verify_takes_a_folder_of_charts(store_url: str, tmp_path: Path) -> None:
    armed(store_url)
    write_chart(LEASE, tmp_path / "charts", "lease")
    done = statekit("verify", "--db", store_url, "--chart", str(tmp_path / "charts"))
    assert done.returncode == 0, done.stdout + done.stderr
    empty = tmp_path / "empty"
    empty.mkdir()
    refused = statekit("verify", "--db", store_url, "--chart", str(empty))
    assert refused.returncode == 2 and "no chart files in this folder" in refused.stderr


LONG_NAMES = """
statechart: billing
version: 1
initial: active
events:
  INVOICE_GENERATION_REQUESTED_BY_THE_SCHEDULER: {}
states:
  active:
    initial: invoicing_the_customer_for_the_current_period
    states:
      invoicing_the_customer_for_the_current_period:
        on:
          INVOICE_GENERATION_REQUESTED_BY_THE_SCHEDULER: waiting_for_the_payment_of_the_invoice
      waiting_for_the_payment_of_the_invoice: {}
"""


def test_explain_in_a_pipe_writes_every_name_whole(tmp_path: Path) -> None:
    chart = str(write_chart(LONG_NAMES, tmp_path, "billing"))
    done = statekit("explain", chart, env={**os.environ, "COLUMNS": "40"})
    assert done.returncode == 0, done.stderr
    out = done.stdout.splitlines()
    assert "configuration active.invoicing_the_customer_for_the_current_period" in out
    assert (
        "  INVOICE_GENERATION_REQUESTED_BY_THE_SCHEDULER: "
        "→ active.waiting_for_the_payment_of_the_invoice (payload {})"
    ) in out
    assert not any(c in done.stdout for c in "│┃━─")  # no table drawn


def test_diff_marks_old_and_new_and_summarises_a_retimed_timer(tmp_path: Path) -> None:
    old = write_chart(LEASE, tmp_path / "v1", "lease")
    new_text = LEASE.replace("version: 1", "version: 2").replace("1d: stale", "2d: stale")
    new_text = new_text.replace(
        "      Start: running\n  expired:", "      Start: expired\n  expired:"
    )
    new = write_chart(new_text, tmp_path / "v2", "lease")
    done = statekit("diff", str(old), str(new))
    assert done.returncode == 0, done.stderr
    out = done.stdout.splitlines()
    assert out[0] == "chart 'lease': version 1 → 2"
    assert out[1] == (
        "  timer-retimed after(1d)@idle in idle: was 1d, now 2d "
        "(event after(2d)@idle; the same transitions and answers)"
    )
    assert "  transition-changed stale on Start: was → running, now → expired" in out
    assert "  answer-changed {stale} + Start: was → running, now → expired" in out
    assert not any("after(1d)@idle:" in line or "→ →" in line for line in out[2:]), out
    data = json.loads(statekit("diff", str(old), str(new), "--format", "json").stdout)
    kinds = [c["kind"] for c in data["changes"]]
    assert "transition-removed" in kinds and "transition-added" in kinds  # JSON: every change


def test_worker_now_without_once_runs_on_from_that_reading(store_url: str, tmp_path: Path) -> None:
    armed(store_url)
    chart = str(write_chart(LEASE, tmp_path, "lease"))
    worker = subprocess.Popen(
        [sys.executable, "-m", "statekit", "worker", "--db", store_url, "--chart", chart,
         "--now", str(PAST + 40_000)],
        cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    try:
        assert worker.stdout is not None
        delivered = [json.loads(worker.stdout.readline()) for _ in range(2)]
    finally:
        worker.send_signal(signal.SIGTERM)
        _, err = worker.communicate(timeout=60)
    assert worker.returncode == 0, err
    assert [d["event_id"] for d in delivered] == [
        "statekit.timer/reminder/2",
        "statekit.timer/after(30s)@running/3",
    ]
