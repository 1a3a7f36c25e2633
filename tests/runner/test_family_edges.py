"""The edges of the durable family a user trial found, on both stores: a child's instance
ID taken by a caller first, child IDs past the identifier bound, a family step past its
bound at creation, the outcome of a family step (the addressed instance as the whole
step leaves it), and the events only a family makes (`done.invoke.<id>`,
`error.invoke.<id>`), refused from outside."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest
from cli_process import statekit
from runner_charts import chart_from, write_chart
from store_fixtures import ShardURLs

from statekit.runner.errors import FamilyBoundError
from statekit.runner.family_step import CHILD_ID_TAKEN, FAMILY_EVENT
from statekit.runner.identifier_bounds import MAX_ID_BYTES
from statekit.runner.runner import Runner
from statekit.runner.store import open_store

SUBSCRIPTION = """
statechart: subscription
version: 1
description: A subscription that bills on renewal.
context:
  amount: {type: integer, default: 0}
  ref: {type: string, default: ""}
  reminders: {type: integer, default: 0}
events:
  renew: {amount: integer}
  renew_badly: {amount: integer}
  poke: {}
  cancel: {}
  reminded: {}
initial: idle
states:
  idle:
    on:
      renew: {to: renewing, do: [{assign: {amount: event.amount}}]}
      renew_badly: {to: misbilled, do: [{assign: {amount: event.amount}}]}
  renewing:
    invoke:
      id: bill
      chart: bill
      input: {amount: ctx.amount}
      output: {ref: string}
    on:
      done.invoke.bill: {to: active, do: [{assign: {ref: event.ref}}]}
      error.invoke.bill: lapsed
      poke: {do: [{send: {to: bill, event: remind}}]}
      reminded: {do: [{assign: {reminders: ctx.reminders + 1}}]}
      cancel: cancelled
  misbilled:
    invoke:
      id: badbill
      chart: bill
      input: {no_such_field: ctx.amount}
      output: {ref: string}
    on:
      done.invoke.badbill: active
      error.invoke.badbill: lapsed
  active:
    on:
      cancel: cancelled
  lapsed:
    on:
      cancel: cancelled
  cancelled: {final: true}
"""

BILL = """
statechart: bill
version: 1
description: A bill that is paid, or reminded of.
context:
  amount: {type: integer, default: 0}
events:
  pay: {ref: string}
  remind: {}
initial: open
states:
  open:
    on:
      remind: {do: [{send: {to: parent, event: reminded}}]}
      pay: {to: paid}
  paid:
    final: true
    output: {ref: '"R"'}
"""

NODE = """
statechart: node
version: 1
description: A node that starts another node as soon as it starts, unbounded.
events:
  stop: {}
initial: running
states:
  running:
    invoke: {id: next, chart: node}
    on:
      stop: stopped
  stopped: {final: true}
"""


def _runner(url: str) -> Runner:
    return Runner(chart_from(SUBSCRIPTION), open_store(url), charts=[chart_from(BILL)])


def test_a_child_id_taken_by_a_caller_is_an_error_invoke_not_a_stuck_parent(
    store_url: str,
) -> None:
    runner = _runner(store_url)
    runner.create("s0/bill/1")  # a caller's root under the ID s0's child would get
    runner.create("s0")
    renewed = runner.apply("s0", "e1", "renew", {"amount": 5})
    assert renewed.applied and renewed.state.configuration == {"lapsed"}
    error = runner.history("s0")[-1]
    assert error.type == "error.invoke.bill"
    assert runner.load("s0/bill/1").chart_name == "subscription"  # untouched
    assert runner.store.children("s0") == []
    assert runner.apply("s0", "e2", "cancel").applied  # the parent goes on
    assert runner.verify("s0").ok, runner.verify("s0").differences
    rejections = [e for e in runner.history("s0") if e.type == "error.invoke.bill"]
    assert len(rejections) == 1 and CHILD_ID_TAKEN in str(rejections[0].payload)


@pytest.mark.parametrize("extra", [MAX_ID_BYTES - 8, MAX_ID_BYTES - 2, MAX_ID_BYTES])
def test_child_ids_stay_within_the_identifier_bound(store_url: str, extra: int) -> None:
    runner = _runner(store_url)
    parent = "p" + "é" * ((extra - 1) // 2)  # near or at the bound itself
    runner.create(parent)
    runner.apply(parent, "e1", "renew", {"amount": 5})
    (link,) = runner.store.children(parent)
    child = link.child_instance_id
    assert len(child.encode()) <= MAX_ID_BYTES
    paid = runner.apply(child, "p1", "pay", {"ref": "x"})  # reachable from outside
    assert paid.applied and runner.load(parent).state.configuration == {"active"}
    assert runner.verify(parent).ok and runner.verify(child).ok


def test_a_chain_of_long_invoke_ids_stays_within_the_bound(store_url: str) -> None:
    """Eight charts, each invoking the next under a 450-letter invoke id (on PostgreSQL
    an unbounded ID was a raw `ProgramLimitExceeded`)."""
    names = [f"c{i}" for i in range(8)]
    charts = []
    for i, name in enumerate(names):
        invoke = "" if i == len(names) - 1 else (
            f"    invoke: {{id: {'i' * 450}{i}, chart: {names[i + 1]}}}\n"
        )  # fmt: skip
        charts.append(chart_from(
            f"statechart: {name}\nversion: 1\ndescription: A link of a chain.\n"
            f"events:\n  stop: {{}}\ninitial: running\nstates:\n  running:\n{invoke}"
            "    on:\n      stop: stopped\n  stopped: {final: true}\n"
        ))  # fmt: skip
    runner = Runner(charts[0], open_store(store_url), charts=charts[1:])
    runner.create("root")
    member, depth = "root", 0
    while links := runner.store.children(member):
        member, depth = links[0].child_instance_id, depth + 1
        assert len(member.encode()) <= MAX_ID_BYTES
        assert runner.verify(member).ok
    assert depth == len(names) - 1


def test_a_family_step_past_its_bound_at_creation_is_a_documented_error(
    store_url: str,
) -> None:
    runner = Runner(chart_from(NODE), open_store(store_url))
    with pytest.raises(FamilyBoundError, match="FAMILY_BOUND: the initial family step"):
        runner.create("n1")
    assert runner.store.instance("n1") is None  # nothing of it kept


def test_the_outcome_is_the_instance_after_the_whole_family_step(store_url: str) -> None:
    runner = _runner(store_url)
    runner.create("s1")
    # the child cannot start: its error.invoke moves s1 on in the same step
    renewed = runner.apply("s1", "e1", "renew_badly", {"amount": 5})
    stored = runner.load("s1")
    assert (renewed.version, renewed.state) == (stored.version, stored.state) == (2, stored.state)
    assert stored.state.configuration == {"lapsed"}
    assert runner.apply("s1", "e2", "cancel", expected_version=renewed.version).applied
    runner.create("s2")
    runner.apply("s2", "e1", "renew", {"amount": 5})
    poked = runner.apply("s2", "e2", "poke")  # the child answers `reminded` at once
    assert poked.version == runner.load("s2").version == 3
    assert poked.state.context["reminders"] == 1
    assert runner.apply("s2", "e3", "cancel", expected_version=poked.version).applied


@pytest.mark.parametrize("event", ["done.invoke.bill", "error.invoke.bill"])
def test_events_only_a_family_makes_are_refused_from_outside(store_url: str, event: str) -> None:
    runner = _runner(store_url)
    runner.create("s1")
    runner.apply("s1", "e1", "renew", {"amount": 5})
    payload = {"ref": "FORGED"} if event.startswith("done") else {"reason": "forged"}
    forged = runner.apply("s1", "e2", event, payload)
    assert forged.status.value == "REJECTED" and forged.reason == FAMILY_EVENT
    assert forged.message is not None and "only from the family" in forged.message
    assert runner.load("s1").state.configuration == {"renewing"}
    assert runner.apply("s1", "e2", event, payload).reason == FAMILY_EVENT  # again
    assert runner.apply("s1/bill/1", "p1", "pay", {"ref": "x"}).applied  # the real one
    assert runner.load("s1").state.context["ref"] == "R"
    assert runner.verify("s1").ok


def _cli_run(
    tmp_path: Path, url: str, lines: list[dict[str, object]], *extra: str
) -> list[dict[str, object]]:
    folder = tmp_path / "charts"
    folder.mkdir(exist_ok=True)
    main = write_chart(SUBSCRIPTION, folder, "subscription")
    write_chart(BILL, folder, "bill")
    write_chart(NODE, folder, "node")
    ran = statekit(
        "run", str(main), "--chart", str(folder), "--db", url, "--now", "1000", *extra,
        stdin="".join(json.dumps(x) + "\n" for x in lines),
    )  # fmt: skip
    assert ran.returncode in (0, 1), ran.stderr
    assert "internal error" not in ran.stderr
    return [json.loads(x) for x in ran.stdout.splitlines()]


def _family_stream(count: int) -> list[dict[str, object]]:
    lines: list[dict[str, object]] = []
    for i in range(count):
        s = f"s{i}"
        lines += [
            {"instance": s, "event_id": "e1", "type": "renew", "payload": {"amount": i}},
            {"instance": s, "event_id": "e2", "type": "poke"},
            {"instance": f"{s}/bill/1", "event_id": "c1", "type": "remind"},
        ]
        if i % 2:
            lines.append({"instance": f"{s}/bill/1", "event_id": "c2", "type": "pay",
                          "payload": {"ref": "x"}})  # fmt: skip
        # a root created under the ID of a child its earlier line starts
        lines.append({"instance": f"{s}/bill/1", "event_id": "x1", "type": "renew",
                      "payload": {"amount": 9}})  # fmt: skip
    return lines


def test_a_batch_answers_as_the_lines_one_at_a_time(shard_urls: ShardURLs, tmp_path: Path) -> None:
    batched_url, single_url = shard_urls(2)
    stream = _family_stream(6)
    batched = _cli_run(tmp_path, batched_url, stream, "--batch", "7")
    single = _cli_run(tmp_path, single_url, stream)
    assert batched == single
    assert [x["status"] for x in single[:3]] == ["APPLIED"] * 3
    assert single[3]["status"] == "REJECTED"  # the child (a bill) takes no `renew`


def test_a_family_step_past_its_bound_answers_its_line_and_the_run_goes_on(
    store_url: str, tmp_path: Path
) -> None:
    folder = tmp_path / "nodes"
    folder.mkdir()
    chart = write_chart(NODE, folder, "node")
    lines = [{"instance": n, "event_id": "e1", "type": "stop"} for n in ("a", "b")]
    ran = statekit(
        "run", str(chart), "--db", store_url, "--batch", "2",
        stdin="".join(json.dumps(x) + "\n" for x in lines),
    )  # fmt: skip
    assert ran.returncode == 1 and "internal error" not in ran.stderr, ran.stderr
    answers = [json.loads(x) for x in ran.stdout.splitlines()]
    assert [a["instance"] for a in answers] == ["a", "b"]
    assert all(a["status"] == "ERROR" and "FAMILY_BOUND" in str(a["error"]) for a in answers)


def test_verify_flags_a_stored_instance_id_over_the_bound(tmp_path: Path) -> None:
    """A child ID stored before child IDs were bounded (SQLite took any length)."""
    url = f"sqlite:///{tmp_path / 'old.db'}"
    runner = _runner(url)
    runner.create("s9")
    runner.store.close()
    old = "s" * (MAX_ID_BYTES + 8)
    with sqlite3.connect(tmp_path / "old.db") as db:
        db.execute("UPDATE statekit_instances SET instance_id = ? WHERE instance_id = 's9'",
                   (old,))  # fmt: skip
    report = _runner(url).verify(old)
    assert not report.ok
    assert any("its instance ID is 520 UTF-8 bytes" in d for d in report.differences)


TICKER = """
statechart: ticker
version: 1
description: A ticker that, a second after it starts, starts an unbounded node.
events:
  stop: {}
initial: waiting
states:
  waiting:
    after:
      1s: spawning
  spawning:
    invoke: {id: first, chart: node}
    on:
      stop: stopped
  stopped: {final: true}
"""


def test_a_timer_whose_family_step_passes_the_bound_is_skipped_not_raised(
    store_url: str,
) -> None:
    runner = Runner(
        chart_from(TICKER), open_store(store_url), charts=[chart_from(NODE)], clock=lambda: 0
    )
    runner.create("t1")
    assert runner.fire_due(now_ms=5_000) == []  # nothing of it kept, no BoundReached
    assert runner.load("t1").state.configuration == {"waiting"}
    assert runner.store.children("t1") == []
