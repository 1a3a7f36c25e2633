"""Snapshots: the state after N events, to rebuild an instance without its whole history.

A snapshot stores its through-sequence, the state's canonical JSON, that
text's sha256, the chart digest and version, and the engine version. It is
used only when all of them check out: the hash matches the text, the digest
is the one of the chart of that version the runner has, the engine version
is one this one trusts (the same step semantics and state format, whatever
the package's version), and the state loads into the chart. Anything else is
refused and reported, and the next older snapshot (finally the empty history)
is tried instead. A snapshot that is consistent but wrong (its hash matches a
state the history never produced) passes these checks; `verify` finds it by
full replay.

An instance whose events were thinned by retention through sequence N
(`statekit.runner.retention`) is rebuilt from a snapshot at N or later only:
an older one, or the empty history, would replay events whose payloads are gone.
"""

from __future__ import annotations

from dataclasses import dataclass

from statekit.engine.state import STATE_FORMAT, State, StateFormatError
from statekit.runner.chart_versions import ChartSet
from statekit.runner.errors import UnknownInstanceError
from statekit.runner.hashes import text_sha256
from statekit.runner.history import Replayed, created_under, fold, initial_state
from statekit.runner.json_text import parse_json
from statekit.runner.store.base import Store
from statekit.runner.store.retention_queries import NOTHING_PRUNED, watermarks
from statekit.runner.store.rows import SnapshotRow

STEP_SEMANTICS = 1
"""The revision of what a step computes from a chart, a state and an event. A release
that changes that bumps it (and says so in CHANGELOG.md); a release that does not keeps
it, so upgrading statekit does not throw away the snapshots of every store."""

ENGINE_VERSION = f"statekit-semantics-{STEP_SEMANTICS}/state-{STATE_FORMAT}"
"""Recorded with every snapshot: a snapshot made under other step semantics or another
state format is not trusted (it is refused and the events are replayed instead)."""

SAME_ENGINE = frozenset({ENGINE_VERSION, f"statekit-0.1.0/state-{STATE_FORMAT}"})
"""The engine versions whose snapshots this one trusts: its own, and the form every
release up to 0.1.0 wrote (the package's version, of the same step semantics)."""


@dataclass(frozen=True, slots=True)
class Rebuilt:
    """An instance rebuilt from its history: the state at `version`, the snapshot it
    started from (its through-sequence, None for the empty history), the snapshots
    refused on the way (why, in words), the events replayed, and any problem
    replaying them (then `state` is where the replay stopped)."""

    instance_id: str
    state: State | None
    version: int
    snapshot: int | None
    refused: tuple[str, ...]
    replayed: int
    problems: tuple[str, ...]


def snapshot_row(instance_id: str, sequence: int, state: State, now: float) -> SnapshotRow:
    """The snapshot of `state` after `sequence` events."""
    text = state.to_json()
    return SnapshotRow(
        instance_id=instance_id,
        through_sequence=sequence,
        state=text,
        state_sha256=text_sha256(text),
        chart_digest=state.chart_digest,
        chart_version=state.to_data()["version"],
        engine_version=ENGINE_VERSION,
        created_at=now,
    )


@dataclass(frozen=True, slots=True)
class CheckedSnapshot:
    """A stored snapshot after its checks: its state, or None and why it is refused."""

    state: State | None
    refused: str | None = None


def snapshot_state(charts: ChartSet, row: SnapshotRow) -> CheckedSnapshot:
    """The snapshot's state when every check passes (see the module docstring)."""
    where = f"snapshot at {row.through_sequence}"
    if text_sha256(row.state) != row.state_sha256:
        why = f"{where}: state sha256 does not match its text (tampered or damaged)"
        return CheckedSnapshot(state=None, refused=why)
    if row.engine_version not in SAME_ENGINE:
        why = f"{where}: made by engine {row.engine_version}, this is {ENGINE_VERSION}"
        return CheckedSnapshot(state=None, refused=why)
    chart = charts.get(row.chart_version)
    if chart is None or chart.digest != row.chart_digest:
        why = (
            f"{where}: chart digest {row.chart_digest} (version {row.chart_version}) is not "
            "a chart this runner has"
        )
        return CheckedSnapshot(state=None, refused=why)
    try:
        return CheckedSnapshot(state=State.from_json(chart, parse_json(row.state)))
    except (StateFormatError, ValueError) as exc:
        return CheckedSnapshot(state=None, refused=f"{where}: state does not load: {exc}")


def rebuild(store: Store, charts: ChartSet, instance_id: str) -> Rebuilt:
    """The instance's state from the newest valid snapshot plus the later events (a timer
    delivery after it that repeated a fact recorded before it finds the fact's holder in
    the store)."""
    with store.read():
        row = store.instance(instance_id)
        if row is None:
            raise UnknownInstanceError(f"unknown instance {instance_id!r}")
        refused: list[str] = []
        start: Replayed | None = None
        pruned = watermarks(store, instance_id).get(instance_id, NOTHING_PRUNED).events_through
        for snap in store.snapshots(instance_id):
            if snap.through_sequence < pruned:
                refused.append(
                    f"snapshot at {snap.through_sequence}: before the events pruned "
                    f"(through {pruned})"
                )
                continue
            if snap.through_sequence > row.version:
                refused.append(
                    f"snapshot at {snap.through_sequence}: beyond the history ({row.version})"
                )
                continue
            checked = snapshot_state(charts, snap)
            if checked.state is not None:
                start = Replayed(state=checked.state, version=snap.through_sequence)
                break
            refused.append(checked.refused or "")
        through = start.version if start is not None else 0
        events = store.events(instance_id, after=through)
        snapshot = start.version if start is not None else None
        if start is None and pruned:
            problem = (
                f"events 1..{pruned} were pruned and no snapshot at or after {pruned} can be "
                "used: the instance cannot be rebuilt"
            )
            return Rebuilt(instance_id, None, 0, None, tuple(refused), 0, (problem,))
        if start is None:
            first = created_under(events, row.chart_version)
            start = initial_state(
                charts, first, row.initial_context, row.start_clock_ms, instance_id=instance_id
            )
            done = fold(charts, start, events, instance_id=instance_id)
        else:  # the facts recorded before the snapshot are the store's (in this transaction)
            done = fold(
                charts,
                start,
                events,
                recorded_key=lambda event_type, key: store.recorded_key(
                    instance_id, event_type, key
                ),
                instance_id=instance_id,
            )
    return Rebuilt(
        instance_id=instance_id,
        state=done.state,
        version=done.version,
        snapshot=snapshot,
        refused=tuple(refused),
        replayed=done.version - through,
        problems=done.problems,
    )
