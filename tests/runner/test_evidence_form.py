"""The compact evidence the runner stores expands to the full form of every microstep.

`evidence_json` builds the compact form from the engine's microsteps directly; these
tests hold it to the full form (`microstep_data`, what the history API returns and
`verify` compares) over random event streams of charts with guards, emitted
messages, timers armed and cancelled, delayed and undelayed sends and rejections.
"""

from __future__ import annotations

import json
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from runner_charts import COUNTER, JOB_CANCEL_WINS, LEASE, chart_from

from statekit.engine.result import Result, Status
from statekit.runner.evidence import evidence_data, evidence_json, microstep_data
from statekit.runner.outcome import Conflict

CHARTS = {
    "counter": chart_from(COUNTER),
    "job": chart_from(JOB_CANCEL_WINS),
    "lease": chart_from(LEASE),
}
EVENTS: dict[str, list[tuple[str, dict[str, Any]]]] = {
    "counter": [("Incr", {"by": 2}), ("Incr", {"by": -1}), ("Ping", {}), ("Nope", {})],
    "job": [
        ("JobStarted", {}),
        ("JobProgressed", {"percent": 40}),
        ("JobCompleted", {}),
        ("JobCancelled", {"requested_by": "ops"}),
    ],
    "lease": [
        ("Start", {}), ("Beat", {}), ("Hold", {}), ("Snooze", {}), ("Finish", {}),
        ("Odd", {}), ("Remind", {"n": 3}), ("Echo", {"n": 4}), ("Noted", {"n": 5}),
        ("Deadline", {"at": 50_000}), ("Beat", {"extra": 1}),
    ],
}  # fmt: skip
RACE = Conflict(reason="VERSION_CONFLICT", expected_version=1, version=2, event_id="w", sequence=2)


def _full(result: Result, race: Conflict | None) -> dict[str, Any]:
    data: dict[str, Any] = {"microsteps": [microstep_data(s) for s in result.evidence]}
    if result.status is Status.REJECTED:
        data["rejected"] = {"reason": result.reason, "message": result.message}
    if race is not None:
        data["race"] = race.to_data()
    return data


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    name=st.sampled_from(sorted(CHARTS)),
    steps=st.lists(
        st.tuples(st.integers(0, 10), st.integers(0, 40_000), st.booleans()), max_size=15
    ),
    own_ids=st.booleans(),
)
def test_the_compact_evidence_expands_to_the_full_form_of_every_step(
    name: str, steps: list[tuple[int, int, bool]], own_ids: bool
) -> None:
    chart = CHARTS[name]
    now = 0
    state = chart.initialize(None, now_ms=now).state
    for n, (pick, wait, raced) in enumerate(steps):
        now += wait
        event_id = f"e{n}" if own_ids else f"other/{n}"
        race = RACE if raced else None
        due = [t for t in state.timers if t.due_ms is not None and t.due_ms <= now]
        if due and pick % 3 == 0:  # deliver a due timer (a rejected delivery is stored too)
            result = chart.fire(state, due[0].id, now_ms=now, event_id=event_id)
        else:
            event, payload = EVENTS[name][pick % len(EVENTS[name])]
            result = chart.send(state, event, payload, event_id=event_id, now_ms=now)
        text = evidence_json(result, race, event_id)
        assert evidence_data(json.loads(text), event_id) == _full(result, race)
        if result.status is not Status.REJECTED:
            state = result.state


def test_the_compact_form_of_a_counted_event_is_as_stored_before() -> None:
    """The text itself is the stored form (the store packs its head: `store.packing`)."""
    result = CHARTS["counter"].send(CHARTS["counter"].start(), "Incr", {"by": 2}, event_id="e1")
    assert evidence_json(result, None, "e1") == (
        '[2,[["Incr",{"by":2},[[0,"open",[],"event"]],[],[],[["total",0,2],["count",0,1]],1,[]]]]'
    )
    assert evidence_json(result, None, "other") == (
        '[2,[["Incr",{"by":2},[[0,"open",[],"event"]],[],[],'
        '[["total",0,2],["count",0,1]],["e1/0"],[]]]]'
    )
