"""The schema and the registry of charts: creating and upgrading the tables (`migrations`),
checking the schema a reader opens, the chart versions the store has seen, and the
cross-table checks `verify` reports (rows naming an instance, chart or message the store
does not have).
"""

from __future__ import annotations

import time
from collections.abc import Sequence

from statekit.runner.errors import (
    ChartVersionError,
    NoStoreError,
    SchemaVersionError,
)
from statekit.runner.store.migrations import (
    LATEST,
    MIGRATIONS,
    MIGRATIONS_TABLE,
    Migration,
    create_migrations_table,
)
from statekit.runner.store.rows import (
    ChartRow,
    stored_int_problem,
)
from statekit.runner.store.sql_access import SqlAccess


class SchemaQueries(SqlAccess):
    """A `Store`'s schema, chart registry and cross-table checks (see the module docstring)."""

    __slots__ = ()

    # ---- schema ------------------------------------------------------------------------
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


def _newer_schema(current: int, latest: int) -> SchemaVersionError:
    return SchemaVersionError(
        f"the database schema is at version {current}, newer than this statekit "
        f"knows ({latest}); upgrade statekit"
    )
