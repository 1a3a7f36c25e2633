"""Migrating an instance to a newer version of its chart: the mapping and its history entry.

An instance stays on the chart version it was created under; it moves to a
newer version only by `Runner.migrate`, which writes one history entry of its
own: an event row with the reserved event ID `statekit.migrate.v<from>.v<to>`
and type `statekit.migrate`, taking the next sequence (so a writer holding the
old version gets VERSION_CONFLICT and re-reads). Its payload is what was
mapped (`from`, `to`, the `mapping`); its evidence adds both chart digests and
the sha256 of the state before and after (of `State.to_json`, the text a
snapshot hashes). Replay (`history.fold`) maps the state again with the
mapping the newer chart declares and `verify` compares the entry with it.

The mapping itself (`map_state`, `Mapped`, `Stranded`) is pure and lives in
`statekit.engine.state_migration` (the analysis asks it too); `Mapped.timer_ids`,
`retimed`, `dropped_timers` and `armed_timers` (those of the states a migration
enters, due from the clock reading the entry records as its `clock_ms`) say which
timer rows the runner (`Runner.migrate`) and the replay (`history.fold`) rewrite.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from statekit.compiler.canonical import canonical_json
from statekit.engine.chart import Chart
from statekit.engine.state import State
from statekit.engine.state_migration import Mapped, Stranded, map_state
from statekit.engine.timer_migration import moved_timer_id
from statekit.runner.hashes import text_sha256

__all__ = [
    "MIGRATE_PREFIX",
    "MIGRATE_TYPE",
    "Mapped",
    "MigrationReport",
    "Stranded",
    "entry_evidence",
    "entry_payload",
    "is_migration",
    "map_state",
    "migration_event_id",
    "moved_timer_id",
    "state_sha256",
]

MIGRATE_TYPE = "statekit.migrate"
"""The type of a migration entry in a history."""
MIGRATE_PREFIX = "statekit.migrate."
"""The start of a migration entry's (reserved) event ID."""


def migration_event_id(from_version: int, to_version: int) -> str:
    """The reserved event ID of the entry migrating from `from_version` to `to_version`."""
    return f"{MIGRATE_PREFIX}v{from_version}.v{to_version}"


def is_migration(event_id: str, type: str) -> bool:
    """Whether an event row is a migration entry (its ID is reserved: no caller can send it)."""
    return type == MIGRATE_TYPE and event_id.startswith(MIGRATE_PREFIX)


def state_sha256(state: State) -> str:
    """The sha256 a migration entry records for a state (of its `to_json` text)."""
    return text_sha256(state.to_json())


def entry_payload(from_version: int, to_version: int, mapping: Mapping[str, Any]) -> dict[str, Any]:
    """The payload of a migration entry."""
    return {"from": from_version, "to": to_version, "mapping": dict(mapping)}


def entry_evidence(before: State, after: State, old: Chart, new: Chart, mapped: Mapped) -> str:
    """The evidence of a migration entry, as canonical JSON (what replay recomputes)."""
    return canonical_json(
        {
            "migration": {
                "from": old.version,
                "to": new.version,
                "from_digest": old.digest,
                "to_digest": new.digest,
                "mapping": mapped.mapping,
                "state_sha256_before": state_sha256(before),
                "state_sha256_after": state_sha256(after),
            }
        }
    )


@dataclass(frozen=True, slots=True)
class MigrationReport:
    """What `Runner.migrate` did or would do with one instance.

    `status`: `MIGRATED` (an entry was written at `sequence`), `WOULD_MIGRATE`
    (a dry run that would), `CURRENT` (already on this version: nothing to
    do), `STRANDED` (`reason` says why; nothing written).
    """

    instance_id: str
    status: str
    from_version: int
    to_version: int
    configuration: tuple[str, ...]
    mapped_configuration: tuple[str, ...] = ()
    reason: str | None = None
    mapping: Mapping[str, Any] = field(default_factory=dict)
    state_sha256_before: str | None = None
    state_sha256_after: str | None = None
    sequence: int | None = None

    def to_data(self) -> dict[str, Any]:
        """JSON-ready form (`statekit migrate --format json`)."""
        return {
            "instance": self.instance_id,
            "status": self.status,
            "from": self.from_version,
            "to": self.to_version,
            "configuration": list(self.configuration),
            "mapped_configuration": list(self.mapped_configuration),
            "reason": self.reason,
            "mapping": dict(self.mapping),
            "state_sha256_before": self.state_sha256_before,
            "state_sha256_after": self.state_sha256_after,
            "sequence": self.sequence,
        }
