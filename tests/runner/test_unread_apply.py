"""`Runner.apply` without reading first: on the row the runner last committed, checked by
the database (the version-guarded update, the unique indexes), with every outcome as
when the instance is read first (as a runner with nothing cached does)."""

from __future__ import annotations

import random
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from runner_charts import COUNTER, FACTS, chart_from, fact_commands

from statekit.engine import observers
from statekit.runner.errors import ChartVersionError, CorruptRowError, UnknownInstanceError
from statekit.runner.outcome import Outcome
from statekit.runner.runner import Runner
from statekit.runner.store import open_store
from statekit.runner.store.base import Store
from statekit.runner.transaction import Command

INSTANCES = ("a", "b")


def _contents(store: Store) -> dict[str, Any]:
    """What the runner wrote, without the times and the outbox's own key."""
    return {
        "instances": store.execute(
            "SELECT instance_id, chart_digest, version, configuration, context, history, "
            "timers FROM statekit_instances ORDER BY instance_id"
        ).fetchall(),
        "events": [
            (*r[:5], bytes(r[5]), *r[6:])
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


def _as_data(item: Outcome | Exception, instance: str) -> Any:
    if isinstance(item, Exception):
        return ("error", type(item).__name__, str(item))
    data = item.to_data(instance)
    data["state"] = item.state.to_data()
    return data


class _Pair:
    """Two runners of each chart on one store, each with its own connection (so each
    holds its own cached rows and sees the other's writes only in the store)."""

    def __init__(self, url: str, *, reading_first: bool = False) -> None:
        counter, facts = chart_from(COUNTER), chart_from(FACTS)
        self.reading_first = reading_first
        self.stores = [open_store(url), open_store(url)]
        self.counters = [Runner(counter, s) for s in self.stores]
        self.facts = [Runner(facts, s) for s in self.stores]
        for name in INSTANCES:
            self.counters[0].create(f"c-{name}")
            self.facts[1].create(f"f-{name}")

    def apply(self, who: int, instance: str, c: Command) -> Any:
        runners = self.facts if instance.startswith("f-") else self.counters
        runner = runners[who]
        if self.reading_first:  # a runner that holds no row reads the instance first
            runner = Runner(runner.chart, runner.store)
        try:
            item: Outcome | Exception = runner.apply(
                instance, c.event_id, c.type, c.payload, c.expected_version, c.sequence
            )
        except (ValueError, UnknownInstanceError) as exc:
            item = exc
        return _as_data(item, instance)

    def close(self) -> None:
        for store in self.stores:
            store.close()


def _differential(url_unread: str, url_read: str, stream: list[tuple[int, str, Command]]) -> None:
    unread, read = _Pair(url_unread), _Pair(url_read, reading_first=True)
    got = [unread.apply(who, instance, c) for who, instance, c in stream]
    expected = [read.apply(who, instance, c) for who, instance, c in stream]
    assert got == expected
    assert _contents(unread.stores[0]) == _contents(read.stores[0])
    for name in INSTANCES:
        assert unread.counters[1].verify(f"c-{name}").ok
        assert unread.facts[0].verify(f"f-{name}").ok
    unread.close()
    read.close()


command = st.one_of(
    st.builds(
        lambda i, e, by, ev, seq: (f"c-{i}", Command(f"x{e}", "Incr", {"by": by}, ev, seq)),
        st.sampled_from(INSTANCES),
        st.integers(0, 7),
        st.integers(-1, 2),
        st.none() | st.integers(0, 6),
        st.none() | st.integers(1, 7),
    ),
    st.builds(
        lambda i, e: (f"c-{i}", Command(f"x{e}", "Ping", {})),
        st.sampled_from(INSTANCES),
        st.integers(0, 7),
    ),
    fact_commands(INSTANCES, ids=st.integers(0, 7)),
    st.builds(
        lambda i, e: (f"f-{i}", Command(f"y{e}", "Heartbeat", {"attempt": 1})),
        st.sampled_from(INSTANCES),
        st.integers(0, 7),
    ),
    st.builds(lambda e: ("nobody", Command(f"z{e}", "Incr", {"by": 1})), st.integers(0, 2)),
)
turns = st.lists(st.tuples(st.integers(0, 1), command), max_size=40)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(stream=turns)
def test_two_runners_taking_turns_decide_as_runners_that_read_first(
    tmp_path_factory: pytest.TempPathFactory, stream: list[tuple[int, tuple[str, Command]]]
) -> None:
    """Random streams over two instances of two charts, each command applied by one of two
    runners on one store (so each runner's cached row is stale whenever the other wrote
    since): redeliveries, payload conflicts, stale and future expected versions,
    sequences taken or ahead, guard rejections, `already` entries, business-key
    duplicates and conflicts, duplicates of events the chart would now reject, unknown
    instances. Outcomes and the whole store are those of runners that read first."""
    folder = tmp_path_factory.mktemp("unread")
    flat = [(who, instance, c) for who, (instance, c) in stream]
    _differential(f"sqlite:///{folder / 'unread.db'}", f"sqlite:///{folder / 'read.db'}", flat)


def test_unread_apply_equals_read_first_on_both_stores(store_url: str, tmp_path: Path) -> None:
    """One long fixed stream on each store kind, against runners that read first on
    SQLite; mostly one runner at a time (the cache current), with turns of the other."""
    rng = random.Random(11)
    stream: list[tuple[int, str, Command]] = []
    who = 0
    for n in range(160):
        if rng.random() < 0.15:
            who = 1 - who
        kind = rng.random()
        if kind < 0.55:
            c = Command(f"x{rng.randrange(60)}", "Incr", {"by": rng.randrange(-1, 3)})
            stream.append((who, f"c-{rng.choice(INSTANCES)}", c))
        elif kind < 0.7:
            c = Command(f"x{n}", "Incr", {"by": 1}, expected_version=rng.randrange(0, 40))
            stream.append((who, f"c-{rng.choice(INSTANCES)}", c))
        elif kind < 0.8:
            c = Command(f"x{n}", "Incr", {"by": 1}, sequence=rng.randrange(1, 45))
            stream.append((who, f"c-{rng.choice(INSTANCES)}", c))
        else:
            pay = {"channel_ref": f"r{rng.randrange(8)}", "amount": rng.randrange(1, 3)}
            stream.append(
                (who, f"f-{rng.choice(INSTANCES)}", Command(f"y{n % 30}", "PAY_SUCCESS", pay))
            )
    _differential(store_url, f"sqlite:///{tmp_path / 'read.db'}", stream)


def _statements(store: Store) -> list[str]:
    """The statements SQLite runs from now on (its trace callback)."""
    seen: list[str] = []
    store.connection.set_trace_callback(seen.append)
    return seen


def test_an_event_on_the_row_the_runner_committed_reads_nothing(tmp_path: Path) -> None:
    runner = Runner(chart_from(COUNTER), open_store(f"sqlite:///{tmp_path / 's.db'}"))
    runner.create("c")
    assert runner.apply("c", "e1", "Incr", {"by": 1}).applied
    seen = _statements(runner.store)
    assert runner.apply("c", "e2", "Incr", {"by": 2}).applied
    verbs = [s.split()[0] for s in seen]
    assert verbs == ["BEGIN", "UPDATE", "INSERT", "INSERT", "COMMIT"], seen
    seen.clear()  # a redelivery: the insert is refused, the transaction rolled back, re-read
    again = runner.apply("c", "e2", "Incr", {"by": 2})
    assert again.duplicate and again.sequence == 2 and again.version == 2
    assert any(s.startswith("ROLLBACK") for s in seen) and any("SELECT" in s for s in seen)
    seen.clear()  # the re-read found nobody else writing: no reading first again
    assert runner.apply("c", "e3", "Incr", {"by": 3}).applied
    assert not any("SELECT" in s for s in seen), seen


_OTHER_PROCESS = """
import sys
from statekit.compiler.pipeline import compile_source
from statekit.engine.chart import Chart
from statekit.runner.runner import Runner
from statekit.runner.store import open_store
chart = Chart(compile_source(sys.argv[2], "counter.yaml").chart)
outcome = Runner(chart, open_store(sys.argv[1])).apply("c", sys.argv[3], "Incr", {"by": 10})
print(outcome.status.value, outcome.version)
"""


def _other_process(url: str, event_id: str) -> str:
    done = subprocess.run(
        [sys.executable, "-c", _OTHER_PROCESS, url, COUNTER, event_id],
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    return done.stdout.strip()


def test_another_process_writing_between_two_events(store_url: str) -> None:
    runner = Runner(chart_from(COUNTER), open_store(store_url))
    runner.create("c")
    assert runner.apply("c", "e1", "Incr", {"by": 1}).version == 1
    assert _other_process(store_url, "p1") == "APPLIED 2"
    second = runner.apply("c", "e2", "Incr", {"by": 2})  # on the other's row, not on its own
    assert second.applied and second.version == 3 and second.state.context["total"] == 13
    assert _other_process(store_url, "p2") == "APPLIED 4"
    stale = runner.apply("c", "e3", "Incr", {"by": 1}, expected_version=3)
    assert stale.reason == "VERSION_CONFLICT" and stale.conflict is not None
    assert stale.conflict.event_id == "p2" and stale.version == 4
    assert runner.apply("c", "p2", "Incr", {"by": 10}).duplicate  # the other's event ID
    other_payload = runner.apply("c", "p1", "Incr", {"by": 3})
    assert other_payload.reason == "EVENT_ID_PAYLOAD_CONFLICT"
    assert [e.event_id for e in runner.history("c")] == ["e1", "p1", "e2", "p2"]
    assert runner.verify("c").ok


# Each changes the stored row in place, without moving its version: the runner must decide
# on what the store holds (or refuse it), never write over it from the row it cached.
TAMPERED = [
    ("context", '{"count":7,"total":70}', None),
    ("context", '{"count":"x","total":0}', CorruptRowError),
    ("context", "{not json", CorruptRowError),
    ("configuration", '["nowhere"]', CorruptRowError),
    ("history", "[]", CorruptRowError),
    ("timers", '{"timer_generation":0,"timers":[]}', CorruptRowError),
    ("chart_digest", "sha256:" + "0" * 64, ChartVersionError),
    ("chart_name", "another", ChartVersionError),
    ("chart_version", 7, None),  # the digest says which chart: decided on it, version healed
]


@pytest.mark.parametrize(("column", "text", "error"), TAMPERED)
def test_a_row_changed_in_place_is_not_written_over(
    store_url: str, column: str, text: str | int, error: type[Exception] | None
) -> None:
    runner = Runner(chart_from(COUNTER), open_store(store_url))
    runner.create("c")
    assert runner.apply("c", "e1", "Incr", {"by": 1}).applied
    with runner.store.write():
        runner.store.execute(
            f"UPDATE statekit_instances SET {column} = ? WHERE instance_id = ?", (text, "c")
        )
    if error is not None:
        with pytest.raises(error):
            runner.apply("c", "e2", "Incr", {"by": 1})
        stored = runner.store.execute(
            f"SELECT {column}, version FROM statekit_instances WHERE instance_id = ?", ("c",)
        ).fetchone()
        assert tuple(stored) == (text, 1)
        return
    outcome = runner.apply("c", "e2", "Incr", {"by": 1})
    assert outcome.applied and outcome.version == 2
    if column == "context":
        assert dict(outcome.state.context) == {"count": 8, "total": 71}
    if column == "chart_version":  # as a runner reading first leaves it
        stored = runner.store.execute("SELECT chart_version FROM statekit_instances").fetchone()
        assert stored[0] == 1
        assert runner.verify("c").ok


def test_observers_see_each_event_once_as_the_store_recorded_it(store_url: str) -> None:
    """A decision on a cached row that the database finds stale is taken back: its step
    is never delivered to observers, only the decision made again on the stored row
    (and a decision taken back because the command was not accepted on the cached row
    is delivered only as made again)."""
    seen: list[tuple[str | None, str, int]] = []

    def watch(chart: object, before: object, result: Any, instance: str | None) -> None:
        if before is not None:
            seen.append((instance, result.status.value, result.state.to_data()["context"]["total"]))

    chart = chart_from(COUNTER)
    first, second = Runner(chart, open_store(store_url)), Runner(chart, open_store(store_url))
    first.create("c")
    with observers.observing(watch):
        assert first.apply("c", "e1", "Incr", {"by": 1}).version == 1  # cached from here on
        assert second.apply("c", "p1", "Incr", {"by": 10}).version == 2
        assert first.apply("c", "e2", "Incr", {"by": 2}).version == 3  # stale, taken back
        assert first.apply("c", "e3", "Incr", {"by": -1}).status.value == "REJECTED"
    assert seen == [
        ("c", "APPLIED", 1), ("c", "APPLIED", 11), ("c", "APPLIED", 13), ("c", "REJECTED", 13),
    ]  # fmt: skip
