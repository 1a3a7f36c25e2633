"""`Store.write_decided`: what the database refuses fails that event alone, on both dialects.

Three instances each decide one more event (the runner's own decision, through
`InstanceTransaction`); the middle one's rows are then broken one failure
class at a time: its instance moved on after it was read (a stale version),
the version check alone (nothing else collides), an event ID, a sequence or
a business key already recorded, an outbox message ID already taken. Written
the way group commit writes (a savepoint per event),
the broken event leaves nothing (no history entry, no message, no version
change) and the two around it commit; written alone with `last=True` (the
PostgreSQL pipeline that carries the COMMIT), nothing of it is committed and
the store goes on.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import replace

import pytest
from runner_charts import FACTS, chart_from

from statekit.runner.runner import Runner
from statekit.runner.store import open_store
from statekit.runner.store.base import Store
from statekit.runner.store.rows import ChartKey, DecidedRows
from statekit.runner.transaction import NOTHING_RECORDED, Command, InstanceTransaction

INSTANCES = ("a", "b", "c")
PAY = "PAY_SUCCESS"


def _runner(url: str) -> Runner:
    runner = Runner(chart_from(FACTS), open_store(url))
    for name in INSTANCES:
        runner.create(name)
        assert runner.apply(name, "s1", "TaskStarted", {"attempt": 1, "worker": "w"}).applied
        assert runner.apply(name, "p1", PAY, {"channel_ref": "r-1", "amount": 1}).applied
    return runner


def _decided(runner: Runner, name: str) -> DecidedRows:
    """The rows the runner decides for payment p2 of instance `name` (not written)."""
    row = runner.store.instance(name)
    assert row is not None
    tx = InstanceTransaction(
        runner.chart, row, runner.load(name).state, snapshot_every=None, now=time.time()
    )
    tx.decide(Command("p2", PAY, {"channel_ref": "r-2", "amount": 2}), NOTHING_RECORDED)
    chart = runner.chart
    return tx.decided(ChartKey(name=chart.name, version=chart.version, digest=chart.digest))


def _stale(runner: Runner, rows: DecidedRows) -> DecidedRows:
    # another writer moves the instance after these rows were decided
    assert runner.apply("b", "p3", PAY, {"channel_ref": "r-3", "amount": 3}).applied
    return rows


def _version(runner: Runner, rows: DecidedRows) -> DecidedRows:
    # the version check alone: nothing else of the rows collides with anything stored
    move = rows.moves[0]
    return replace(rows, moves=(replace(move, read_version=move.read_version + 1),))


def _event_id(runner: Runner, rows: DecidedRows) -> DecidedRows:
    return replace(rows, events=(replace(rows.events[0], event_id="p1"),))


def _sequence(runner: Runner, rows: DecidedRows) -> DecidedRows:
    return replace(rows, events=(replace(rows.events[0], sequence=2),))


def _business_key(runner: Runner, rows: DecidedRows) -> DecidedRows:
    held = runner.history("b")[1].idempotency_key  # p1's channel_ref
    assert held is not None
    return replace(rows, events=(replace(rows.events[0], idempotency_key=held),))


def _message_id(runner: Runner, rows: DecidedRows) -> DecidedRows:
    return replace(rows, outbox=(replace(rows.outbox[0], message_id="p1/0"),))


BREAKS: dict[str, Callable[[Runner, DecidedRows], DecidedRows]] = {
    "stale version": _stale,
    "version check": _version,
    "event ID recorded": _event_id,
    "sequence taken": _sequence,
    "business key recorded": _business_key,
    "message ID taken": _message_id,
}


def _written(store: Store, rows: DecidedRows) -> bool:
    """One event's rows inside a savepoint, as group commit writes them: True when
    written, False when refused (rolled back to the savepoint)."""
    store.execute("SAVEPOINT one_event")
    try:
        ok = store.write_decided(rows)
    except Exception:
        ok = False
    if not ok:
        store.execute("ROLLBACK TO SAVEPOINT one_event")
    store.execute("RELEASE SAVEPOINT one_event")
    return ok


def _nothing_of_p2(runner: Runner, before: list[str], version: int) -> None:
    assert [e.event_id for e in runner.history("b")] == before
    assert runner.load("b").version == version
    messages = runner.store.outbox(["pending", "delivered", "dead"], "b")
    assert "p2/0" not in [m.message_id for m in messages]
    assert runner.verify("b").ok


@pytest.mark.parametrize("broken", list(BREAKS))
def test_a_refused_event_in_a_batch_leaves_nothing_and_the_others_commit(
    store_url: str, broken: str
) -> None:
    runner = _runner(store_url)
    batch = {name: _decided(runner, name) for name in INSTANCES}
    batch["b"] = BREAKS[broken](runner, batch["b"])
    before = [e.event_id for e in runner.history("b")]
    version = runner.load("b").version
    with runner.store.write():
        written = {name: _written(runner.store, rows) for name, rows in batch.items()}
    assert written == {"a": True, "b": False, "c": True}
    _nothing_of_p2(runner, before, version)
    for name in ("a", "c"):
        assert [e.event_id for e in runner.history(name)] == ["s1", "p1", "p2"]
        assert runner.load(name).version == 3
        assert runner.verify(name).ok
    # b goes on from where it is
    again = runner.apply("b", "p2", PAY, {"channel_ref": "r-2", "amount": 2})
    assert again.applied and again.version == version + 1


class _Refused(Exception):
    pass


@pytest.mark.parametrize("broken", list(BREAKS))
def test_a_refused_last_write_commits_nothing(store_url: str, broken: str) -> None:
    runner = _runner(store_url)
    rows = BREAKS[broken](runner, _decided(runner, "b"))
    before = [e.event_id for e in runner.history("b")]
    version = runner.load("b").version
    with pytest.raises(Exception) as caught, runner.store.write():
        runner.store.execute("SELECT 1")  # the transaction has begun, as `apply`'s read does
        if not runner.store.write_decided(rows, last=True):
            raise _Refused
    if broken == "version check":  # reported, not raised: the caller rolls back
        assert caught.type is _Refused
    elif broken != "stale version":  # (its event's sequence is taken too: either may say so)
        assert caught.type is not _Refused
    _nothing_of_p2(runner, before, version)
    again = runner.apply("b", "p2", PAY, {"channel_ref": "r-2", "amount": 2})
    assert again.applied and again.version == version + 1


def test_a_last_write_commits_every_row_at_once(store_url: str) -> None:
    runner = _runner(store_url)
    rows = _decided(runner, "a")
    with runner.store.write():
        runner.store.execute("SELECT 1")
        assert runner.store.write_decided(rows, last=True)
    assert [e.event_id for e in runner.history("a")] == ["s1", "p1", "p2"]
    assert [m.message_id for m in runner.store.outbox(["pending"], "a")] == ["s1/0", "p1/0", "p2/0"]
    assert runner.verify("a").ok
    other = Runner(chart_from(FACTS), open_store(store_url))  # another connection sees it
    assert other.load("a").version == 3
