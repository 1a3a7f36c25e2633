"""`verify`: rebuild an instance from its events alone and compare with what is stored.

It reports every difference (state, version, outbox rows, snapshots) and
never chooses a side: neither the stored row nor the replay is "corrected".
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from statekit.compiler.serialize import canonical_json
from statekit.runner.chart_versions import ChartSet
from statekit.runner.errors import UnknownInstanceError
from statekit.runner.history import fold, initial_state
from statekit.runner.snapshots import snapshot_state
from statekit.runner.store.base import Store


@dataclass(frozen=True, slots=True)
class VerifyReport:
    """The comparison of one instance with the replay of its history."""

    instance_id: str
    version: int
    replayed_version: int
    events: int
    differences: tuple[str, ...]
    snapshot_problems: tuple[str, ...]

    @property
    def ok(self) -> bool:
        """Whether the stored state, outbox and snapshots all equal the replay."""
        return not self.differences and not self.snapshot_problems

    def to_data(self) -> dict[str, Any]:
        """JSON-ready form (`statekit verify --format json`)."""
        return {
            "instance": self.instance_id,
            "ok": self.ok,
            "version": self.version,
            "replayed_version": self.replayed_version,
            "events": self.events,
            "differences": list(self.differences),
            "snapshot_problems": list(self.snapshot_problems),
        }


def verify(store: Store, charts: ChartSet, instance_id: str) -> VerifyReport:
    """Replay every event of the instance and compare (see the module docstring)."""
    with store.read():
        row = store.instance(instance_id)
        if row is None:
            raise UnknownInstanceError(f"unknown instance {instance_id!r}")
        events = store.events(instance_id)
        outbox = store.outbox(["pending", "delivered", "dead"], instance_id)
        snapshots = store.snapshots(instance_id)
    first = events[0].chart_version if events else row.chart_version
    start = initial_state(charts, first, row.initial_context)
    keep = frozenset(s.through_sequence for s in snapshots)
    replayed = fold(charts, start, events, keep)
    differences = list(replayed.problems)
    if replayed.version != row.version:
        differences.append(f"version: stored {row.version}, replayed {replayed.version}")
    if replayed.state is not None and not replayed.problems:
        data = replayed.state.to_data()
        stored = {}
        for key, text in (
            ("configuration", row.columns.configuration),
            ("context", row.columns.context),
            ("history", row.columns.history),
        ):
            try:
                stored[key] = json.loads(text)
            except ValueError:
                stored[key] = f"<not JSON: {text[:60]!r}>"
        differences.extend(_compare(stored, data))
        expected = {
            (seq, m.message_id, m.type, canonical_json(dict(m.payload)))
            for seq, messages in replayed.emitted.items()
            for m in messages
        }
        actual = {(r.sequence, r.message_id, r.type, r.payload) for r in outbox}
        for seq, mid, kind, _ in sorted(expected - actual):
            differences.append(f"outbox: message {mid} ({kind}) of event #{seq} is missing")
        for seq, mid, kind, _ in sorted(actual - expected):
            differences.append(f"outbox: message {mid} ({kind}) at #{seq} is not in the replay")
    problems: list[str] = []
    for snap in sorted(snapshots, key=lambda s: s.through_sequence):
        checked = snapshot_state(charts, snap)
        state = checked.state
        if state is None:
            problems.append(f"refused {checked.refused}")
            continue
        at = snap.through_sequence
        truth = replayed.states.get(at) if at else start.state
        if truth is None:
            problems.append(f"snapshot at {at}: the replay did not reach that sequence")
        elif truth != state:
            found = "; ".join(_compare(state.to_data(), truth.to_data(), "snapshot", "replayed"))
            problems.append(f"snapshot at {at} differs from the replay: {found}")
    return VerifyReport(
        instance_id=instance_id,
        version=row.version,
        replayed_version=replayed.version,
        events=len(events),
        differences=tuple(differences),
        snapshot_problems=tuple(problems),
    )


def _compare(
    left: Mapping[str, Any], right: Mapping[str, Any], a: str = "stored", b: str = "replayed"
) -> Iterator[str]:
    """Differences in configuration, context (per field) and history, in words."""
    if sorted(left.get("configuration", [])) != sorted(right.get("configuration", [])):
        yield f"configuration: {a} {left.get('configuration')}, {b} {right.get('configuration')}"
    lc, rc = left.get("context", {}), right.get("context", {})
    if isinstance(lc, dict) and isinstance(rc, dict):
        for key in sorted(set(lc) | set(rc)):
            if lc.get(key, "<absent>") != rc.get(key, "<absent>"):
                yield (
                    f"context.{key}: {a} {lc.get(key, '<absent>')!r}, "
                    f"{b} {rc.get(key, '<absent>')!r}"
                )
    elif lc != rc:
        yield f"context: {a} {lc!r}, {b} {rc!r}"
    if left.get("history") != right.get("history"):
        yield f"history: {a} {left.get('history')}, {b} {right.get('history')}"
