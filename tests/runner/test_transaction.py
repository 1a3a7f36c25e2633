"""Deciding commands reads nothing: what the history says comes in as `HistoryFacts`."""

from __future__ import annotations

from runner_charts import COUNTER, chart_from

from statekit.runner.outcome import OutcomeStatus
from statekit.runner.store.rows import InstanceRow, RecordedId
from statekit.runner.stored_state import state_columns
from statekit.runner.transaction import Command, HistoryFacts, InstanceTransaction


def transaction_at(version: int) -> InstanceTransaction:
    """Decisions about an instance of the counter chart stored at `version`."""
    chart = chart_from(COUNTER)
    state = chart.initialize().state
    row = InstanceRow(
        instance_id="c",
        chart_name=chart.name,
        chart_version=chart.version,
        chart_digest=chart.digest,
        version=version,
        columns=state_columns(state),
        initial_context="{}",
    )
    return InstanceTransaction(chart, row, state, snapshot_every=None, now=1000.0)


def test_the_sequence_to_look_up_is_the_one_the_decision_names() -> None:
    tx = transaction_at(3)
    assert tx.sequence_to_look_up(Command(event_id="e", type="Incr", sequence=2)) == 2
    assert tx.sequence_to_look_up(Command(event_id="e", type="Incr", sequence=9)) is None
    assert tx.sequence_to_look_up(Command(event_id="e", type="Incr", expected_version=1)) == 2
    assert tx.sequence_to_look_up(Command(event_id="e", type="Incr", expected_version=3)) is None
    assert tx.sequence_to_look_up(Command(event_id="e", type="Incr", sequence=4)) is None


def test_a_taken_sequence_names_the_holder_given_in_the_facts() -> None:
    tx = transaction_at(3)
    command = Command(event_id="late", type="Incr", payload={"by": 1}, sequence=2)
    outcome = tx.decide(command, HistoryFacts(event_id_at_sequence="first"))
    assert (outcome.status, outcome.reason) == (OutcomeStatus.CONFLICT, "DUPLICATE_OR_OLD_SEQUENCE")
    assert outcome.conflict is not None and outcome.conflict.event_id == "first"
    [audit] = tx.rejections
    assert (audit.event_id, audit.reason, audit.recorded_at) == ("late", outcome.reason, 1000.0)
    assert not tx.events


def test_a_recorded_event_id_with_the_same_payload_is_a_duplicate() -> None:
    tx = transaction_at(3)
    first = transaction_at(0)
    command = Command(event_id="e1", type="Incr", payload={"by": 2})
    applied = first.decide(command, HistoryFacts())
    assert applied.applied and first.recorded_here("e1") is not None
    [event] = first.events
    recorded = RecordedId(sequence=1, payload_sha256=event.payload_sha256, status="APPLIED")
    again = tx.decide(command, HistoryFacts(recorded=recorded))
    assert again.status is OutcomeStatus.ALREADY_APPLIED and again.duplicate
    assert again.sequence == 1 and not tx.events and not tx.rejections
