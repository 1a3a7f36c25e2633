"""The stages of the runner's one write path: read the instance, decide, write, remember.

Every way `Runner` applies events (`runner.write_path`: one command, a stream of one
instance, many instances, due timers) goes through these stages in one write
transaction, and differs only in how it has the instance rows and how many items it
decides and commits together:

- read: `read_locked` reads an instance's row, locked until the transaction ends
  where the dialect locks rows, with the record of one event ID read as of the lock
  (a redelivery racing the commit of its event is answered from that record); the
  other way to have a row is the one this runner committed last (`row_cache`),
  which the database checks when it is written (`write_path`);
- decide: `begin` starts an `InstanceTransaction` on the row's state, `facts` reads
  what the stored history says about a command (from the transaction's own events
  first, then from what the caller looked up, then from the store), `decide` decides
  a command and the undelayed sends it causes, in order;
- write and remember: `finish` passes the `DECIDED` hold point, hands everything to
  one `Store.write_decided` and remembers the row as committed (if the transaction
  does not commit, the version check finds the remembered row stale).

The stages also own what they need to decide: the state of a stored row, parsed
once per distinct text (`state_of`), the chart version an instance runs on
(`chart_of`), and the key rows record for a chart (`chart_key`).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import replace

from statekit.engine.chart import Chart
from statekit.engine.state import State
from statekit.runner.chart_versions import ChartSet
from statekit.runner.decision_inputs import Command, HistoryFacts, LookedUp
from statekit.runner.family_charts import FamilyCharts, composes
from statekit.runner.outcome import Outcome
from statekit.runner.row_cache import Cached, RowCache
from statekit.runner.store.base import Store
from statekit.runner.store.hold_points import DECIDED
from statekit.runner.store.rows import ChartKey, InstanceRow
from statekit.runner.stored_state import state_of
from statekit.runner.transaction import InstanceTransaction, read_facts


class WriteStages:
    """See the module docstring. `now_ms` reads the runner's clock (once per
    transaction); `snapshot_every` is the runner's."""

    __slots__ = (
        "_keys", "answer", "chart", "charts", "families", "family", "now_ms", "rows",
        "snapshot_every", "store",
    )  # fmt: skip

    def __init__(
        self,
        store: Store,
        chart: Chart,
        charts: ChartSet,
        *,
        snapshot_every: int | None,
        now_ms: Callable[[], int],
        family: FamilyCharts | None = None,
    ) -> None:
        self.store, self.chart, self.charts = store, chart, charts
        self.family = FamilyCharts((), store) if family is None else family
        """The other charts this runner knows (`family_charts`): invoked children's, and
        those of the instances it delivers messages to."""
        self.families = any(map(composes, (chart, *self.family.given)))
        """Whether `Runner.apply` runs as a family step (`runner.family_path`)."""
        self.snapshot_every = snapshot_every
        self.now_ms = now_ms
        self.rows = RowCache()
        self._keys: dict[str, ChartKey] = {}
        self.answer: object = None
        """What the transaction under way answers once committed: read by `retrying` when
        its COMMIT's outcome is unknown and the commit is found to have landed."""

    # ---- read --------------------------------------------------------------------------
    def read_locked(self, instance_id: str, event_id: str | None = None) -> InstanceRow | None:
        """The instance's row, locked (inside the caller's write transaction), with the
        record of `event_id` read as of the lock (None: no such instance). A row read
        at the version this runner committed last lets it decide unread again."""
        row = self.store.instance(instance_id, event_id, lock=True)
        if row is not None:
            self.rows.read(row)
        return row

    # ---- decide ------------------------------------------------------------------------
    def begin(
        self, row: InstanceRow, now_ms: int | None = None, cached: Cached | None = None
    ) -> InstanceTransaction:
        """The decisions about the instance `row` (locked, or `cached`: the row this runner
        committed last, with its state), starting from its stored state; `now_ms`: the
        clock reading of the transaction (default: read now)."""
        state = self.state_of(row) if cached is None else cached.state
        return InstanceTransaction(
            self.chart_of(row), row, state, snapshot_every=self.snapshot_every,
            now=time.time(), now_ms=self.now_ms() if now_ms is None else now_ms,
        )  # fmt: skip

    def facts(
        self, tx: InstanceTransaction, command: Command, known: LookedUp | None = None
    ) -> HistoryFacts:
        """What deciding `command` needs from the history: where its event ID is recorded
        (by this transaction's events, else as `known` found it when it asked, else in
        the store), then what `read_facts` reads."""
        recorded = tx.recorded_here(command.event_id)
        if recorded is None:
            pair = (tx.instance_id, command.event_id)
            if known is not None and pair in known.asked:
                recorded = known.found.get(pair)
            else:
                recorded = self.store.recorded_event(*pair)
        return read_facts(self.store, tx, command, recorded)

    def decide(
        self, tx: InstanceTransaction, command: Command, known: LookedUp | None = None
    ) -> Outcome:
        """One command decided in `tx`, its undelayed sends after it (their outcomes in
        `Outcome.sent`); `known`: event IDs already looked up (see `facts`)."""
        outcome = tx.decide(command, self.facts(tx, command, known))
        sent = self.decide_sends(tx)
        return replace(outcome, sent=tuple(sent)) if sent else outcome

    def decide_sends(self, tx: InstanceTransaction) -> list[Outcome]:
        """Decide the undelayed sends `tx` queued, in order, each as an event of its own
        (those they send in turn join the queue); their outcomes."""
        return [tx.decide(c, self.facts(tx, c)) for c in tx.sends()]

    # ---- write -------------------------------------------------------------------------
    def finish(self, tx: InstanceTransaction, *, last: bool = False) -> None:
        """Write what `tx` decided inside the caller's transaction (`last`: nothing else
        follows in it, see `InstanceTransaction.write`) and remember its row."""
        self.store.reach(DECIDED)
        tx.flush(self.store, self.chart_key(tx.chart), last=last)
        self.remember(tx)

    def remember(self, tx: InstanceTransaction) -> None:
        """Remember the row `tx` leaves, when it accepted an event (the stored row once the
        caller's transaction commits)."""
        if tx.events:
            self.rows.put(tx.committed_row(), tx.state)

    # ---- what deciding needs -----------------------------------------------------------
    def state_of(self, row: InstanceRow) -> State:
        """The row's state; parsed once per distinct stored text (rows are immutable per
        version, and equal text gives an equal state)."""
        state = self.rows.state_for(row)
        if state is None:
            state = state_of(self.chart_of(row), row, self.store.timers)
            self.rows.put(replace(row, recorded=None) if row.recorded else row, state)
        return state

    def chart_named(self, name: str, version: int | None = None) -> Chart | None:
        """Version `version` (None: the newest known) of chart `name`: the runner's own or
        one of `family`; None when it knows no such chart."""
        if name == self.chart.name:
            return self.chart if version is None else self.charts.get(version)
        if version is None:
            return self.family.current(name)
        return self.family.version(name, version)

    def chart_set(self, name: str) -> ChartSet | None:
        """The versions of chart `name` this runner knows (None: none)."""
        return self.charts if name == self.chart.name else self.family.chart_set(name)

    def chart_key(self, chart: Chart) -> ChartKey:
        """The key rows record for `chart` (built once per chart)."""
        key = self._keys.get(chart.digest)
        if key is None:
            key = self._keys[chart.digest] = chart_key(chart)
        return key

    def chart_of(self, row: InstanceRow) -> Chart:
        """The chart of the version the instance runs on: the runner's, an older one it
        was given or the store kept, one of another name it knows (`family`), else the
        runner's (then `state_of` says why it does not fit)."""
        chart = self.chart
        if row.chart_digest == chart.digest:
            return chart
        if row.chart_name != chart.name:  # an instance of another chart (a family's member)
            other = self.family.chart_of(row)
            return chart if other is None else other
        if isinstance(row.chart_version, int) and row.chart_version < chart.version:
            older = self.charts.get(row.chart_version)
            if older is not None and older.digest == row.chart_digest:
                return older
        return chart


def chart_key(chart: Chart) -> ChartKey:
    """The key rows record for `chart`: its name, version and digest."""
    return ChartKey(name=chart.name, version=chart.version, digest=chart.digest)


def known_from(row: InstanceRow, event_id: str | None) -> LookedUp | None:
    """What a locked read found about `event_id` (read with the row), as `facts` takes it."""
    if event_id is None:
        return None
    pair = (row.instance_id, event_id)
    recorded = row.recorded
    return LookedUp(asked=frozenset((pair,)), found={} if recorded is None else {pair: recorded})
