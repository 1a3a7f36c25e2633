"""`statekit run --now MS` gives every step of the run that clock reading, and a line whose
instance recorded a later reading is refused, never recorded before it: a family over
the order of `run` and `worker --now` calls with readings going back and forth (through
the real command, both stores; the history's readings read back through the API)."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest
from cli_process import statekit
from runner_charts import chart_from, write_chart
from store_fixtures import ShardURLs

from statekit.runner.runner import Runner
from statekit.runner.shard_layout import shard_of
from statekit.runner.store import open_store

ASK = """
statechart: ask
context:
  asked_at: {type: integer, default: -1}
  reminded_at: {type: integer, default: -1}
  replied_at: {type: integer, default: -1}
events:
  ASK: {}
  REPLIED: {}
initial: open
states:
  open:
    on:
      ASK: {to: waiting, do: [{assign: {asked_at: now}}]}
  waiting:
    after: [{id: remind, delay: 10h, to: reminded}]
    on:
      REPLIED: {to: answered, do: [{assign: {replied_at: now}}]}
  reminded:
    entry: [{assign: {reminded_at: now}}]
    on:
      REPLIED: {to: answered, do: [{assign: {replied_at: now}}]}
  answered: {}
"""

T = 1_700_000_000_000  # epoch ms, in the past of every wall clock these tests run on
H = 3_600_000

Call = tuple[str, int | str | None]
"""A `run` of one event (its type) or a `worker --once` ("worker"), at `--now` (None: none)."""

ORDERS: list[tuple[str, list[Call], list[str], list[int | str]]] = [
    # name, calls, each call's answer, the history's clock readings after them
    (
        "a timer delivered ahead, then an event behind it",
        [("ASK", T), ("worker", T + 10 * H), ("REPLIED", T + 3000), ("REPLIED", T + 10 * H)],
        ["APPLIED", "APPLIED", "ERROR", "APPLIED"],
        [T, T + 10 * H, T + 10 * H],
    ),
    (
        "an event ahead, then one behind it, then one after it",
        [("ASK", T + 5 * H), ("REPLIED", T), ("REPLIED", T + 5 * H + 1)],
        ["APPLIED", "ERROR", "APPLIED"],
        [T + 5 * H, T + 5 * H + 1],
    ),
    (
        "a worker ahead that delivers nothing records no reading",
        [("ASK", T), ("worker", T + H), ("REPLIED", T + 1800_000)],
        ["APPLIED", "NOTHING", "APPLIED"],
        [T, T + 1800_000],
    ),
    (
        "the wall clock after a reading in its past",
        [("ASK", T), ("REPLIED", None)],
        ["APPLIED", "APPLIED"],
        [T, "wall"],
    ),
    (
        "the trial's order: the wall clock behind a timer delivered in its future",
        [("ASK", None), ("worker", "wall+11h"), ("REPLIED", None)],
        ["APPLIED", "APPLIED", "ERROR"],
        ["wall", "wall+11h"],
    ),
]


def _reading(now: int | str | None, wall: int) -> int | None:
    if isinstance(now, str):
        return wall + (11 * H if now == "wall+11h" else 0)
    return now


@pytest.mark.parametrize(("calls", "expected", "readings"), [o[1:] for o in ORDERS],
                         ids=[o[0] for o in ORDERS])  # fmt: skip
def test_run_and_worker_readings_in_any_order_never_go_back(
    store_url: str, tmp_path: Path, calls: list[Call], expected: list[str], readings: list[object]
) -> None:
    chart = str(write_chart(ASK, tmp_path, "ask"))
    wall = int(time.time() * 1000)
    got: list[str] = []
    for n, (what, now) in enumerate(calls):
        reading = _reading(now, wall)
        clock = [] if reading is None else ["--now", str(reading)]
        if what == "worker":
            done = statekit("worker", "--db", store_url, "--chart", chart, "--once", *clock)
            assert done.returncode == 0, done.stderr
            got.append("APPLIED" if done.stdout else "NOTHING")
            continue
        line = {"instance": "t", "event_id": f"e{n}", "type": what, "payload": {}}
        done = statekit("run", chart, "--db", store_url, *clock, stdin=json.dumps(line) + "\n")
        [answer] = [json.loads(x) for x in done.stdout.splitlines()]
        got.append(str(answer["status"]))
        if answer["status"] == "ERROR":
            assert done.returncode == 1
            assert "is earlier than instance 't''s last recorded reading" in answer["error"]
            assert "give --now" in answer["error"]
        else:
            assert done.returncode == 0, done.stderr
    assert got == expected
    store = open_store(store_url)
    try:
        recorded = [e.clock_ms for e in Runner(chart_from(ASK), store).history("t")]
    finally:
        store.close()
    assert recorded == sorted(r for r in recorded if r is not None)  # never goes back
    for want, have in zip(readings, recorded, strict=True):
        if want == "wall":  # the wall clock of the call: at or after `wall`, not 10h on
            assert have is not None and wall <= have < wall + H
        else:
            assert have == (_reading(want, wall) if isinstance(want, str) else want)
    assert statekit("verify", "--db", store_url, "--chart", chart).returncode == 0


def test_run_now_is_what_now_reads_and_timers_come_due_from(store_url: str, tmp_path: Path) -> None:
    chart = str(write_chart(ASK, tmp_path, "ask"))
    line = {"instance": "t", "event_id": "e1", "type": "ASK", "payload": {}}
    done = statekit("run", chart, "--db", store_url, "--now", str(T), stdin=json.dumps(line))
    assert done.returncode == 0, done.stderr
    timers = statekit("timers", "--db", store_url, "--format", "json")
    assert [json.loads(x)["due_ms"] for x in timers.stdout.splitlines()] == [T + 10 * H]
    store = open_store(store_url)
    try:
        assert Runner(chart_from(ASK), store).load("t").state.context["asked_at"] == T
    finally:
        store.close()


def test_a_batch_refuses_only_the_lines_of_an_instance_ahead(
    store_url: str, tmp_path: Path
) -> None:
    chart = str(write_chart(ASK, tmp_path, "ask"))
    first = {"instance": "ahead", "event_id": "e1", "type": "ASK", "payload": {}}
    done = statekit("run", chart, "--db", store_url, "--now", str(T + H), stdin=json.dumps(first))
    assert done.returncode == 0, done.stderr
    batch = "".join(
        json.dumps({"instance": i, "event_id": e, "type": t, "payload": {}}) + "\n"
        for i, e, t in [("ahead", "e2", "REPLIED"), ("new", "e1", "ASK"), ("new", "e2", "REPLIED")]
    )
    done = statekit("run", chart, "--db", store_url, "--now", str(T), "--batch", "3", stdin=batch)
    assert done.returncode == 1
    out = [json.loads(x) for x in done.stdout.splitlines()]
    assert [(o["instance"], o["status"]) for o in out] == [
        ("ahead", "ERROR"),
        ("new", "APPLIED"),
        ("new", "APPLIED"),
    ]
    assert out[0]["error"] == (
        f"the clock reading {T} is earlier than instance 'ahead''s last recorded reading "
        f"{T + H}: a step is never recorded before it; give --now {T + H} or later"
    )


def test_run_now_is_a_clock_reading(tmp_path: Path) -> None:
    chart = str(write_chart(ASK, tmp_path, "ask"))
    url = f"sqlite:///{tmp_path / 'store.db'}"
    for bad in ("-1", "soon", str(2**63)):
        done = statekit("run", chart, "--db", url, "--now", bad, stdin="")
        assert done.returncode == 2 and "--now" in done.stderr, done.stderr
        assert "Traceback" not in done.stderr


def test_a_shard_set_checks_each_instance_in_its_own_shard(
    shard_urls: ShardURLs, tmp_path: Path
) -> None:
    urls = shard_urls(2)
    db = [arg for url in urls for arg in ("--db", url)]
    chart = str(write_chart(ASK, tmp_path, "ask"))
    ahead = next(i for i in (f"t{n}" for n in range(20)) if shard_of(i, 2) == 1)
    behind = next(i for i in (f"t{n}" for n in range(20)) if shard_of(i, 2) == 0)

    def line(instance: str, event_id: str, type_: str) -> str:
        return json.dumps({"instance": instance, "event_id": event_id, "type": type_}) + "\n"

    done = statekit("run", chart, *db, "--now", str(T + H), stdin=line(ahead, "e1", "ASK"))
    assert done.returncode == 0, done.stderr
    done = statekit("run", chart, *db, "--now", str(T), stdin=line(behind, "e1", "ASK"))
    assert done.returncode == 0, done.stderr
    done = statekit(
        "run", chart, *db, "--now", str(T + 1), "--batch", "2",
        stdin=line(ahead, "e2", "REPLIED") + line(behind, "e2", "REPLIED"),
    )  # fmt: skip
    assert [json.loads(x)["status"] for x in done.stdout.splitlines()] == ["ERROR", "APPLIED"]
