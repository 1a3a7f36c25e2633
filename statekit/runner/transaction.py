"""The decisions of one write transaction on one locked instance.

`InstanceTransaction` classifies each command in turn (duplicate ID, duplicate
fact by idempotency key, sequence, expected version, then the pure `chart.send`)
and queues the rows to write (`transaction_rows`: the state after each decision,
the rows, `flush(store)` writing them with one `Store.write_decided`); a timer
delivery is decided by `fire` (`timer_delivery`). Every step gets the
transaction's clock reading (`now_ms`), which each event row records. An accepted
event's undelayed sends are queued (`sends`): the caller decides each in turn,
right after it, in the same transaction. Deciding reads nothing: what the stored
history says about a command (`HistoryFacts`, `decision_inputs`) is read by the
caller first, `read_facts` being the way to do it. The runner's write path
(`runner.write_path`) runs every way of applying through it: one command, many
commands of one stream, many instances, timer deliveries.
"""

from __future__ import annotations

from statekit.compiler.canonical import canonical_json
from statekit.engine.result import Result, Status
from statekit.runner.decision_inputs import (
    NOTHING_RECORDED,
    Command,
    HistoryFacts,
    LookedUp,
)
from statekit.runner.family_told import family_told
from statekit.runner.hashes import payload_text_and_digest
from statekit.runner.identifier_bounds import key_refusal, key_too_long
from statekit.runner.outcome import (
    DUPLICATE_OR_OLD_SEQUENCE,
    EVENT_ID_PAYLOAD_CONFLICT,
    KEY_TOO_LONG,
    SEQUENCE_GAP,
    VERSION_CONFLICT,
    Conflict,
    Outcome,
)
from statekit.runner.repeated_facts import RepeatedFact
from statekit.runner.store.base import Store
from statekit.runner.store.rows import RecordedId, RecordedKey, RejectionRow
from statekit.runner.timer_delivery import TimerDelivery, delivery_command
from statekit.runner.timers import SEND_PREFIX
from statekit.runner.transaction_rows import (
    ALREADY,
    CONFLICT,
    REJECTED,
    Mark,
    TransactionRows,
    outbox_rows,
)

__all__ = [
    "NOTHING_RECORDED",
    "Command",
    "HistoryFacts",
    "InstanceTransaction",
    "LookedUp",
    "Mark",
    "TransactionRows",
    "delivery_command",
    "outbox_rows",
    "read_facts",
]


class InstanceTransaction(TimerDelivery):
    """See the module docstring; `state`, `columns` and `version` follow each decision
    (`TransactionRows`), `now` is the time every row written by this transaction
    records."""

    __slots__ = ()

    def sequence_to_look_up(self, command: Command) -> int | None:
        """The sequence whose event ID `decide` reports for a command whose event ID is
        not recorded: the holder of a taken sequence, or the event that came first when
        `expected_version` is stale; None when the decision needs none."""
        version, sequence, expected = self.version, command.sequence, command.expected_version
        if sequence is not None and sequence != version + 1:
            return sequence if sequence <= version else None
        if expected is not None and 0 <= expected < version:
            return expected + 1
        return None

    def local_facts(self, command: Command) -> HistoryFacts:
        """What this transaction's own events say about `command` (`read_facts` without
        the store): the facts a command is decided on without reading (see
        `runner.row_cache`), which the unique indexes check when it is accepted."""
        recorded = self.recorded_here(command.event_id)
        if recorded is not None:
            return HistoryFacts(recorded=recorded)
        if self._keys:
            key = self.key_of(command)
            holder = None if key is None else self.key_here(command.type, key)
            if holder is not None:
                return HistoryFacts(key_holder=holder)
        sequence = self.sequence_to_look_up(command)
        if sequence is None:
            return NOTHING_RECORDED
        return HistoryFacts(event_id_at_sequence=self.event_id_here(sequence))

    def decide(self, command: Command, facts: HistoryFacts) -> Outcome:
        """Classify one command against the current state and `facts` (see
        `read_facts`); queue its rows."""
        c, version, state = command, self.version, self.state
        race, recorded = c.after_conflict, facts.recorded
        text, raw = payload_text_and_digest(c.type, c.payload)
        digest = raw.hex()
        if recorded is not None:  # this event ID is already in the history
            sequence, status = recorded.sequence, recorded.status
            if recorded.payload_sha256 == digest:
                return Outcome(
                    status=ALREADY,
                    reason=None,
                    version=version,
                    state=state,
                    event_id=c.event_id,
                    sequence=sequence,
                    duplicate=True,
                    race=race,
                    message=f"event {c.event_id!r} was recorded at sequence {sequence} ({status})",
                )
            conflict = Conflict(
                reason=EVENT_ID_PAYLOAD_CONFLICT,
                expected_version=c.expected_version,
                version=version,
                event_id=c.event_id,
                sequence=sequence,
            )
            message = (
                f"event {c.event_id!r} was recorded at sequence {sequence} with another payload;"
                " nothing applied"
            )
            return self._audit(c, text, digest, conflict, message)
        if facts.key_holder is not None:  # another event ID recorded this fact
            return self._same_fact(c, text, digest, facts.key_holder)
        if c.sequence is not None and c.sequence != version + 1:
            if c.sequence <= version:
                holder = facts.event_id_at_sequence
                conflict = Conflict(
                    reason=DUPLICATE_OR_OLD_SEQUENCE,
                    expected_version=c.sequence - 1,
                    version=version,
                    event_id=holder,
                    sequence=c.sequence,
                )
                message = f"sequence {c.sequence} is taken by event {holder!r}"
                return self._audit(c, text, digest, conflict, message)
            return Outcome(
                status=CONFLICT,
                reason=SEQUENCE_GAP,
                version=version,
                state=state,
                event_id=c.event_id,
                conflict=Conflict(
                    reason=SEQUENCE_GAP, expected_version=c.sequence - 1, version=version
                ),
                missing=(version + 1, c.sequence - 1),
                race=race,
                message=f"sequence {c.sequence} arrived at version {version}: "
                f"{version + 1}..{c.sequence - 1} missing; nothing applied",
            )
        expected = c.expected_version
        if expected is not None and expected != version:
            winner = facts.event_id_at_sequence if 0 <= expected < version else None
            conflict = Conflict(
                reason=VERSION_CONFLICT,
                expected_version=expected,
                version=version,
                event_id=winner,
                sequence=expected + 1 if winner is not None else None,
            )
            came = f" (event {winner!r} came first)" if winner else ""
            return Outcome(
                status=CONFLICT,
                reason=VERSION_CONFLICT,
                version=version,
                state=state,
                event_id=c.event_id,
                conflict=conflict,
                race=race,
                message=f"expected version {expected}, the instance is at "
                f"{version}{came}; re-read and decide again",
            )
        if not c.event_id.startswith(SEND_PREFIX):
            self._root, self._sent = c.event_id, 0
        refusal = key_refusal(self.key_of(c), c.event_id)
        if refusal is not None:  # the stores could not index it: refused before they see it
            return self._reject(c, text, digest, KEY_TOO_LONG, refusal)
        told = family_told(self.chart, self.instance_id, c.event_id, c.type, c.payload)
        result = self.chart.send(
            state, c.type, told, event_id=c.event_id, now_ms=self.now_ms,
            instance_id=self.instance_id,
        )  # fmt: skip
        if result.status is Status.REJECTED:
            return self._reject(c, text, digest, result.reason or "", result.message, result)
        return self._accept(c, text, digest, raw, result)

    def refuse(self, command: Command, reason: str, message: str) -> Outcome:
        """Record `command` as REJECTED for `reason` before the chart sees it (a family
        step's event for an ended child, `runner.family_step`) and report it."""
        text, raw = payload_text_and_digest(command.type, command.payload)
        return self._reject(command, text, raw.hex(), reason, message)

    def _reject(
        self,
        c: Command,
        text: str,
        digest: str,
        reason: str,
        message: str | None,
        result: Result | None = None,
    ) -> Outcome:
        """Record `c` as rejected (`reason`, `message`; `result`: the engine's rejection,
        None when the runner refused it first) and report it; nothing else changes."""
        race = c.after_conflict
        detail = {} if race is None else {"race": race.to_data()}
        self.rejections.append(
            RejectionRow(
                instance_id=self.instance_id,
                event_id=c.event_id,
                type=c.type,
                payload=text,
                payload_sha256=digest,
                status=REJECTED.value,
                reason=reason,
                message=message,
                version=self.version,
                detail=canonical_json(detail),
                recorded_at=self.now,
            )
        )
        return Outcome(
            status=REJECTED,
            reason=reason,
            version=self.version,
            state=self.state,
            event_id=c.event_id,
            result=result,
            message=message,
            race=race,
        )

    def _same_fact(self, c: Command, text: str, digest: str, holder: RecordedKey) -> Outcome:
        """The outcome of a new event ID whose idempotency key `holder` recorded: an
        audited duplicate when the payloads agree, else an audited BUSINESS_KEY_CONFLICT."""
        fact = RepeatedFact(
            c.type,
            self.key_of(c),
            holder.event_id,
            holder.sequence,
            holder.payload_sha256 == digest,
        )
        conflict = fact.conflict(c.expected_version, self.version)
        message = fact.message()
        self._audit_row(c, text, digest, ALREADY if fact.same else CONFLICT, conflict, message)
        return self._repeated(c, fact, conflict, message)

    def _audit(
        self, c: Command, text: str, digest: str, conflict: Conflict, message: str
    ) -> Outcome:
        """Record a history conflict for investigation; return its CONFLICT outcome."""
        self._audit_row(c, text, digest, CONFLICT, conflict, message)
        return Outcome(
            status=CONFLICT,
            reason=conflict.reason,
            version=self.version,
            state=self.state,
            event_id=c.event_id,
            message=message,
            conflict=conflict,
            race=c.after_conflict,
        )


def read_facts(
    store: Store, tx: InstanceTransaction, command: Command, recorded: RecordedId | None
) -> HistoryFacts:
    """What deciding `command` in `tx` needs from the history, read from this transaction's
    own events first and then from `store`; `recorded` is where its event ID is recorded
    (already looked up by the caller)."""
    if recorded is not None:
        return HistoryFacts(recorded=recorded)
    holder: RecordedKey | None = None
    key = tx.key_of(command)
    if key is not None and key_too_long(key) is None:  # a longer one is refused unread
        holder = tx.key_here(command.type, key)
        if holder is None:
            holder = store.recorded_key(tx.instance_id, command.type, key)
        if holder is not None:
            return HistoryFacts(key_holder=holder)
    sequence = tx.sequence_to_look_up(command)
    if sequence is None:
        return NOTHING_RECORDED
    event_id = tx.event_id_here(sequence)
    if event_id is None:
        event_id = store.event_id_at(tx.instance_id, sequence)
    return HistoryFacts(event_id_at_sequence=event_id)
