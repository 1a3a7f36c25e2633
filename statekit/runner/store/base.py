"""`Store`: the runner's tables behind one database connection, in SQL both dialects share.

A `Store` owns one database connection (use one per thread or process) and
creates and upgrades the schema on open (`migrations`). The SQL is shared and
written with `?` placeholders; each dialect's subclass (`sqlite`, `postgres`)
says how a write transaction starts (and so how writers are serialised), how
a row is locked and how dispatchers claim outbox messages. The runner calls
the methods below inside `store.write()` or `store.read()`; nothing here
decides anything. Rows come and go as the records of `rows`; the statements
and the parameters they take are `statements`.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from contextlib import AbstractContextManager
from typing import Any

from statekit.runner.errors import (
    ChartVersionError,
    CorruptRowError,
    NoStoreError,
    SchemaVersionError,
)
from statekit.runner.store.connection_policy import DEFAULT_POLICY, ConnectionPolicy
from statekit.runner.store.hold_points import BEGIN, COMMIT, Hold
from statekit.runner.store.migrations import (
    LATEST,
    MIGRATIONS,
    MIGRATIONS_TABLE,
    Migration,
    create_migrations_table,
)
from statekit.runner.store.packing import unpack_hash, unpack_status
from statekit.runner.store.rows import (
    ChartKey,
    ChartRow,
    DecidedRows,
    EventRow,
    InstanceChart,
    InstanceRow,
    NewOutboxRow,
    OutboxRow,
    RecordedId,
    RecordedKey,
    RejectionRow,
    SnapshotRow,
    StateColumns,
    TimerRow,
    stored_int_problem,
)
from statekit.runner.store.statements import (
    DELETE_TIMER,
    ELIGIBLE,
    EVENT_COLUMNS,
    INSERT_EVENT,
    INSERT_OUTBOX,
    INSERT_REJECTION,
    INSTANCE_WIDTH,
    OUTBOX_COLUMNS,
    PAIRS_PER_STATEMENT,
    REJECTION_COLUMNS,
    SELECT_INSTANCE,
    SELECT_RECORDED,
    SNAPSHOT_COLUMNS,
    TIMER_COLUMNS,
    UPDATE_INSTANCE,
    UPDATE_READ_INSTANCE,
    UPSERT_SNAPSHOT,
    UPSERT_TIMER,
    chart_values,
    decided_statements,
    event_row,
    event_values,
    move_values,
    new_outbox_values,
    rejection_row,
    rejection_values,
    snapshot_values,
    state_values,
    timer_values,
)


class Store:
    """A database holding instances, their histories, outbox, snapshots and inbox."""

    dialect = ""
    lock_clause = ""
    claim_lock_clause = ""
    timer_lock_clause = ""
    hold: Hold | None = None
    """A test's hold on this store's write transactions (`hold_points`); None outside
    tests."""
    policy: ConnectionPolicy = DEFAULT_POLICY
    """How long to wait for the database (`connection_policy`, from the URL's query)."""

    def __init__(self, url: str, *, read_only: bool = False) -> None:
        self.url = url
        self.read_only = read_only
        """Opened by `open_read_only_store`: the connection refuses every write, and the
        schema was checked, never created or upgraded."""

    # ---- what each dialect provides ------------------------------------------------------
    def execute(self, sql: str, params: Sequence[Any] = ()) -> Any:
        """Run one statement (written with `?` placeholders); return the cursor."""
        raise NotImplementedError

    def executemany(self, sql: str, rows: Sequence[Sequence[Any]]) -> None:
        """Run one statement for each parameter row."""
        raise NotImplementedError

    def _control(self, statement: str) -> None:
        """Run BEGIN / COMMIT / ROLLBACK on the connection as they are written."""
        raise NotImplementedError

    def _open_transaction(self) -> bool:
        """Whether the connection still has a transaction to roll back."""
        raise NotImplementedError

    _depth = 0  # how many `_transaction` blocks are open (nested ones join the outer one)

    def _transaction(self, begin: str, *, writes: bool = False) -> AbstractContextManager[None]:
        """`begin` … COMMIT, rolled back on an exception; a nested block is part of the
        enclosing transaction. `writes`: a write transaction (`hold_points.BEGIN` and
        `COMMIT` are reached in it)."""
        return _Transaction(self, begin, writes)

    def reach(self, point: str) -> None:
        """The write transaction under way is at `point` (`hold_points`): a test's hold,
        when one is installed, runs here."""
        hold = self.hold
        if hold is not None:
            hold(point)

    def write(self) -> AbstractContextManager[None]:
        """A write transaction: committed on exit, rolled back on an exception."""
        raise NotImplementedError

    def read(self) -> AbstractContextManager[None]:
        """A consistent read-only snapshot across several queries."""
        raise NotImplementedError

    def claim_outbox(self, owner: str, now: float, lease: float, limit: int) -> list[OutboxRow]:
        """Claim up to `limit` deliverable messages for `owner` until `now + lease`.

        The claim (with its lease) outlives the transaction, so delivery happens
        outside it and a crashed dispatcher's messages come back when the lease ends;
        `claim_lock_clause` says how each dialect keeps dispatchers apart.
        """
        with self.write():
            rows = self.execute(
                f"SELECT {OUTBOX_COLUMNS} FROM statekit_outbox o WHERE {ELIGIBLE} "
                f"ORDER BY o.id LIMIT ?{self.claim_lock_clause}",
                (now, now, limit),
            ).fetchall()
            self.executemany(
                "UPDATE statekit_outbox SET claimed_by = ?, claimed_until = ? WHERE id = ?",
                [(owner, now + lease, r[0]) for r in rows],
            )
        return [OutboxRow(*r) for r in rows]  # selected in the record's field order

    def close(self) -> None:
        """Close the connection."""
        raise NotImplementedError

    def reconnect(self) -> None:
        """Replace a lost connection now rather than before the next transaction
        (PostgreSQL, `connection_policy`); nothing where none is lost (SQLite)."""

    def integrity_problems(self) -> list[str]:
        """What the database's own integrity check finds wrong (empty: sound, or a
        database that checks itself, as PostgreSQL does)."""
        return []

    @property
    def connection(self) -> Any:
        """The DB-API connection (for a consumer's own writes inside `Inbox.process`)."""
        raise NotImplementedError

    def __enter__(self) -> Store:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.url!r})"

    # ---- schema ------------------------------------------------------------------------
    def _lock_schema(self) -> None:
        """Serialise concurrent migrators (inside the migration transaction)."""

    def migrate(self, migrations: Sequence[Migration] = MIGRATIONS) -> int:
        """Create or upgrade the schema in place with `migrations` (opening a store does
        this with every released one); return the schema version."""
        latest = migrations[-1].version
        with self.write():
            self._lock_schema()
            self.execute(create_migrations_table(self.dialect))
            row = self.execute(f"SELECT MAX(version) FROM {MIGRATIONS_TABLE}").fetchone()
            current = int(row[0] or 0)
            if current > latest:
                raise _newer_schema(current, latest)
            for migration in migrations:
                if migration.version <= current:
                    continue
                for statement in migration.statements(self.dialect):
                    self.execute(statement)
                self.execute(
                    f"INSERT INTO {MIGRATIONS_TABLE} (version, description, applied_at) "
                    "VALUES (?, ?, ?)",
                    (migration.version, migration.description, time.time()),
                )
        return max(current, latest)

    def _has_table(self, name: str) -> bool:
        """Whether the database has a table called `name`."""
        raise NotImplementedError

    def _display_url(self) -> str:
        """The URL as messages show it (without a password)."""
        return self.url

    def check_schema(self) -> int:
        """The schema version of a store opened to be read, checked without writing:
        `NoStoreError` when the database has no statekit tables, `SchemaVersionError`
        when its schema is older or newer than this statekit's (`LATEST`)."""
        if not self._has_table(MIGRATIONS_TABLE):
            raise NoStoreError(
                f"no statekit store at {self._display_url()}: the database has no statekit "
                "tables; check the path, or run `statekit run` to create one"
            )
        current = self.schema_version()
        if current > LATEST:
            raise _newer_schema(current, LATEST)
        if current < LATEST:
            raise SchemaVersionError(
                f"the store at {self._display_url()} has schema version {current}, older than "
                f"this statekit's ({LATEST}), and reading never upgrades it: open it once "
                "with a command that writes (`statekit run`, `statekit worker`, `statekit "
                "migrate`) or with `statekit.open_store(url)`, then read it again"
            )
        return current

    def migration_rows(self) -> list[tuple[int, str]]:
        """The migrations the database records (version, description), in order."""
        rows = self.execute(
            f"SELECT version, description FROM {MIGRATIONS_TABLE} ORDER BY version"
        ).fetchall()
        return [(r[0], r[1]) for r in rows]

    def orphans(self) -> list[tuple[str, str, int]]:
        """Rows naming an instance the store does not have: (table, instance ID, rows)."""
        found: list[tuple[str, str, int]] = []
        for table in ("statekit_events", "statekit_outbox", "statekit_snapshots",
                      "statekit_rejections", "statekit_inbox", "statekit_timers"):  # fmt: skip
            rows = self.execute(
                f"SELECT instance_id, COUNT(*) FROM {table} t WHERE NOT EXISTS (SELECT 1 FROM "
                "statekit_instances i WHERE i.instance_id = t.instance_id) "
                "GROUP BY instance_id ORDER BY instance_id"
            ).fetchall()
            found.extend((table, r[0], int(r[1])) for r in rows)
        return found

    def unregistered_charts(self) -> list[str]:
        """Instances, events and snapshots naming a chart version the charts table does not
        record (by name, version and digest), in words."""
        found: list[str] = []
        rows = self.execute(
            "SELECT instance_id, chart_name, chart_version, chart_digest FROM "
            "statekit_instances i WHERE NOT EXISTS (SELECT 1 FROM statekit_charts c WHERE "
            "c.digest = i.chart_digest AND c.name = i.chart_name AND c.version = i.chart_version) "
            "ORDER BY instance_id"
        ).fetchall()
        found.extend(
            f"instance {r[0]!r} runs on chart {r[1]!r} version {r[2]} ({r[3]}), which the "
            "charts table does not record"
            for r in rows
        )
        rows = self.execute(
            "SELECT e.instance_id, e.sequence, e.chart_version FROM statekit_events e JOIN "
            "statekit_instances i ON i.instance_id = e.instance_id WHERE NOT EXISTS (SELECT 1 "
            "FROM statekit_charts c WHERE c.name = i.chart_name AND c.version = e.chart_version) "
            "ORDER BY e.instance_id, e.sequence"
        ).fetchall()
        found.extend(
            f"event #{r[1]} of instance {r[0]!r} was applied under chart version {r[2]}, which "
            "the charts table does not record"
            for r in rows
        )
        rows = self.execute(
            "SELECT s.instance_id, s.through_sequence, s.chart_digest FROM statekit_snapshots s "
            "WHERE NOT EXISTS (SELECT 1 FROM statekit_charts c WHERE c.digest = s.chart_digest "
            "AND c.version = s.chart_version) ORDER BY s.instance_id, s.through_sequence"
        ).fetchall()
        found.extend(
            f"the snapshot of instance {r[0]!r} at {r[1]} names chart {r[2]}, which the charts "
            "table does not record"
            for r in rows
        )
        return found

    def unknown_inbox_messages(self) -> list[tuple[str, str, str]]:
        """Inbox rows naming a message the outbox does not have: (consumer, instance ID,
        message ID)."""
        rows = self.execute(
            "SELECT consumer, instance_id, message_id FROM statekit_inbox n WHERE NOT EXISTS "
            "(SELECT 1 FROM statekit_outbox o WHERE o.instance_id = n.instance_id "
            "AND o.message_id = n.message_id) ORDER BY consumer, instance_id, message_id"
        ).fetchall()
        return [(r[0], r[1], r[2]) for r in rows]

    def schema_version(self) -> int:
        """The schema version recorded in the database."""
        row = self.execute(f"SELECT MAX(version) FROM {MIGRATIONS_TABLE}").fetchone()
        return int(row[0] or 0)

    # ---- charts ------------------------------------------------------------------------
    def register_chart(self, digest: str, name: str, version: int, source: str | None) -> None:
        """Record a chart version (and its source when given and not yet stored);
        ChartVersionError when the version is outside the stored integers' range."""
        problem = stored_int_problem(version, f"chart {name!r} version")
        if problem is not None:
            raise ChartVersionError(problem)
        with self.write():
            self.execute(
                "INSERT INTO statekit_charts (digest, name, version, source, registered_at) "
                "VALUES (?, ?, ?, ?, ?) ON CONFLICT (digest) DO NOTHING",
                (digest, name, version, source, time.time()),
            )
            if source is not None:
                self.execute(
                    "UPDATE statekit_charts SET source = ? WHERE digest = ? AND source IS NULL",
                    (source, digest),
                )

    def charts(self) -> list[ChartRow]:
        """Every chart version the store has seen."""
        rows = self.execute(
            "SELECT digest, name, version, source FROM statekit_charts ORDER BY name, version"
        ).fetchall()
        return [ChartRow(digest=r[0], name=r[1], version=r[2], source=r[3]) for r in rows]

    # ---- instances ---------------------------------------------------------------------
    def insert_instance(
        self,
        instance_id: str,
        *,
        chart: ChartKey,
        columns: StateColumns,
        initial_context: str,
        now: float,
        start_clock_ms: int | None = None,
    ) -> bool:
        """Insert a version-0 instance (`start_clock_ms`: the clock reading its creation's
        due times came from); False when the ID is taken."""
        cursor = self.execute(
            "INSERT INTO statekit_instances (instance_id, chart_name, chart_version, "
            "chart_digest, version, configuration, context, history, timers, "
            "initial_context, created_at, updated_at, start_clock_ms) "
            "VALUES (?, ?, ?, ?, 0, ?, ?, ?, ?, ?, ?, ?, ?) "
            "ON CONFLICT (instance_id) DO NOTHING",
            (
                instance_id,
                *chart_values(chart),
                *state_values(columns),
                initial_context,
                now,
                now,
                start_clock_ms,
            ),
        )
        return bool(cursor.rowcount == 1)

    def instance(
        self, instance_id: str, event_id: str | None = None, *, lock: bool = False
    ) -> InstanceRow | None:
        """The instance row, with the recorded event of `event_id` when there is one;
        `lock`: locked until the end of this write transaction where the dialect
        locks rows. The record is read as of the lock: where a locked read waits for
        the row, the record is read once the wait is over (`PostgresStore.instance`)."""
        sql = SELECT_INSTANCE + self.lock_clause if lock else SELECT_INSTANCE
        row = self.execute(sql, (event_id, instance_id)).fetchone()
        return None if row is None else instance_row(row, row[INSTANCE_WIDTH:])

    def update_instance(
        self,
        instance_id: str,
        *,
        read_version: int,
        new_version: int,
        chart: ChartKey,
        columns: StateColumns,
        now: float,
        read: InstanceRow | None = None,
    ) -> bool:
        """Move the instance to `new_version` only if it is still at `read_version` (and,
        given `read`, still holds that row's chart digest and state texts: a row the
        caller did not read in this transaction)."""
        params = (
            new_version, *chart_values(chart), *state_values(columns), now, instance_id,
            read_version,
        )  # fmt: skip
        if read is None:
            cursor = self.execute(UPDATE_INSTANCE, params)
        else:
            held = (read.chart_digest, *state_values(read.columns))
            cursor = self.execute(UPDATE_READ_INSTANCE, (*params, *held))
        return bool(cursor.rowcount == 1)

    # ---- one transaction's decisions, written together ----------------------------------
    def write_decided(self, rows: DecidedRows, *, last: bool = False) -> bool:
        """Write everything one transaction decided (timer rows, history entries, the
        version-checked instance moves, outbox, audit rows, snapshots) in as few round
        trips as the dialect allows; False when an instance was no longer at the version
        it was read at (the caller then rolls the transaction back and decides again).
        A row the database refuses (a duplicate event ID, business key or message ID)
        raises its error, and the caller's transaction (or savepoint) is rolled back.

        `last`: nothing else follows in this transaction, so the store may commit it
        with these writes (PostgreSQL sends the writes and the COMMIT as one query;
        a stale version then fails the whole query instead of committing); here the
        caller's `write()` block commits on exit as always."""
        for move in rows.moves:  # first: a writer that did not lock the row locks it here
            if self.execute(*move_values(move)).rowcount != 1:
                return False
        for sql, params in decided_statements(rows):
            self.executemany(sql, params)
        return True

    def instance_ids(self) -> list[str]:
        """Every instance ID, sorted."""
        rows = self.execute("SELECT instance_id FROM statekit_instances ORDER BY instance_id")
        return [r[0] for r in rows.fetchall()]

    def instance_charts(self) -> list[InstanceChart]:
        """Every instance with the name of its chart, sorted by instance ID."""
        rows = self.execute(
            "SELECT instance_id, chart_name FROM statekit_instances ORDER BY instance_id"
        )
        return [InstanceChart(instance_id=r[0], chart_name=r[1]) for r in rows.fetchall()]

    # ---- events ------------------------------------------------------------------------
    def insert_events(self, rows: Sequence[EventRow]) -> None:
        """Record accepted events (the primary key, the unique event ID and the unique
        idempotency key are the database's last word against a duplicate)."""
        self.executemany(
            INSERT_EVENT,
            [event_values(r) for r in rows],
        )

    def recorded_event(self, instance_id: str, event_id: str) -> RecordedId | None:
        """Where the event ID is recorded in the instance's history, if it is."""
        row = self.execute(SELECT_RECORDED, (instance_id, event_id)).fetchone()
        if row is None:
            return None
        return RecordedId(
            sequence=int(row[0]),
            payload_sha256=unpack_hash(row[3], row[4], row[1]),
            status=str(unpack_status(row[2])),
        )

    def recorded_events(
        self, pairs: Sequence[tuple[str, str]]
    ) -> dict[tuple[str, str], RecordedId]:
        """Where each (instance ID, event ID) of `pairs` is recorded, for those that are:
        `recorded_event` of many events in a few statements (a batch's lookups)."""
        found: dict[tuple[str, str], RecordedId] = {}
        unique = list(dict.fromkeys(pairs))
        for start in range(0, len(unique), PAIRS_PER_STATEMENT):
            chunk = unique[start : start + PAIRS_PER_STATEMENT]
            rows = self.execute(
                "SELECT instance_id, event_id, sequence, payload_sha256, status, type, payload "
                "FROM statekit_events WHERE (instance_id, event_id) IN "
                f"(VALUES {', '.join('(?, ?)' for _ in chunk)})",
                [value for pair in chunk for value in pair],
            ).fetchall()
            for r in rows:
                found[(r[0], r[1])] = RecordedId(
                    sequence=int(r[2]),
                    payload_sha256=unpack_hash(r[5], r[6], r[3]),
                    status=str(unpack_status(r[4])),
                )
        return found

    def recorded_key(self, instance_id: str, event_type: str, key: str) -> RecordedKey | None:
        """The accepted event of `event_type` holding idempotency key `key`, if any."""
        row = self.execute(
            "SELECT sequence, event_id, payload_sha256, payload FROM statekit_events "
            "WHERE instance_id = ? AND type = ? AND idempotency_key = ?",
            (instance_id, event_type, key),
        ).fetchone()
        if row is None:
            return None
        return RecordedKey(
            sequence=int(row[0]),
            event_id=str(row[1]),
            payload_sha256=unpack_hash(event_type, row[3], row[2]),
        )

    def event_id_at(self, instance_id: str, sequence: int) -> str | None:
        """The event ID recorded at `sequence`, if any."""
        row = self.execute(
            "SELECT event_id FROM statekit_events WHERE instance_id = ? AND sequence = ?",
            (instance_id, sequence),
        ).fetchone()
        return None if row is None else str(row[0])

    def events(self, instance_id: str, after: int = 0) -> list[EventRow]:
        """The history after sequence `after`, in order."""
        rows = self.execute(
            f"SELECT {EVENT_COLUMNS} FROM statekit_events WHERE instance_id = ? "
            "AND sequence > ? ORDER BY sequence",
            (instance_id, after),
        ).fetchall()
        return [event_row(r) for r in rows]  # selected in the record's field order

    # ---- rejections --------------------------------------------------------------------
    def insert_rejection(self, row: RejectionRow) -> None:
        """Audit a rejection or a history conflict (`row.id` is ignored: the database
        numbers the rows)."""
        self.execute(
            INSERT_REJECTION,
            rejection_values(row),
        )

    def rejections(self, instance_id: str | None = None) -> list[RejectionRow]:
        """Audited rejections, oldest first (of one instance, or all)."""
        sql = f"SELECT {REJECTION_COLUMNS} FROM statekit_rejections"
        if instance_id is None:
            rows = self.execute(sql + " ORDER BY id").fetchall()
        else:
            rows = self.execute(sql + " WHERE instance_id = ? ORDER BY id", (instance_id,))
            rows = rows.fetchall()
        return [rejection_row(r) for r in rows]

    # ---- snapshots ---------------------------------------------------------------------
    def insert_snapshot(self, row: SnapshotRow) -> None:
        """Store (or replace) the snapshot of an instance at `through_sequence`."""
        self.execute(UPSERT_SNAPSHOT, snapshot_values(row))

    def snapshots(self, instance_id: str) -> list[SnapshotRow]:
        """The snapshots of an instance, newest first."""
        rows = self.execute(
            f"SELECT {SNAPSHOT_COLUMNS} FROM statekit_snapshots WHERE instance_id = ? "
            "ORDER BY through_sequence DESC",
            (instance_id,),
        ).fetchall()
        return [SnapshotRow(*r) for r in rows]  # selected in the record's field order

    # ---- outbox ------------------------------------------------------------------------
    def insert_outbox(self, rows: Sequence[NewOutboxRow]) -> None:
        """Put messages in the outbox, pending."""
        self.executemany(
            INSERT_OUTBOX,
            [new_outbox_values(r) for r in rows],
        )

    def outbox(self, statuses: Sequence[str], instance_id: str | None = None) -> list[OutboxRow]:
        """Messages in the given states, in outbox order."""
        marks = ", ".join("?" for _ in statuses)
        sql = f"SELECT {OUTBOX_COLUMNS} FROM statekit_outbox o WHERE o.status IN ({marks})"
        params: list[Any] = list(statuses)
        if instance_id is not None:
            sql += " AND o.instance_id = ?"
            params.append(instance_id)
        rows = self.execute(sql + " ORDER BY o.id", params).fetchall()
        return [OutboxRow(*r) for r in rows]  # selected in the record's field order

    def release_outbox_claims(self, owner: str) -> int:
        """Release the claims `owner` holds on messages still pending (a dispatcher that
        lost its connection in the middle of a batch, before it claims again); how many."""
        cursor = self.execute(
            "UPDATE statekit_outbox SET claimed_by = NULL, claimed_until = NULL "
            "WHERE claimed_by = ? AND status = 'pending'",
            (owner,),
        )
        return int(cursor.rowcount)

    def next_claimable(self) -> float | None:
        """The earliest time any pending message can be claimed (None when none is
        pending): the minimum, over the pending messages at the head of their
        instance, of the later of the next attempt's time and the claim's expiry.
        One aggregate query; no message rows are loaded."""
        row = self.execute(
            "SELECT MIN(CASE WHEN o.claimed_until > o.next_attempt_at THEN o.claimed_until "
            "ELSE o.next_attempt_at END) FROM statekit_outbox o WHERE o.status = 'pending' "
            "AND NOT EXISTS (SELECT 1 FROM statekit_outbox p WHERE p.instance_id = o.instance_id "
            "AND p.status = 'pending' AND p.id < o.id)"
        ).fetchone()
        return None if row is None or row[0] is None else float(row[0])

    def settle_outbox(
        self,
        message: int,
        *,
        status: str,
        attempts: int,
        next_attempt_at: float,
        error: str | None,
        now: float,
    ) -> None:
        """Record a delivery attempt's end and release the claim."""
        delivered = now if status == "delivered" else None
        self.execute(
            "UPDATE statekit_outbox SET status = ?, attempts = ?, next_attempt_at = ?, "
            "last_error = ?, delivered_at = ?, claimed_by = NULL, claimed_until = NULL "
            "WHERE id = ? AND status = 'pending'",
            (status, attempts, next_attempt_at, error, delivered, message),
        )

    # ---- timers ------------------------------------------------------------------------
    def insert_timers(self, rows: Sequence[TimerRow]) -> None:
        """Record armed timers (the runner writes them in the transaction of the event that
        armed them); a row of the same `(instance_id, timer_id)` is replaced (a timer
        armed again: one statement instead of a delete and an insert)."""
        self.executemany(UPSERT_TIMER, [timer_values(r) for r in rows])

    def delete_timers(self, instance_id: str, timer_ids: Sequence[str]) -> None:
        """Remove the rows of timers the instance no longer has armed (cancelled, replaced
        or delivered), in the transaction of the event that did it."""
        self.executemany(DELETE_TIMER, [(instance_id, t) for t in timer_ids])

    def timers(self, instance_id: str | None = None) -> list[TimerRow]:
        """The armed timers (of one instance, or all), by due time then arming order."""
        sql = f"SELECT {TIMER_COLUMNS} FROM statekit_timers t"
        params: tuple[Any, ...] = ()
        if instance_id is not None:
            sql += " WHERE t.instance_id = ?"
            params = (instance_id,)
        rows = self.execute(sql + " ORDER BY t.due_ms, t.instance_id, t.generation", params)
        return [TimerRow(*r) for r in rows.fetchall()]  # selected in the record's field order

    def claim_due_timers(self, chart_name: str, now_ms: int, limit: int) -> list[TimerRow]:
        """Up to `limit` timers of instances of `chart_name` due at `now_ms`, earliest first
        (ties in arming order), inside the caller's write transaction; their instances
        stay locked until it ends where the dialect locks rows (`timer_lock_clause`:
        PostgreSQL skips instances another worker holds)."""
        rows = self.execute(
            f"SELECT {TIMER_COLUMNS} FROM statekit_timers t JOIN statekit_instances i "
            "ON i.instance_id = t.instance_id WHERE t.due_ms <= ? AND i.chart_name = ? "
            f"ORDER BY t.due_ms, t.generation LIMIT ?{self.timer_lock_clause}",
            (now_ms, chart_name, limit),
        ).fetchall()
        return [TimerRow(*r) for r in rows]

    def unclaimable_timers(self, now_ms: int, window: int) -> list[TimerRow]:
        """Timer rows due at `now_ms` whose instance the store does not have (never claimed:
        `claim_due_timers` joins the instance), among the `window` earliest due rows: one
        query whose work is bounded by `window` whatever the number of armed timers (the
        due-time index gives the earliest rows; nothing due, nothing read)."""
        rows = self.execute(
            f"SELECT {TIMER_COLUMNS} FROM (SELECT * FROM statekit_timers WHERE due_ms <= ? "
            "ORDER BY due_ms, generation LIMIT ?) t WHERE NOT EXISTS (SELECT 1 FROM "
            "statekit_instances i WHERE i.instance_id = t.instance_id) "
            "ORDER BY t.due_ms, t.generation",
            (now_ms, window),
        ).fetchall()
        return [TimerRow(*r) for r in rows]  # selected in the record's field order

    def upcoming_timers(self, chart_names: Sequence[str], limit: int) -> list[TimerRow]:
        """The `limit` earliest timers of instances of these charts, due or not (a worker
        sleeps until the first it can fire); reads, locks nothing."""
        marks = ", ".join("?" for _ in chart_names)
        rows = self.execute(
            f"SELECT {TIMER_COLUMNS} FROM statekit_timers t JOIN statekit_instances i ON "
            f"i.instance_id = t.instance_id WHERE i.chart_name IN ({marks}) "
            "ORDER BY t.due_ms, t.generation LIMIT ?",
            [*chart_names, limit],
        ).fetchall()
        return [TimerRow(*r) for r in rows]

    # ---- inbox -------------------------------------------------------------------------
    def inbox_claim(self, consumer: str, instance_id: str, message_id: str, now: float) -> bool:
        """Record that `consumer` processed the message; False when it already had."""
        cursor = self.execute(
            "INSERT INTO statekit_inbox (consumer, instance_id, message_id, processed_at) "
            "VALUES (?, ?, ?, ?) ON CONFLICT DO NOTHING",
            (consumer, instance_id, message_id, now),
        )
        return bool(cursor.rowcount == 1)


def _newer_schema(current: int, latest: int) -> SchemaVersionError:
    return SchemaVersionError(
        f"the database schema is at version {current}, newer than this statekit "
        f"knows ({latest}); upgrade statekit"
    )


def instance_row(row: Sequence[Any], recorded: Sequence[Any] | None) -> InstanceRow:
    """An instance row selected as `SELECT_LOCKED_INSTANCE` (the first `INSTANCE_WIDTH`
    columns of `SELECT_INSTANCE`), with `recorded` the record of the event ID asked
    about, selected as `SELECT_RECORDED` (None, or its columns None: not recorded)."""
    for name, value in (("version", row[4]), ("chart version", row[2])):
        if type(value) is not int:
            raise CorruptRowError(
                f"instance {row[0]!r}: the stored {name} {value!r} is not an integer"
            )
    columns = StateColumns(configuration=row[5], context=row[6], history=row[7], timers=row[9])
    found = (
        None
        if recorded is None or recorded[0] is None
        else RecordedId(
            sequence=recorded[0],
            payload_sha256=unpack_hash(recorded[3], recorded[4], recorded[1]),
            status=unpack_status(recorded[2]),
        )
    )
    return InstanceRow(
        instance_id=row[0],
        chart_name=row[1],
        chart_version=row[2],
        chart_digest=row[3],
        version=row[4],
        columns=columns,
        initial_context=row[8],
        recorded=found,
        start_clock_ms=row[10],
    )


class _Transaction:
    """`Store._transaction`: a class rather than a generator-based context manager, since
    every event enters one (a generator's machinery cost more than the statements'
    Python); it holds nothing of its own (the depth is the store's), so one object can
    be entered again and again, nested too."""

    __slots__ = ("_begin", "_store", "_writes")

    def __init__(self, store: Store, begin: str, writes: bool) -> None:
        self._store, self._begin, self._writes = store, begin, writes

    def __enter__(self) -> None:
        store = self._store
        if store._depth:
            store._depth += 1
            return
        if self._writes and store.hold is not None:
            store.hold(BEGIN)
        store._control(self._begin)
        store._depth = 1

    def __exit__(self, kind: type[BaseException] | None, *rest: object) -> None:
        store = self._store
        if store._depth > 1:
            store._depth -= 1
            return
        store._depth = 0
        if kind is not None:
            if store._open_transaction():
                store._control("ROLLBACK")
            return
        try:
            if self._writes and store.hold is not None:
                store.hold(COMMIT)
            store._control("COMMIT")
        except BaseException:  # a failed commit (disk full) leaves nothing half-open
            if store._open_transaction():
                store._control("ROLLBACK")
            raise
