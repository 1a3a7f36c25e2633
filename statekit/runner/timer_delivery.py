"""Deciding the delivery of a due timer in an instance's transaction (`fire`).

A delivery is the event `statekit.timer/<id>/<generation>` (`timers.timer_event_id`)
of the timer's event and payload (`delivery_command`): one already recorded is
ALREADY_APPLIED; a timer no longer armed is STALE_TIMER, a paused one PAUSED_TIMER,
and neither writes anything; one
the chart rejects, or whose event repeats a recorded fact, consumes the timer and
is recorded as a rejected delivery (`runner.repeated_facts`).
"""

from __future__ import annotations

from dataclasses import replace

from statekit.engine.result import PAUSED_TIMER, STALE_TIMER, Status
from statekit.engine.timers import ArmedTimer
from statekit.runner.decision_inputs import Command, HistoryFacts
from statekit.runner.hashes import payload_text_and_digest
from statekit.runner.identifier_bounds import consume_oversized, key_too_long
from statekit.runner.loop_parking import consume_parked, replays_parking
from statekit.runner.outcome import Outcome
from statekit.runner.repeated_facts import RepeatedFact, consume_delivery
from statekit.runner.store.rows import RecordedKey
from statekit.runner.timers import timer_event_id
from statekit.runner.transaction_rows import ALREADY, REJECTED, TransactionRows


class TimerDelivery(TransactionRows):
    """The decision of a timer delivery (see the module docstring)."""

    __slots__ = ()

    def fire(self, timer_id: str, generation: int, facts: HistoryFacts) -> Outcome:
        """Decide the delivery of the timer `timer_id` armed at `generation` (its event ID
        is `timer_event_id`; `facts.recorded`: where it is recorded already;
        `facts.key_holder`: the accepted event holding the key of its event, read with
        `read_facts` for `delivery_command`). A timer no longer armed is REJECTED as
        `STALE_TIMER` and writes nothing; a delivery the chart rejects consumes the
        timer: it is recorded in the history with status REJECTED (so replay and
        `verify` see the timer go), nothing else changes. A delivery the chart accepts
        whose event repeats a fact the history holds consumes the timer the same way,
        with the repeat's reason and message (`runner.repeated_facts`), and is reported
        as `decide` reports such an event: ALREADY_APPLIED, a duplicate of the holder,
        or CONFLICT `BUSINESS_KEY_CONFLICT`."""
        event_id = timer_event_id(timer_id, generation)
        state, version = self.state, self.version
        if facts.recorded is not None:
            at = facts.recorded.sequence
            return Outcome(
                status=ALREADY,
                reason=None,
                version=version,
                state=state,
                event_id=event_id,
                sequence=at,
                duplicate=True,
                message=f"timer {timer_id!r} (generation {generation}) was delivered at "
                f"sequence {at} ({facts.recorded.status})",
            )
        timer = state.timer(timer_id)
        if timer is None or timer.generation != generation:
            return Outcome(
                status=REJECTED,
                reason=STALE_TIMER,
                version=version,
                state=state,
                event_id=event_id,
                message=f"timer {timer_id!r} (generation {generation}) is not armed",
            )
        if timer.paused_ms is not None:  # never due: a row altered, or a caller's mistake
            return Outcome(
                status=REJECTED,
                reason=PAUSED_TIMER,
                version=version,
                state=state,
                event_id=event_id,
                message=f"timer {timer_id!r} (generation {generation}) is paused",
            )
        self._root, self._sent = event_id, 0
        command = delivery_command(timer)
        result = self.chart.fire(
            state, timer_id, generation=generation, now_ms=self.now_ms, event_id=event_id,
            instance_id=self.instance_id,
        )  # fmt: skip
        text, raw = payload_text_and_digest(command.type, command.payload)
        why = None if result.status is Status.REJECTED else key_too_long(self.key_of(command))
        if why is not None:  # a reason that will not change: the timer is consumed
            result = consume_oversized(self.chart, state, timer, why, event_id)
        elif result.status is not Status.REJECTED:
            if facts.key_holder is not None:  # the fact is recorded: the timer goes
                return self._consume_repeat(command, text, raw, timer, facts.key_holder)
            return self._accept(command, text, raw.hex(), raw, result)
        outcome = self._accept(command, text, raw.hex(), raw, result, rejected=True)
        return replace(
            outcome,
            status=REJECTED,
            reason=result.reason,
            message=result.message,
            emitted=(),
        )

    def park(self, timer_id: str, generation: int) -> Outcome:
        """Park the timer `timer_id` armed at `generation` (`runner.loop_parking`): consumed
        without its event and recorded as a delivery the chart rejects is, with reason
        `TIMER_LOOP`; REJECTED `STALE_TIMER`, nothing written, when it is not armed so;
        ValueError when it is not due by the transaction's clock (the replay would not
        consume it: `replays_parking`)."""
        event_id = timer_event_id(timer_id, generation)
        timer = self.state.timer(timer_id)
        if timer is None or timer.generation != generation or timer.paused_ms is not None:
            return self.fire(timer_id, generation, HistoryFacts())
        if not replays_parking(timer, generation, self.now_ms):
            raise ValueError(
                f"timer {timer_id!r} (generation {generation}) is not due: only a timer "
                "due at once is parked"
            )
        self._root, self._sent = event_id, 0
        command = delivery_command(timer)
        result = consume_parked(self.chart, self.state, timer, event_id)
        text, raw = payload_text_and_digest(command.type, command.payload)
        outcome = self._accept(command, text, raw.hex(), raw, result, rejected=True)
        return replace(
            outcome, status=REJECTED, reason=result.reason, message=result.message, emitted=()
        )

    def _consume_repeat(
        self, c: Command, text: str, raw: bytes, timer: ArmedTimer, holder: RecordedKey
    ) -> Outcome:
        """The delivery `c` of `timer`, whose fact `holder` recorded: the timer consumed and
        recorded as a rejected delivery is (no key claimed), reported as `_same_fact`
        reports the repeat, without an audit row (see `fire`)."""
        fact = RepeatedFact(
            c.type,
            self.key_of(c),
            holder.event_id,
            holder.sequence,
            holder.payload_sha256 == raw.hex(),
        )
        conflict = fact.conflict(None, self.version)
        result = consume_delivery(self.chart, self.state, timer, fact, c.event_id)
        self._accept(c, text, raw.hex(), raw, result, rejected=True)
        return self._repeated(c, fact, conflict, fact.message(timer=True))


def delivery_command(timer: ArmedTimer) -> Command:
    """The event a delivery of the armed `timer` decides (what `read_facts` is asked about
    before `InstanceTransaction.fire`)."""
    return Command(
        event_id=timer_event_id(timer.id, timer.generation),
        type=timer.event,
        payload=dict(timer.payload),
    )
