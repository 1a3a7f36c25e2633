"""`statekit inspect`'s pages on a store holding 1,000,000 events: how long each answers.

Run: `python -m bench.inspect_pages [EVENTS] [--sqlite-only]` from the repository root
(EVENTS: default 1000000; PostgreSQL must be installed unless `--sqlite-only`: a
throwaway server is started on loopback).

The store: the durable runner (`Runner.apply_many`, 500 events per transaction) applies
payment histories (machines/payment.yaml) to `BASE_INSTANCES` instances: each instance
gets a prefix of `SCRIPT` as long as its number says (so every state of the chart is
reached, START_PAY arms the 15-minute timer, successes and refunds emit outbox
messages), and every 7th a rejected event and an event-ID conflict. Those rows, exactly
as the runner wrote them, are then copied by INSERT … SELECT under new instance IDs
(and event IDs, `-cN` appended; the last activity shifted by N ms) until the store holds
EVENTS events: the rows of one instance per copy are the runner's, the million is
reached in seconds rather than the minutes the runner would take (about 4,700 events/s
on SQLite, bench/README.md). `ANALYZE` follows, as a store in service has statistics.

Timed through the whole app (`create_app`, Starlette's TestClient: routing, the
security middleware, the queries and the HTML), in-process, wall clock: each page
`ROUNDS` times after one untimed request; the median with its range, against the
issue's budget `BUDGET_MS` (200 ms).
"""

from __future__ import annotations

import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from starlette.testclient import TestClient

from statekit.api import load
from statekit.inspect.app import create_app
from statekit.inspect.context import Inspector, charts_by_version
from statekit.runner.decision_inputs import Command
from statekit.runner.runner import Runner
from statekit.runner.store import open_store
from statekit.runner.store.base import Store
from statekit.testing.postgres_server import ThrowawayPostgres

ROOT = Path(__file__).resolve().parents[1]
BASE_INSTANCES = 2_000
ROUNDS = 11
BUDGET_MS = 200.0
BATCH = 500
CLOCK_MS = 1_700_000_000_000
"""The runner's clock while it writes (November 2023): the armed timers are overdue now."""
SCRIPT: tuple[tuple[str, dict[str, object]], ...] = (
    ("START_PAY", {"amount": 100}),
    ("PAY_FAILED", {"code": "card_declined"}),
    ("RETRY_PAY", {}),
    ("PAY_SUCCESS", {"channel_ref": "ch-1"}),
    ("PAY_SUCCESS", {"channel_ref": "ch-1"}),
    ("START_REFUND", {"amount": 40, "requester": "user"}),
    ("REFUND_SUCCESS", {"refund_ref": "rf-1"}),
    ("CLOSE", {}),
)
COPIED = {
    "statekit_instances": ("instance_id",),
    "statekit_events": ("instance_id", "event_id"),
    "statekit_rejections": ("instance_id", "event_id"),
    "statekit_outbox": ("instance_id",),
    "statekit_timers": ("instance_id",),
    "statekit_snapshots": ("instance_id",),
}
"""The tables copied, and the columns a copy suffixes (`-cN`)."""
SERIAL = {"statekit_rejections": "id", "statekit_outbox": "id"}


def _commands(n: int) -> list[tuple[str, Command]]:
    instance = f"pay-{n:06d}"
    length = 1 + n % len(SCRIPT)
    commands = [
        (instance, Command(f"{instance}-e{k}", event, payload))
        for k, (event, payload) in enumerate(SCRIPT[:length])
    ]
    if n % 7 == 0:
        commands.append(
            (instance, Command(f"{instance}-late", "PAY_SUCCESS", {"channel_ref": "x"}))
        )
        commands.append((instance, Command(f"{instance}-e0", "START_PAY", {"amount": 5})))
    return commands


def build(url: str, events: int) -> tuple[str, str]:
    """Fill the empty store at `url` (module docstring); returns an event ID and an
    instance ID that exist once, for the search and the instance page."""
    chart = load(str(ROOT / "machines" / "payment.yaml"))
    runner = Runner(chart, open_store(url), clock=lambda: CLOCK_MS)
    store = runner.store
    for n in range(BASE_INSTANCES):
        runner.create(f"pay-{n:06d}")
    pending: list[tuple[str, Command]] = []
    for n in range(BASE_INSTANCES):
        pending += _commands(n)
        if len(pending) >= BATCH:
            runner.apply_many(pending)
            pending = []
    if pending:
        runner.apply_many(pending)
    base = _count(store)
    copies = max(0, -(-events // base) - 1)
    columns = {table: _columns(store, table) for table in COPIED}
    with store.write():  # the runner's rows, kept aside to be copied from
        for table in COPIED:
            store.execute(f"CREATE TEMPORARY TABLE base_{table} AS SELECT * FROM {table}")
    for copy in range(1, copies + 1):
        with store.write():
            for table, suffixed in COPIED.items():
                names = [c for c in columns[table] if c != SERIAL.get(table)]
                chosen = [
                    f"{c} || '-c{copy}'"
                    if c in suffixed
                    else f"updated_at + {copy / 1000}"
                    if c == "updated_at"
                    else c
                    for c in names
                ]
                store.execute(
                    f"INSERT INTO {table} ({', '.join(names)}) "
                    f"SELECT {', '.join(chosen)} FROM base_{table}"
                )
    store.execute("ANALYZE")
    store.close()
    return f"pay-000123-e3-c{copies // 2}", f"pay-000123-c{copies // 2}"


def _count(store: Store) -> int:
    (count,) = store.execute("SELECT count(*) FROM statekit_events").fetchone()
    return int(count)


def _columns(store: Store, table: str) -> list[str]:
    cursor = store.connection.cursor()  # the driver's own: it describes the columns
    cursor.execute(f"SELECT * FROM {table} LIMIT 0")
    return [d[0] for d in cursor.description]


def _timed(client: TestClient, path: str) -> tuple[float, float, float, int]:
    response = client.get(path)
    assert response.status_code in (200, 303), (path, response.status_code, response.text[:300])
    times = []
    for _ in range(ROUNDS):
        began = time.perf_counter()
        response = client.get(path)
        times.append((time.perf_counter() - began) * 1000)
    return statistics.median(times), min(times), max(times), len(response.content)


def measure(kind: str, make_url: Callable[[], str], events: int) -> None:
    """Build the store of `kind`, then time each page."""
    url = make_url()
    began = time.perf_counter()
    event_id, instance_id = build(url, events)
    built = time.perf_counter() - began
    inspector = Inspector(url, charts_by_version([load(str(ROOT / "machines" / "payment.yaml"))]))
    with open_store(url) as store:
        stored = _count(store)
        (instances,) = store.execute("SELECT count(*) FROM statekit_instances").fetchone()
    print(f"\n{kind}: {stored:,} events, {instances:,} instances (built in {built:.0f} s)")
    pages = (
        ("list, default (last activity)", "/"),
        ("list, sorted by instance ID, page 101", "/?sort=instance&order=asc&page=101"),
        ("list, filtered: state + has rejections", "/?state=closed&rejections=1"),
        ("list, filtered: chart + overdue timers", "/?chart=payment&timers=overdue"),
        ("list, filtered: pending outbox", "/?outbox=pending"),
        ("search: an event ID", f"/?q={event_id}"),
        ("search: an instance ID", f"/?q={instance_id}"),
        ("live cursor (whole store)", "/live"),
        ("instance page", f"/instances/{instance_id}"),
    )
    print(f"{'page':42} {'median ms':>10} {'range ms':>16} {'KB':>6}  vs {BUDGET_MS:.0f} ms")
    with TestClient(create_app(inspector), follow_redirects=False) as client:
        for name, path in pages:
            median, low, high, size = _timed(client, path)
            verdict = "under" if median < BUDGET_MS else "OVER"
            print(
                f"{name:42} {median:10.1f} {f'{low:.1f}-{high:.1f}':>16} "
                f"{size / 1024:6.1f}  {verdict}"
            )
    inspector.close()


def main(argv: list[str]) -> None:
    sizes = [a for a in argv if not a.startswith("--")]
    events = int(sizes[0]) if sizes else 1_000_000
    with tempfile.TemporaryDirectory() as folder:
        measure("sqlite", lambda: f"sqlite:///{Path(folder) / 'inspect.db'}", events)
        if "--sqlite-only" not in argv:
            with ThrowawayPostgres() as server:
                measure("postgresql", lambda: server.create_database("inspect_bench"), events)


if __name__ == "__main__":
    main(sys.argv[1:])
