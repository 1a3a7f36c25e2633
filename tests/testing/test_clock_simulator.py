"""`statekit.testing.Simulator`: one instance on a virtual clock (start, send, advance)."""

from __future__ import annotations

import pytest
from chart_helpers import machine

from statekit.engine.result import Status
from statekit.testing import Simulator, SimulatorError

TASK = """
statechart: task
context:
  lease_until_ms: {type: integer, default: 0}
  attempt: {type: integer, default: 0}
events:
  TaskStarted: {attempt: {type: integer}, lease_until_ms: {type: integer}}
  TaskCompleted: {}
  Requeue: {}
initial: queued
states:
  queued:
    on:
      TaskStarted:
        to: running
        do: [{assign: {lease_until_ms: event.lease_until_ms, attempt: event.attempt}}]
  running:
    after:
      - at: ctx.lease_until_ms
        to: recovering
    on: {TaskCompleted: done}
  recovering:
    after: {5m: queued}
    on: {Requeue: queued}
  done: {final: true}
"""


def test_start_send_task_started_advance_30_s_expect_recovering() -> None:
    sim = Simulator(machine(TASK), now_ms=1_000)
    assert sim.state.configuration == {"queued"} and sim.now_ms == 1_000
    r = sim.send("TaskStarted", {"attempt": 1, "lease_until_ms": 31_000})
    assert r.applied and sim.next_due_ms == 31_000
    assert sim.advance(29_999) == [] and sim.state.is_active("running")
    (fired,) = sim.advance(1)
    assert fired.timer is not None and fired.timer.id == "at(ctx.lease_until_ms)@running"
    assert sim.state.is_active("recovering") and sim.now_ms == 31_000
    assert sim.next_due_ms == 31_000 + 300_000  # armed at the due time it fired at
    (back,) = sim.advance(300_000)
    assert back.applied and sim.state.is_active("queued") and sim.next_due_ms is None


def test_a_completed_task_never_sees_its_lease_timer() -> None:
    sim = Simulator(machine(TASK))
    sim.send("TaskStarted", {"attempt": 1, "lease_until_ms": 30_000})
    assert sim.send("TaskCompleted").applied and sim.state.timers == ()
    assert sim.advance(10**9) == [] and sim.state.is_final


def test_an_at_in_the_past_fires_at_advance_0() -> None:
    sim = Simulator(machine(TASK), now_ms=50_000)
    sim.send("TaskStarted", {"attempt": 1, "lease_until_ms": 10_000})
    assert sim.next_due_ms == 10_000 and sim.state.is_active("running")
    (fired,) = sim.advance(0)
    assert fired.applied and sim.state.is_active("recovering") and sim.now_ms == 50_000


TIES = """
statechart: ties
events: {Go: {}, Tick: {n: {type: integer}}}
parallel: true
states:
  left:
    initial: l0
    states:
      l0: {on: {Go: l1}}
      l1:
        after: {5s: {to: l2, do: [{emit: {type: Fired, payload: {who: "'left'"}}}]}}
      l2: {}
  right:
    initial: r0
    states:
      r0:
        on:
          Go:
            to: r1
            do:
              - {send: {event: Tick, payload: {n: 1}, delay: 5s}}
              - {send: {event: Tick, payload: {n: 2}, delay: 5s}}
      r1:
        after: {5s: {to: r2, do: [{emit: {type: Fired, payload: {who: "'right'"}}}]}}
        on: {Tick: {do: [{emit: {type: Fired, payload: {who: event.n}}}]}}
      r2:
        on: {Tick: {do: [{emit: {type: Fired, payload: {who: event.n}}}]}}
"""


def test_timers_due_at_the_same_instant_fire_in_arming_order() -> None:
    sim = Simulator(machine(TIES))
    go = sim.send("Go")
    # Transition effects run before entry, left is entered before right.
    assert [t.id for t in go.timers_armed] == [
        "send(Tick)#1",
        "send(Tick)#2",
        "after(5s)@left.l1",
        "after(5s)@right.r1",
    ]
    fired = sim.advance(5_000)
    assert [r.emitted[0].payload["who"] for r in fired] == [1, 2, "left", "right"]
    assert all(r.applied for r in fired) and sim.state.timers == ()


QUEUE = """
statechart: queue
events: {Go: {}, A: {}, B: {}, C: {}}
initial: s
states:
  s:
    on:
      Go: {do: [{send: {event: A}}, {send: {event: B}}, {emit: {type: Out, payload: {e: "'Go'"}}}]}
      A: {do: [{send: {event: C}}, {emit: {type: Out, payload: {e: "'A'"}}}]}
      B: {do: [{emit: {type: Out, payload: {e: "'B'"}}}]}
      C: {do: [{emit: {type: Out, payload: {e: "'C'"}}}]}
"""


def test_an_undelayed_send_goes_to_the_back_of_the_external_queue() -> None:
    sim = Simulator(machine(QUEUE))
    r = sim.send("Go")
    assert [m.payload["e"] for m in r.emitted] == ["Go"]  # A and B not inside the macrostep
    assert [x.event for x in sim.results[1:]] == ["Go", "A", "B", "C"]
    assert all(x.applied for x in sim.results)


CHAIN = """
statechart: chain
events: {Go: {}}
initial: x
states:
  x: {on: {Go: y}}
  y: {after: {1s: z}}
  z: {after: {1s500ms: w}}
  w: {}
"""


def test_timers_armed_while_advancing_fire_within_the_window() -> None:
    sim = Simulator(machine(CHAIN), now_ms=0)
    sim.send("Go")
    fired = sim.advance(3_000)
    assert [r.timer.id for r in fired if r.timer] == ["after(1s)@y", "after(1s500ms)@z"]
    assert sim.state.configuration == {"w"} and sim.now_ms == 3_000
    assert [r.state.timers[0].due_ms for r in fired[:1]] == [2_500]


def test_the_simulator_refuses_a_bad_clock_and_stops_a_timer_due_forever() -> None:
    with pytest.raises(TypeError):
        Simulator(machine(CHAIN), now_ms=1.5)  # type: ignore[arg-type]
    sim = Simulator(machine(CHAIN))
    for bad in (-1, 1.0, True):
        with pytest.raises(ValueError):
            sim.advance(bad)  # type: ignore[arg-type]
    loop = machine(
        """
statechart: loop
events: {Ping: {}}
initial: s
states:
  s:
    after: {0ms: s}
    on: {Ping: {do: [{send: {event: Ping}}]}}
"""
    )
    with pytest.raises(SimulatorError, match="re-arm"):
        Simulator(loop).advance(0, max_deliveries=50)
    with pytest.raises(SimulatorError, match="send itself"):
        Simulator(loop).send("Ping")


def test_a_rejected_external_event_changes_nothing_and_is_recorded() -> None:
    sim = Simulator(machine(TASK))
    before = sim.state
    r = sim.send("TaskCompleted")
    assert r.status is Status.REJECTED and sim.state is before and sim.results[-1] is r
