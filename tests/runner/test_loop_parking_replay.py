"""A parked loop (`runner.loop_parking`) replays as recorded, and `verify` reports every
way its row can be altered: a clock reading before the timer was due (only a timer due
at once is parked), another generation (a timer not armed), the status of a delivery
made, a reason that is not `TIMER_LOOP`. Both stores."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from runner_charts import chart_from

from statekit.runner.outcome import TIMER_LOOP
from statekit.runner.runner import Runner
from statekit.runner.store import open_store

LOOP = """
statechart: spin
events:
  Go: {}
initial: idle
states:
  idle:
    on:
      Go: spinning
  spinning:
    after:
      0ms: spinning
"""

PARKED = "instance_id = 'loop' AND sequence = 2"

TAMPER = {
    "clock before due": f"UPDATE statekit_events SET clock_ms = 999 WHERE {PARKED}",
    "another generation": (
        f"UPDATE statekit_events SET event_id = 'statekit.timer/after(0ms)@spinning/9' "
        f"WHERE {PARKED}"
    ),
    "status of a delivery": f"UPDATE statekit_events SET status = NULL WHERE {PARKED}",
    "another reason": (
        f"UPDATE statekit_events SET evidence = REPLACE(evidence, '{TIMER_LOOP}', "
        f"'GUARD_FAILED') WHERE {PARKED}"
    ),
}


@pytest.fixture
def parked(store_url: str) -> Iterator[Runner]:
    runner = Runner(chart_from(LOOP), open_store(store_url), clock=lambda: 1_000)
    runner.create("loop")
    assert runner.apply("loop", "e1", "Go", {}).applied
    (armed,) = runner.load("loop").state.timers
    assert armed.due_ms == 1_000
    outcome = runner.park_timer("loop", armed.id, armed.generation)
    assert outcome.reason == TIMER_LOOP
    yield runner
    runner.store.close()


def test_the_parked_loop_replays(parked: Runner) -> None:
    assert parked.verify("loop").ok
    state = parked.rebuild("loop").state
    assert state is not None
    assert state.timers == () and state.configuration == {"spinning"}


class _Rollback(Exception):
    pass


@pytest.mark.parametrize("what", sorted(TAMPER))
def test_every_altered_parking_is_reported(parked: Runner, what: str) -> None:
    store = parked.store
    ok = True
    with pytest.raises(_Rollback), store.write():
        assert store.execute(TAMPER[what]).rowcount == 1
        ok = parked.verify("loop").ok
        raise _Rollback
    assert not ok, f"{what} went unnoticed"
    assert parked.verify("loop").ok  # rolled back
