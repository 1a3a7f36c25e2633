"""The runner's one write path: every way `Runner` applies events, as parameters of one
pipeline (`write_stages`: read the instance, decide, write, remember).

- `apply`: the row this runner committed last (`row_cache`), else the row locked;
  one command and its sends; committed with its writes (`last`).
- `apply_batch`: the row locked; the commands of one instance, in order; committed
  together (`last`).
- `apply_many`: many instances' rows locked, in sorted order, their event IDs looked
  up together; committed together, with one savepoint per command when the database
  refuses a row (`group_commit`).
- `fire_due`: due timer rows claimed, then their instances locked (`timer_firing`);
  deliveries of many instances, committed per batch of timers, one transaction per
  timer when the database refuses a row.

Whatever the way, where an event ID is recorded is read once its instance is locked
(with the locked read for the first event ID of `apply`, `apply_batch` and each
instance of `fire_due`; in a few statements for all of `apply_many`'s), so a
redelivery racing the commit of its event is answered from that record
(`tests/runner/test_redelivery_races.py` forces each interleaving for each way).

Deciding unread (`apply` on a cached row): the command and its sends are decided on
the row this runner committed last, with only the transaction's own events as history
(`InstanceTransaction.local_facts`); when all are accepted the rows are written with
an instance update that also checks the row's texts (`unread`), and the database's
unique indexes check the event IDs and business keys. A command not accepted so is
decided again on the rows read, in the same transaction (what it reports must come
from the stored row); a row found stale or a row refused rolls the transaction back
and the command is decided again on the rows read, in a new one, with the same clock
reading (`_Stale`); the instance is then read first until a read shows nobody else
writes it (`RowCache.stale`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from statekit.engine import observers
from statekit.runner.decision_inputs import Command
from statekit.runner.errors import RunnerError, StoreFailure, UnknownInstanceError
from statekit.runner.family_path import apply_in_family, fire_in_family
from statekit.runner.group_commit import Item, run_group
from statekit.runner.outcome import Outcome
from statekit.runner.row_cache import Cached
from statekit.runner.store.hold_points import DECIDED, LOCKED
from statekit.runner.timer_firing import TimerKey, fire_due, row_error
from statekit.runner.write_stages import WriteStages, known_from


class WritePath(WriteStages):
    """See the module docstring: the four ways of applying, over the stages."""

    __slots__ = ()

    def apply(self, instance_id: str, command: Command) -> Outcome:
        """`Runner.apply` of a checked command: on the cached row when this runner holds
        one (the instance not contended), else (or when it proved stale) on the rows
        read; installed observers see its steps once they are committed."""
        if self.families:  # a runner whose charts compose: every step is a family step
            with observers.instance_scope(instance_id):
                return apply_in_family(self, instance_id, command)
        now_ms: int | None = None
        cached = self.rows.writable(instance_id)
        if cached is not None:
            try:
                if not observers.installed:
                    # Nobody to hold steps for or to tell the instance (the usual case):
                    # without the two scopes, which cost as much as a statement here.
                    return self._apply_unread(cached, command, None)
                held: list[observers.Notification] = []
                with observers.instance_scope(instance_id), observers.holding(held):
                    outcome = self._apply_unread(cached, command, held)
                observers.deliver(held)
                return outcome
            except _Stale as stale:  # nothing written: its steps are not delivered
                self.rows.stale(instance_id)
                now_ms = stale.now_ms
        with observers.instance_scope(instance_id), self.store.write():
            return self._apply_locked(instance_id, (command,), now_ms, one=True)[0]

    def apply_batch(self, instance_id: str, commands: Sequence[Command]) -> list[Outcome]:
        """`Runner.apply_batch` of checked commands: all in one transaction on the locked
        row, each against the state the previous ones left."""
        with self.store.write(), observers.instance_scope(instance_id):
            if self.families:  # one family step per command, all in this transaction
                return [apply_in_family(self, instance_id, c) for c in commands]
            return self._apply_locked(instance_id, commands, None, one=False)

    def apply_many(self, commands: Sequence[tuple[str, Command | Exception]]) -> list[Item]:
        """`Runner.apply_many` of checked commands (or the error checking one gave); for a
        runner taking the family path, each a family step in its own transaction."""
        if self.families:
            return [self._one_family_step(i, c) for i, c in commands]
        items, accepted = run_group(self, commands)
        for tx in accepted:  # (their rows may be written already: `remember` would skip them)
            self.rows.put(tx.committed_row(), tx.state)
        return items

    def fire_due(self, now_ms: int, limit: int, problems: dict[TimerKey, str]) -> list[Outcome]:
        """`Runner.fire_due` at `now_ms` (`problems`: the runner's `timer_problems`)."""
        if self.families:
            return fire_in_family(self, problems, now_ms, limit)
        return fire_due(self, problems, now_ms, limit)

    def _one_family_step(self, instance_id: str, command: Command | Exception) -> Item:
        """One command of `apply_many` as a family step: its outcome, or the error."""
        if isinstance(command, Exception):
            return command
        try:
            with observers.instance_scope(instance_id):
                return apply_in_family(self, instance_id, command)
        except (RunnerError, ValueError) as exc:
            if isinstance(exc, StoreFailure):
                raise
            return exc

    # ---- the two reads of `apply` and `apply_batch` --------------------------------------
    def _apply_unread(
        self, cached: Cached, command: Command, held: list[observers.Notification] | None
    ) -> Outcome:
        """`apply` on the row this runner holds, reading nothing when the command and its
        sends are accepted; `_Stale`, with nothing written, when the database finds the
        row stale or records more about an event. A command not accepted (a rejection,
        a conflict) is decided again on the rows read, in the same transaction (the
        steps of the decision taken back are dropped from `held`, the observer
        notifications the caller delivers once this transaction committed; None when no
        observer is installed)."""
        row = cached.row
        with self.store.write():
            now_ms = self.now_ms()
            tx = self.begin(row, now_ms, cached)
            outcome = tx.decide(command, tx.local_facts(command))
            sent: list[Outcome] = []
            accepted = bool(tx.events)
            for c in tx.sends() if accepted else ():
                sent.append(tx.decide(c, tx.local_facts(c)))
                if len(tx.events) != len(sent) + 1:
                    accepted = False
                    break
            if not accepted:
                if held is not None:
                    held.clear()
                return self._apply_locked(row.instance_id, (command,), now_ms, one=True)[0]
            self.store.reach(DECIDED)
            answer = replace(outcome, sent=tuple(sent)) if sent else outcome
            self.answer = answer  # `retrying`: the answer if the commit's fate is unknown
            try:
                written = tx.write(self.store, self.chart_key(tx.chart), unread=True, last=True)
            except Exception as exc:
                if not row_error(exc):
                    raise
                written = False
            if not written:
                raise _Stale(now_ms)
        self.rows.put(tx.committed_row(), tx.state)
        return answer

    def _apply_locked(
        self, instance_id: str, commands: Sequence[Command], now_ms: int | None, *, one: bool
    ) -> list[Outcome]:
        """Inside a write transaction: read the instance row (locked) with the record of
        the first command's event ID, decide the commands in order (each with its
        sends), write, remember the row (if the caller's transaction does not commit,
        the version check finds it stale)."""
        first = commands[0].event_id if commands else None
        row = self.read_locked(instance_id, first)
        if row is None:
            raise UnknownInstanceError(f"unknown instance {instance_id!r}")
        self.store.reach(LOCKED)
        tx = self.begin(row, now_ms)
        known = known_from(row, first)
        outcomes = [self.decide(tx, c, known) for c in commands]
        # `retrying`: the answer if the commit's fate is unknown (`apply`'s is its one outcome)
        self.answer = outcomes[0] if one else outcomes
        self.finish(tx, last=True)
        return outcomes


class _Stale(Exception):
    """The cached row is not the stored one, or the store records more about a command
    than the cache assumed (nothing was written: decide again on the rows read, with
    the same clock reading `now_ms`)."""

    def __init__(self, now_ms: int) -> None:
        super().__init__(now_ms)
        self.now_ms = now_ms
