"""What bench/runner_throughput.py compares the runner with on SQLite besides the raw
transaction: "the runner's statements replayed" (`statements_rate`: the very statements
and parameters of `Runner.apply`, recorded from a runner, then run with `sqlite3` alone)
and "the floor" (`fused_loop`: the work any runner of this design must do per event and
those statements, written by hand as one loop with no layers; `fused_agrees` checks that
it stores what the runner stores before it is timed).
"""

from __future__ import annotations

import sqlite3
import tempfile
import time
from pathlib import Path
from typing import Any

from bench._runner_loops import counter, runner_loop
from statekit.runner.evidence import evidence_json
from statekit.runner.hashes import payload_text_and_digest
from statekit.runner.runner import Runner
from statekit.runner.store import open_store
from statekit.runner.store.packing import HASH_CHECK, pack_evidence
from statekit.runner.store.rows import StateColumns
from statekit.runner.store.sqlite import SQLiteStore
from statekit.runner.stored_state import state_columns

try:
    from statekit.compiler.canonical import canonical_json
except ImportError:  # the statekit of `--before REV` older than statekit/compiler/canonical.py
    from statekit.compiler.serialize import canonical_json


class _Recording:
    """A `sqlite3.Connection` stand-in that runs each statement and keeps it with its
    parameters (`statements_rate` replays them)."""

    def __init__(self, conn: sqlite3.Connection) -> None:
        self.conn = conn
        self.calls: list[tuple[str, Any, bool]] = []  # (sql, parameters, executemany)

    def execute(self, sql: str, params: Any = ()) -> sqlite3.Cursor:
        self.calls.append((sql, params, False))
        return self.conn.execute(sql, params)

    def executemany(self, sql: str, rows: Any) -> sqlite3.Cursor:
        rows = list(rows)
        self.calls.append((sql, rows, True))
        return self.conn.executemany(sql, rows)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.conn, name)


def statements_rate(url: str, events: int, tag: str) -> float:
    """Events/s of the runner's own SQLite statements without its Python: `events` applies
    of `runner_loop` are recorded (`_recorded_statements`), then replayed verbatim with
    `sqlite3` on an instance brought to the same row in the database of `url`; only the
    replay is timed. The ceiling of `Runner.apply` on this schema, whatever its Python
    costs."""
    calls = _recorded_statements(events, tag)
    store = open_store(url)
    runner = Runner(counter(), store)
    runner.create(tag)
    assert runner.apply(tag, f"{tag}-first", "Incr", {"by": 1}).applied
    assert isinstance(store, SQLiteStore)
    conn = store.connection
    start = time.perf_counter()
    for sql, params, many in calls:
        if many:
            conn.executemany(sql, params)
        else:
            conn.execute(sql, params)
    elapsed = time.perf_counter() - start
    store.close()
    return events / elapsed


def _recorded_statements(events: int, tag: str) -> list[tuple[str, Any, bool]]:
    """The statements and parameters of `events` applies of `runner_loop` (after its
    first, which reads), recorded in a database of their own."""
    with tempfile.TemporaryDirectory() as folder:
        recorded = open_store(f"sqlite:///{Path(folder) / 'recorded.db'}?synchronous=OFF")
        runner = Runner(counter(), recorded)
        runner.create(tag)
        assert runner.apply(tag, f"{tag}-first", "Incr", {"by": 1}).applied
        assert isinstance(recorded, SQLiteStore)
        recording = _Recording(recorded.connection)
        # the store runs its statements on this attribute: the bench looks inside here
        recorded._conn = recording  # type: ignore[assignment]
        for n in range(events):
            assert runner.apply(tag, f"{tag}-{n}", "Incr", {"by": 1}).applied
        recorded._conn = recording.conn
        recorded.close()
    return recording.calls


_CONTROL = ("BEGIN IMMEDIATE", "COMMIT")


def fused_loop(store: SQLiteStore, instance: str, events: int, tag: str) -> float:
    """The floor of this design: what any runner of it must do for each event, written by
    hand as one loop with no layers, on the runner's own statements. For each event: the
    payload's canonical text and hash, the engine's step with its evidence, the evidence,
    context and message texts, and the runner's three statements (version- and
    state-guarded update, event row, outbox row) in one transaction. Nothing a chart
    other than `COUNTER` needs (another shape of update, sends, keys, timers, snapshots,
    conflicts): `fused_agrees` checks that it stores what the runner stores. Returns when
    the events began (after the statements are recorded and the instance created)."""
    update, insert_event, insert_outbox = (
        sql for sql, _, _ in _recorded_statements(1, "shape") if sql not in _CONTROL
    )
    chart = counter()
    Runner(chart, store).create(instance)
    conn = store.connection
    state = chart.start()
    version, columns = 0, state_columns(state)
    start = time.perf_counter()
    for n in range(events):
        event_id = f"{tag}-{n}"
        payload = {"by": 1}
        conn.execute("BEGIN IMMEDIATE")
        now = time.time()
        now_ms = int(now * 1000)
        text, digest = payload_text_and_digest("Incr", payload)
        result = chart.send(state, "Incr", payload, event_id=event_id, now_ms=now_ms)
        evidence = pack_evidence("Incr", text, evidence_json(result, None, event_id))
        new, sequence = result.state, version + 1
        moved = state_columns(new)
        guard = (chart.name, chart.version, chart.digest, *_state_texts(columns))
        cursor = conn.execute(update, (sequence, moved.context, now, instance, version, *guard))
        if cursor.rowcount != 1:
            raise AssertionError("the fused loop's instance row moved under it")
        conn.execute(insert_event, (
            instance, sequence, event_id, "Incr", text, digest[:HASH_CHECK], None,
            chart.version, evidence, now, None, now_ms,
        ))  # fmt: skip
        for message in result.emitted:
            conn.execute(insert_outbox, (
                instance, message.message_id, sequence, message.type,
                canonical_json(dict(message.payload)), None,
            ))  # fmt: skip
        conn.execute("COMMIT")
        state, version, columns = new, sequence, moved
    return start


def _state_texts(columns: StateColumns) -> tuple[str, str, str, str | None]:
    return (columns.configuration, columns.context, columns.history, columns.timers)


def fused_agrees(events: int) -> None:
    """AssertionError unless `fused_loop` stores what `Runner.apply` stores for the same
    events (every column but the instance ID and the times), before it is timed."""
    with tempfile.TemporaryDirectory() as folder:
        store = open_store(f"sqlite:///{Path(folder) / 'agree.db'}?synchronous=OFF")
        assert isinstance(store, SQLiteStore)
        fused_loop(store, "fused", events, "e")
        runner_loop(store, "runner", events, "e")
        conn = store.connection
        queries = (
            "SELECT sequence, event_id, type, payload, payload_sha256, status, chart_version, "
            "evidence, idempotency_key FROM statekit_events WHERE instance_id = ? ORDER BY 1",
            "SELECT message_id, sequence, type, payload, created_at FROM statekit_outbox "
            "WHERE instance_id = ? ORDER BY sequence, message_id",
            "SELECT version, chart_name, chart_version, chart_digest, configuration, context, "
            "history, timers FROM statekit_instances WHERE instance_id = ?",
        )
        for query in queries:
            fused = conn.execute(query, ("fused",)).fetchall()
            ours = conn.execute(query, ("runner",)).fetchall()
            assert fused == ours and len(fused) > 0, (query, fused[:2], ours[:2])
        store.close()


def fused_rate(url: str, events: int, tag: str) -> float:
    """Events/s of `fused_loop` on the database of `url`."""
    store = open_store(url)
    assert isinstance(store, SQLiteStore)
    start = fused_loop(store, tag, events, tag)
    elapsed = time.perf_counter() - start
    store.close()
    return events / elapsed
