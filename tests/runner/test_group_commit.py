"""`Runner.apply_many`: group commit across instances, each event on its own."""

from __future__ import annotations

import os
import random
import signal
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from runner_charts import FACTS, chart_from, fact_commands

from statekit.runner.errors import UnknownInstanceError
from statekit.runner.outcome import Outcome
from statekit.runner.runner import Runner
from statekit.runner.store import open_store
from statekit.runner.store.base import Store
from statekit.runner.transaction import Command

# A counter whose increment divides: `by: 0` is an evaluation error (a REJECTED outcome).
DIVIDER = """
statechart: divider
version: 1
context:
  total: {type: integer, default: 0}
events:
  Add: {by: integer}
  Ping: {}
initial: open
states:
  open:
    already: [Ping]
    on:
      Add:
        do:
          - assign: {total: ctx.total + 12 // event.by}
          - emit: {type: Added, payload: {total: ctx.total}}
          - emit: {type: Twice, payload: {by: event.by}}
"""
INSTANCES = ("a", "b", "c")


def _charts() -> tuple[Any, Any]:
    return chart_from(DIVIDER), chart_from(FACTS)


def _store_contents(store: Store) -> dict[str, Any]:
    """Everything the runner wrote, without the times and the outbox's own key (the
    order of an instance's messages is kept: they are listed by it)."""
    return {
        "instances": store.execute(
            "SELECT instance_id, chart_digest, version, configuration, context, history "
            "FROM statekit_instances ORDER BY instance_id"
        ).fetchall(),
        "events": [
            (r[0], r[1], r[2], r[3], r[4], bytes(r[5]), r[6], r[7], r[8], r[9])
            for r in store.execute(
                "SELECT instance_id, sequence, event_id, type, payload, payload_sha256, "
                "status, chart_version, evidence, idempotency_key FROM statekit_events "
                "ORDER BY instance_id, sequence"
            ).fetchall()
        ],
        "outbox": store.execute(
            "SELECT instance_id, message_id, sequence, type, payload, status "
            "FROM statekit_outbox ORDER BY instance_id, id"
        ).fetchall(),
        "audit": store.execute(
            "SELECT instance_id, event_id, type, payload, payload_sha256, status, reason, "
            "message, version, detail FROM statekit_rejections ORDER BY instance_id, id"
        ).fetchall(),
    }


def _runners(url: str) -> tuple[Runner, Runner]:
    divider, facts = _charts()
    store = open_store(url)
    d, f = Runner(divider, store), Runner(facts, store)
    for name in INSTANCES:
        d.create(f"d-{name}")
        f.create(f"f-{name}")
    return d, f


def _as_data(item: Outcome | Exception, instance: str) -> Any:
    if isinstance(item, Exception):
        return ("error", type(item).__name__, str(item))
    data = item.to_data(instance)
    data["state"] = item.state.to_data()
    return data


command = st.one_of(
    st.builds(
        lambda i, e, by, ev, seq: (f"d-{i}", Command(f"x{e}", "Add", {"by": by}, ev, seq)),
        st.sampled_from(INSTANCES),
        st.integers(0, 9),
        st.integers(-1, 2),
        st.none() | st.integers(0, 6),
        st.none() | st.integers(1, 7),
    ),
    st.builds(
        lambda i, e: (f"d-{i}", Command(f"x{e}", "Ping", {})),
        st.sampled_from(INSTANCES),
        st.integers(0, 9),
    ),
    fact_commands(INSTANCES, ids=st.integers(0, 9)),
    st.builds(lambda e: ("nobody", Command(f"z{e}", "Add", {"by": 1})), st.integers(0, 2)),
    st.builds(lambda: ("d-a", Command("", "Add", {"by": 1}))),
)


def _differential(url_one: str, url_many: str, stream: list[Any], cuts: list[int]) -> None:
    one, one_facts = _runners(url_one)
    many, many_facts = _runners(url_many)
    expected = []
    for instance, c in stream:
        runner = one_facts if instance.startswith("f-") else one
        try:
            item: Outcome | Exception = runner.apply(
                instance, c.event_id, c.type, c.payload, c.expected_version, c.sequence
            )
        except (ValueError, UnknownInstanceError) as exc:
            item = exc
        expected.append(_as_data(item, instance))
    got: list[Any] = []
    start = 0
    for cut in [*cuts, len(stream)]:
        batch = stream[start : start + cut]
        start += len(batch)
        facts = [n for n, (i, _) in enumerate(batch) if i.startswith("f-")]
        others = [n for n, (i, _) in enumerate(batch) if not i.startswith("f-")]
        items: dict[int, Outcome | Exception] = {}
        for runner, part in ((many, others), (many_facts, facts)):
            items.update(zip(part, runner.apply_many([batch[n] for n in part]), strict=True))
        got.extend(_as_data(items[n], batch[n][0]) for n in range(len(batch)))
    assert got == expected
    assert _store_contents(many.store) == _store_contents(one.store)
    for name in INSTANCES:
        assert many.verify(f"d-{name}").ok and many_facts.verify(f"f-{name}").ok
    one.store.close()
    many.store.close()


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    stream=st.lists(command, max_size=40),
    cuts=st.lists(st.sampled_from([1, 2, 3, 5, 8, 40]), max_size=10),
)
def test_apply_many_in_any_batches_equals_apply_one_by_one(
    tmp_path_factory: pytest.TempPathFactory, stream: list[Any], cuts: list[int]
) -> None:
    """Random streams over three instances of two charts (redeliveries, payload
    conflicts, stale expected versions, sequences taken or ahead, evaluation errors,
    guard rejections, business-key duplicates and conflicts, unknown instances, bad
    event IDs): the outcomes and the whole store are those of `apply` one by one."""
    folder = tmp_path_factory.mktemp("group")
    _differential(f"sqlite:///{folder / 'one.db'}", f"sqlite:///{folder / 'many.db'}", stream, cuts)


def test_apply_many_equals_apply_on_both_stores(store_url: str, tmp_path: Path) -> None:
    """One long fixed stream on each store kind, against `apply` on SQLite."""
    rng = random.Random(13)
    stream: list[Any] = []
    for n in range(120):
        instance, kind = f"d-{rng.choice(INSTANCES)}", rng.random()
        if kind < 0.6:
            c = Command(f"x{rng.randrange(40)}", "Add", {"by": rng.randrange(-1, 3)})
        elif kind < 0.8:
            c = Command(f"x{n}", "Add", {"by": 1}, expected_version=rng.randrange(0, 30))
        else:
            instance = f"f-{rng.choice(INSTANCES)}"
            pay = {"channel_ref": f"r{rng.randrange(6)}", "amount": 1}
            c = Command(f"y{rng.randrange(20)}", "PAY_SUCCESS" if n % 7 else "TaskStarted", pay)
            if n % 7 == 0:
                c = Command(c.event_id, "TaskStarted", {"attempt": 1, "worker": "w"})
        stream.append((instance, c))
    _differential(f"sqlite:///{tmp_path / 'one.db'}", store_url, stream, [7, 1, 30, 2, 50])


def test_a_failing_event_in_a_batch_leaves_the_others_committed(store_url: str) -> None:
    """In one batch: an evaluation error, a stale expected version, a payload conflict,
    a business-key conflict, an unknown instance, a bad event ID, and a row the
    database refuses (an outbox message ID written behind the runner's back): each is
    answered as `apply` answers it, and the good events around them commit."""
    divider, facts = _runners(store_url)
    assert divider.apply("d-a", "x0", "Add", {"by": 1}).applied
    assert facts.apply("f-a", "y0", "TaskStarted", {"attempt": 1, "worker": "w"}).applied
    assert facts.apply("f-a", "y1", "PAY_SUCCESS", {"channel_ref": "r", "amount": 1}).applied
    with divider.store.write():  # the database will refuse x9's first message
        divider.store.execute(
            "INSERT INTO statekit_outbox (instance_id, message_id, sequence, type, payload, "
            "created_at) VALUES ('d-c', 'x9/0', 0, 'Other', '{}', 0)"
        )
    items = divider.apply_many(
        [
            ("d-a", Command("x1", "Add", {"by": 2})),
            ("d-b", Command("x2", "Add", {"by": 0})),  # 12 // 0
            ("d-a", Command("x3", "Add", {"by": 1}, expected_version=0)),  # stale
            ("d-a", Command("x0", "Add", {"by": 5})),  # x0 was recorded with by 1
            ("d-c", Command("x9", "Add", {"by": 1})),  # its outbox row is refused
            ("nobody", Command("x4", "Add", {"by": 1})),
            ("d-b", Command("statekit.x", "Add", {"by": 1})),
            ("d-c", Command("x5", "Add", {"by": 3})),
            ("d-a", Command("x6", "Add", {"by": 3}, expected_version=2)),
        ]
    )
    shown = [i.status.value if isinstance(i, Outcome) else type(i).__name__ for i in items]
    assert shown[:4] == ["APPLIED", "REJECTED", "CONFLICT", "CONFLICT"]
    assert [i.reason for i in items[1:4] if isinstance(i, Outcome)] == [
        "EVALUATION_ERROR",
        "VERSION_CONFLICT",
        "EVENT_ID_PAYLOAD_CONFLICT",
    ]
    assert shown[4] not in ("APPLIED", "REJECTED", "CONFLICT")  # the database's error
    assert shown[5:] == ["UnknownInstanceError", "ValueError", "APPLIED", "APPLIED"]
    assert [e.event_id for e in divider.history("d-a")] == ["x0", "x1", "x6"]
    assert [e.event_id for e in divider.history("d-c")] == ["x5"]
    assert divider.history("d-b") == []
    assert divider.load("d-c").state.context["total"] == 4
    paid = facts.apply_many(
        [
            ("f-a", Command("y2", "PAY_SUCCESS", {"channel_ref": "r", "amount": 9})),
            ("f-a", Command("y3", "PAY_SUCCESS", {"channel_ref": "s", "amount": 2})),
        ]
    )
    assert [i.reason if isinstance(i, Outcome) else i for i in paid] == [
        "BUSINESS_KEY_CONFLICT",
        None,
    ]
    assert facts.load("f-a").version == 3
    for name in ("d-a", "d-b"):
        assert divider.verify(name).ok
    assert facts.verify("f-a").ok


KILLED = textwrap.dedent(
    """
    import sys
    sys.path[:0] = [{tests!r}, {here!r}]
    from runner_charts import chart_from
    from test_group_commit import DIVIDER, batch
    from statekit.engine import observers
    from statekit.runner.runner import Runner
    from statekit.runner.store import open_store

    runner = Runner(chart_from(DIVIDER), open_store({url!r}))
    steps = []

    def stop_midway(chart, before, result, instance):
        steps.append(instance)
        if len(steps) == 150:  # the batch is half decided: say so and wait to be killed
            print("midway", flush=True)
            sys.stdin.readline()

    if {kill!r}:
        observers.install(stop_midway)
    items = runner.apply_many(batch())
    print(sum(1 for i in items if getattr(i, "applied", False)), flush=True)
    """
)


def batch() -> list[tuple[str, Command]]:
    """300 events over the three instances (the crash test's batch)."""
    return [(f"d-{INSTANCES[n % 3]}", Command(f"k{n}", "Add", {"by": 1})) for n in range(300)]


def _child(url: str, *, kill: bool) -> subprocess.Popen[str]:
    here = Path(__file__).parent
    code = KILLED.format(tests=str(here.parent), here=str(here), url=url, kill=kill)
    return subprocess.Popen(
        [sys.executable, "-c", code],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
        cwd=here,
    )


def test_a_crash_mid_batch_loses_that_batch_only_and_a_rerun_is_idempotent(
    store_url: str,
) -> None:
    divider, _ = _runners(store_url)
    before = divider.apply_many([("d-a", Command("first", "Add", {"by": 1}))])
    assert isinstance(before[0], Outcome) and before[0].applied
    child = _child(store_url, kill=True)
    assert child.stdout is not None and child.stdout.readline() == "midway\n"
    os.kill(child.pid, signal.SIGKILL)
    child.wait()
    assert [e.event_id for e in divider.history("d-a")] == ["first"]  # nothing of the batch
    assert [divider.load(f"d-{n}").version for n in INSTANCES] == [1, 0, 0]
    rerun = _child(store_url, kill=False)
    out, _ = rerun.communicate()
    assert out.strip() == "300"
    again = divider.apply_many(batch())
    assert all(isinstance(i, Outcome) and i.duplicate for i in again)
    assert [divider.load(f"d-{n}").version for n in INSTANCES] == [101, 100, 100]
    for name in INSTANCES:
        assert divider.verify(f"d-{name}").ok


LEASE_EVENTS = ["Start", "Beat", "Hold", "Snooze", "Finish", "Echo", "Odd", "Deadline"]


def _lease_payload(event: str, n: int) -> dict[str, Any]:
    return {"n": n} if event == "Echo" else {"at": 5000 + n} if event == "Deadline" else {}


def _timed_contents(store: Store) -> dict[str, Any]:
    return {
        **_store_contents(store),
        "timers": store.execute(
            "SELECT * FROM statekit_timers ORDER BY instance_id, timer_id"
        ).fetchall(),
        "rows": store.execute(
            "SELECT instance_id, timers, start_clock_ms FROM statekit_instances "
            "ORDER BY instance_id"
        ).fetchall(),
        "clocks": store.execute(
            "SELECT instance_id, sequence, clock_ms FROM statekit_events "
            "ORDER BY instance_id, sequence"
        ).fetchall(),
    }


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    stream=st.lists(
        st.tuples(st.sampled_from(INSTANCES), st.sampled_from(LEASE_EVENTS), st.integers(0, 5)),
        max_size=30,
    ),
    cuts=st.lists(st.sampled_from([1, 2, 4, 30]), max_size=8),
)
def test_apply_many_writes_timers_and_sends_as_apply_does(
    tmp_path_factory: pytest.TempPathFactory, stream: list[Any], cuts: list[int]
) -> None:
    """A chart with `after` timers, delayed sends (armed, replaced, cancelled) and
    undelayed sends (applied right after their event): the same outcomes, the same
    timer rows, clock readings and sends through `apply_many` as through `apply`."""
    from runner_charts import LEASE

    folder = tmp_path_factory.mktemp("timed")
    runners = []
    for name in ("one", "many"):
        runner = Runner(chart_from(LEASE), open_store(f"sqlite:///{folder / name}.db"),
                        clock=lambda: 1_000)  # fmt: skip
        for instance in INSTANCES:
            runner.create(instance)
        runners.append(runner)
    one, many = runners
    commands = [(i, Command(f"e{k}-{n}", e, _lease_payload(e, n))) for k, (i, e, n) in
                enumerate(stream)]  # fmt: skip
    expected = [_as_data(one.apply(i, c.event_id, c.type, c.payload), i) for i, c in commands]
    got: list[Any] = []
    start = 0
    for cut in [*cuts, len(commands)]:
        batch = commands[start : start + cut]
        start += len(batch)
        items = many.apply_many(batch)
        got.extend(_as_data(item, i) for item, (i, _) in zip(items, batch, strict=True))
    assert got == expected
    assert _timed_contents(many.store) == _timed_contents(one.store)
    for instance in INSTANCES:
        assert many.verify(instance).ok


def test_a_batch_looks_up_its_event_ids_together(tmp_path: Path) -> None:
    """900 commands in one batch, event IDs drawn from 300 (redeliveries and payload
    conflicts on both sides of the lookup's statement boundaries): the outcomes and the
    store are those of `apply` one by one, and the event IDs take a few statements."""
    rng = random.Random(5)
    stream = [
        (
            f"d-{rng.choice(INSTANCES)}",
            Command(f"x{rng.randrange(300)}", "Add", {"by": rng.choice([1, 2])}),
        )
        for _ in range(900)
    ]
    _differential(
        f"sqlite:///{tmp_path / 'one.db'}", f"sqlite:///{tmp_path / 'many.db'}", stream, [900]
    )
    runner = Runner(_charts()[0], open_store(f"sqlite:///{tmp_path / 'count.db'}"))
    for name in INSTANCES:
        runner.create(f"d-{name}")
    seen: list[str] = []
    runner.store.connection.set_trace_callback(seen.append)
    items = runner.apply_many(
        [(f"d-{INSTANCES[n % 3]}", Command(f"c{n}", "Add", {"by": 1})) for n in range(900)]
    )
    assert all(isinstance(i, Outcome) and i.applied for i in items)
    selects = [s for s in seen if s.startswith("SELECT")]
    # one per instance (read and locked), and 900 distinct event IDs at 400 per statement
    assert len(selects) == len(INSTANCES) + 3, selects
