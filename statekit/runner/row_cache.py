"""The last instance row a `Runner` committed or read, per instance, with its state parsed.

Two uses. Reading: a stored row's state is parsed once per distinct stored
text (`state_for`). Writing without reading first (`Runner.apply`): an
instance's row changes only with its version (every writer moves the version
with the columns, in one version-guarded update), so the row this runner last
committed is the stored row for as long as the stored version is the one it
holds. The runner decides on the cached row and lets the database check it:
the version-guarded update finds the row elsewhere (another process or
`Runner` wrote in between), or a unique index refuses the event row (its
event ID or business key is recorded); then the transaction is rolled back
and the command decided again on the rows read, as if the cache had not been
there. An instance found stale is `contended`: it is read first until a read
shows that nobody else wrote since this runner's last write, so two writers
taking turns on one instance do not pay for a failed attempt each time.
"""

from __future__ import annotations

from dataclasses import dataclass

from statekit.engine.state import State
from statekit.runner.store.rows import InstanceRow, positional

LIMIT = 10_000
"""How many instances the cache holds (it starts over when full)."""


@dataclass(frozen=True, slots=True)
class Cached:
    """An instance row as stored at `row.version` (`recorded` None) and its state."""

    row: InstanceRow
    state: State


_cached = positional(Cached, "row", "state")


class RowCache:
    """See the module docstring."""

    __slots__ = ("_contended", "_rows")

    def __init__(self) -> None:
        self._rows: dict[str, Cached] = {}
        self._contended: set[str] = set()

    def put(self, row: InstanceRow, state: State) -> None:
        """Remember `row` (as stored: committed by this runner or read) and its state."""
        if len(self._rows) >= LIMIT:
            self._rows.clear()
            self._contended.clear()
        self._rows[row.instance_id] = _cached(row, state)  # one per event

    def state_for(self, row: InstanceRow) -> State | None:
        """The parsed state of `row` when the cached row of its instance is at the same
        version, with the same stored texts and chart (name, version and digest: a row
        naming another chart is checked as a row never seen). The version too: the
        timers are rows of their own, which a cancelled timer changes and the texts do
        not show."""
        cached = self._rows.get(row.instance_id)
        if cached is None:
            return None
        held = cached.row
        if (
            held.version == row.version
            and held.columns == row.columns
            and held.chart_digest == row.chart_digest
            and held.chart_name == row.chart_name
            and held.chart_version == row.chart_version
        ):
            return cached.state
        return None

    def writable(self, instance_id: str) -> Cached | None:
        """The row to decide on without reading first (None: read it)."""
        if instance_id in self._contended:
            return None
        return self._rows.get(instance_id)

    def stale(self, instance_id: str) -> None:
        """The cached row proved stale: read the instance first from now on."""
        self._contended.add(instance_id)

    def read(self, row: InstanceRow) -> None:
        """The instance was read at `row.version`: when that is the version this runner
        holds, nobody wrote in between, and writing without reading first resumes."""
        if row.instance_id in self._contended:
            cached = self._rows.get(row.instance_id)
            if cached is not None and cached.row.version == row.version:
                self._contended.discard(row.instance_id)


class ReadFirst(RowCache):
    """The cache of a runner writing in the application's transaction
    (`Runner.in_transaction`): it parses states once per text as `RowCache` does, but
    never offers a row to decide on unread, since a row this block wrote is the stored
    one only if the application commits. It lives as long as the block."""

    __slots__ = ()

    def writable(self, instance_id: str) -> Cached | None:
        """None: always read the instance (locked) first."""
        return None
