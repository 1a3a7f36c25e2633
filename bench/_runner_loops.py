"""The counter chart of bench/runner_throughput.py and the loops it times: `Runner.apply`
alone (`runner_loop`) and with two runners taking turns (`turns_loop`), and the raw
hand-written transaction (`raw_loop`, on PostgreSQL also in pipeline mode). Each loop
returns when its events began (`time.perf_counter`), its setup done: the caller times
the events alone.
"""

from __future__ import annotations

import time

from statekit.compiler.pipeline import compile_source
from statekit.engine.chart import Chart
from statekit.runner.runner import Runner
from statekit.runner.store import open_store
from statekit.runner.store.base import Store

COUNTER = """
statechart: counter
version: 1
context:
  total: {type: integer, default: 0}
events:
  Incr: {by: integer}
initial: open
states:
  open:
    on:
      Incr:
        do:
          - assign: {total: ctx.total + event.by}
          - emit: {type: Counted, payload: {total: ctx.total}}
"""
RAW_TABLES = (
    "CREATE TABLE raw_instances (id TEXT PRIMARY KEY, version BIGINT NOT NULL, state TEXT)",
    "CREATE TABLE raw_events (instance_id TEXT, sequence BIGINT, event_id TEXT, payload TEXT, "
    "PRIMARY KEY (instance_id, sequence), UNIQUE (instance_id, event_id))",
    "CREATE TABLE raw_outbox (id {serial}, instance_id TEXT, message_id TEXT, payload TEXT, "
    "UNIQUE (instance_id, message_id))",
)


def counter() -> Chart:
    result = compile_source(COUNTER, "counter.yaml")
    assert result.chart is not None
    return Chart(result.chart)


def runner_loop(store: Store, instance: str, events: int, tag: str) -> float:
    """`events` committed applies to one instance; when they began (`time.perf_counter`,
    after the chart is compiled and the instance created: see `_child`)."""
    runner = Runner(counter(), store)
    runner.create(instance, exist_ok=True)
    start = time.perf_counter()
    for n in range(events):
        outcome = runner.apply(instance, f"{tag}-{n}", "Incr", {"by": 1})
        assert outcome.applied
    return start


def turns_loop(store: Store, instance: str, events: int, tag: str) -> float:
    """`events` committed applies to one instance by two runners taking turns (each on its
    own connection), so that every apply reads the instance first; when they began."""
    other = open_store(store.url)
    runners = [Runner(counter(), store), Runner(counter(), other)]
    runners[0].create(instance, exist_ok=True)
    start = time.perf_counter()
    for n in range(events):
        outcome = runners[n % 2].apply(instance, f"{tag}-{n}", "Incr", {"by": 1})
        assert outcome.applied
    other.close()
    return start


def raw_loop(store: Store, instance: str, events: int, tag: str) -> float:
    """The hand-written transaction: insert event, update instance, insert outbox row;
    when the events began (after the version row is created and read)."""
    with store.write():
        if store.dialect == "postgresql":
            store.execute(
                "INSERT INTO raw_instances VALUES (?, 0, '{}') ON CONFLICT DO NOTHING", (instance,)
            )
        else:
            store.execute("INSERT OR IGNORE INTO raw_instances VALUES (?, 0, '{}')", (instance,))
    version = store.execute("SELECT version FROM raw_instances WHERE id = ?", (instance,))
    base = int(version.fetchone()[0])
    start = time.perf_counter()
    for n in range(events):
        seq = base + n + 1
        with store.write():
            store.execute(
                "INSERT INTO raw_events VALUES (?, ?, ?, ?)",
                (instance, seq, f"{tag}-{n}", '{"by":1}'),
            )
            store.execute(
                "UPDATE raw_instances SET version = ?, state = ? WHERE id = ? AND version = ?",
                (seq, f'{{"total":{seq}}}', instance, seq - 1),
            )
            store.execute(
                "INSERT INTO raw_outbox (instance_id, message_id, payload) VALUES (?, ?, ?)",
                (instance, f"{tag}-{n}/0", f'{{"total":{seq}}}'),
            )
    return start


def raw_pipeline_loop(store: Store, instance: str, events: int, tag: str) -> float:
    """The same raw transaction, sent in psycopg's pipeline mode (one round trip each);
    when the events began."""
    raw_loop(store, instance, 0, tag)  # the version row
    conn = store.connection
    version = conn.execute("SELECT version FROM raw_instances WHERE id = %s", (instance,))
    base = int(version.fetchone()[0])
    start = time.perf_counter()
    for n in range(events):
        seq = base + n + 1
        with conn.pipeline():
            conn.execute("BEGIN")
            conn.execute(
                "INSERT INTO raw_events VALUES (%s, %s, %s, %s)",
                (instance, seq, f"{tag}-{n}", '{"by":1}'),
            )
            conn.execute(
                "UPDATE raw_instances SET version = %s, state = %s WHERE id = %s AND version = %s",
                (seq, f'{{"total":{seq}}}', instance, seq - 1),
            )
            conn.execute(
                "INSERT INTO raw_outbox (instance_id, message_id, payload) VALUES (%s, %s, %s)",
                (instance, f"{tag}-{n}/0", f'{{"total":{seq}}}'),
            )
            conn.execute("COMMIT")
    return start
