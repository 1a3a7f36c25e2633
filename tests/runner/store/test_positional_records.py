"""`rows.positional`: the per-event constructors build the records their keyword
constructors build, and refuse a field order that is not the record's."""

from __future__ import annotations

from typing import Any

import pytest

from statekit.runner.store.rows import EventRow, StateColumns, TimerRow, positional

EVENT: dict[str, Any] = {
    "instance_id": "i", "sequence": 3, "event_id": "e", "type": "T", "payload": "{}",
    "payload_sha256": "ab", "status": "APPLIED", "chart_version": 1, "evidence": "[2,[]]",
    "recorded_at": 1.5, "idempotency_key": None, "clock_ms": 7,
}  # fmt: skip


def test_a_positional_constructor_builds_the_keyword_one_s_record() -> None:
    make = positional(EventRow, *EVENT)
    built = make(*EVENT.values())
    assert built == EventRow(**EVENT) and hash(built) == hash(EventRow(**EVENT))
    assert positional(StateColumns, "configuration", "context", "history")("a", "b", "c") == (
        StateColumns(configuration="a", context="b", history="c")
    )  # the fields left out take their defaults


WRONG = [
    (EventRow, ("sequence", "instance_id")),
    (StateColumns, ("configuration", "history", "context")),
    (TimerRow, ("instance_id", "timer_id", "event")),
    (StateColumns, ("configuration", "context", "history", "timers", "more")),
]


@pytest.mark.parametrize(("record", "names"), WRONG)
def test_a_field_order_that_is_not_the_record_s_is_refused(
    record: type, names: tuple[str, ...]
) -> None:
    with pytest.raises(TypeError, match=record.__name__):
        positional(record, *names)
