"""The stored forms of armed timers: the instance row's `timers` text and the timer rows.

`runner.timers` writes both without going through the generic encoder (they are
built on every timed event): the instance row holds the arming counter, each
timer row its timer's canonical JSON, whatever the timer's strings and payload;
an event writes the rows of the timers it changed and leaves the others alone.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from runner_charts import LEASE, chart_from

from statekit.compiler.canonical import canonical_json
from statekit.engine.state import State
from statekit.engine.timers import ArmedTimer
from statekit.runner.runner import Runner
from statekit.runner.store import open_store
from statekit.runner.store.rows import STORED_INT_MAX, STORED_INT_MIN
from statekit.runner.timers import armed_text, timer_row, timers_text

T0 = 1_700_000_000_000
STRINGS = ["after(1h)@open", "", 'q"uote\\back', "ré\u2028\u2029\x00\x1f", "😀 \ud7ff", "</script>"]
PAYLOADS: list[dict[str, Any]] = [{}, {"n": 1}, {"b": [1, 2.5, None, True], "a": {"z": "é"}}]


def _canonical_timers(state: State) -> str | None:
    data = state.to_data()
    if "timers" not in data:
        return None
    return canonical_json({"timer_generation": data["timer_generation"]})


def _canonical_rows(state: State) -> list[tuple[str, int, str]]:
    """(timer ID, generation, record) of each armed timer, as its row holds them."""
    return sorted((t["id"], t["generation"], canonical_json(t)) for t in state.to_data()["timers"])


def _stored_rows(runner: Runner, instance_id: str) -> list[tuple[str, int, str | None]]:
    return sorted((r.timer_id, r.generation, r.record) for r in runner.store.timers(instance_id))


@pytest.mark.parametrize("text", STRINGS)
@pytest.mark.parametrize("payload", PAYLOADS, ids=["empty", "flat", "nested"])
@pytest.mark.parametrize(
    ("delay", "due"), [(30_000, T0 + 30_000), (None, T0), (None, None), (-5, -(2**63))]
)
def test_a_timer_s_text_is_its_canonical_json(
    text: str, payload: dict[str, Any], delay: int | None, due: int | None
) -> None:
    for owner in (text, None):
        timer = ArmedTimer(text, text[::-1], payload, delay, due, 2**62, owner)
        assert armed_text(timer) == canonical_json(timer.to_data())
        row = timer_row("i", timer, 3)
        assert row.payload == canonical_json(payload)
        assert json.loads(armed_text(timer))["payload"] == payload


@pytest.mark.parametrize("due", [None, STORED_INT_MAX + 1, STORED_INT_MIN - 1, 0, T0])
def test_a_timer_row_stores_a_due_time_in_range(due: int | None) -> None:
    row = timer_row("i", ArmedTimer("t", "E", {}, None, due, 1, None), 0)
    expected = STORED_INT_MAX if due is None else min(max(due, STORED_INT_MIN), STORED_INT_MAX)
    assert row.due_ms == expected


def test_the_texts_and_rows_follow_the_state_through_every_kind_of_step(store_url: str) -> None:
    chart = chart_from(LEASE)
    runner = Runner(chart, open_store(store_url), clock=lambda: T0)
    runner.create("a")
    state = chart.initialize(None, now_ms=T0).state
    for n, event in enumerate(
        [
            "Start",  # cancels the idle timer, arms a send and the running one
            "Hold",  # moves no timer
            "Snooze",  # re-arms the send with another payload (same ID)
            "Beat",  # re-enters running: both cancelled and armed again
            "Finish",  # cancels both
        ]
    ):
        state = chart.send(state, event, {}, now_ms=T0).state
        assert runner.apply("a", f"e{n}", event).applied
        assert timers_text(state) == _canonical_timers(state)
        assert _stored_rows(runner, "a") == _canonical_rows(state)
        assert runner.load("a").state == state
        assert Runner(chart, runner.store).load("a").state == state  # read from the rows


def test_the_stored_texts_stay_canonical_event_after_event(store_url: str) -> None:
    runner = Runner(chart_from(LEASE), open_store(store_url), clock=lambda: T0)
    runner.create("a")
    for n, event in enumerate(["Start", "Hold", "Hold", "Snooze", "Beat", "Hold", "Finish"]):
        assert runner.apply("a", f"e{n}", event).applied
        state = runner.load("a").state
        (stored,) = runner.store.execute(
            "SELECT timers FROM statekit_instances WHERE instance_id = 'a'"
        ).fetchone()
        assert stored == _canonical_timers(state)
        assert _stored_rows(runner, "a") == _canonical_rows(state)
        assert runner.verify("a").ok


def test_an_equal_but_rewritten_timers_text_is_written_canonical_by_the_next_event(
    store_url: str,
) -> None:
    runner = Runner(chart_from(LEASE), open_store(store_url), clock=lambda: T0)
    runner.create("a")
    assert runner.apply("a", "e1", "Start").applied
    (text,) = runner.store.execute("SELECT timers FROM statekit_instances").fetchone()
    spaced = json.dumps(json.loads(text), indent=1)  # the same value, another text
    with runner.store.write():
        runner.store.execute("UPDATE statekit_instances SET timers = ?", (spaced,))
    assert not runner.verify("a").ok
    assert runner.apply("a", "e2", "Hold").applied  # moves no timer
    assert runner.store.execute("SELECT timers FROM statekit_instances").fetchone() == (text,)
    assert runner.verify("a").ok
