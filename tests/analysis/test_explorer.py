"""The explorer: reachable abstract states, guard branching, bounds, agreement with the engine."""

from __future__ import annotations

import random
from collections.abc import Mapping
from typing import Any

import pytest
from analysis_charts import MACHINES, chart_of, explored

import statekit
from statekit.analysis.exploration import Exploration, Node
from statekit.analysis.explorer import explore
from statekit.analysis.facts import reached_states, selected_transitions
from statekit.compiler.ir import CompiledChart, FieldDecl
from statekit.compiler.value_types import BaseType
from statekit.engine.result import ENGINE_REASONS, Status

REFERENCE = {"task": (17, 17), "payment": (7, 7), "media_player": (16, 475)}
# media_player: 30 abstract states fewer than the analysis found before it reasoned about
# guards together: they were reached only by POWER_ON with `ctx.battery_pct > 5` and
# `ctx.battery_pct <= 2` both holding on the same value.
TIMED = {"task", "payment"}  # the machines with timers: `after`/`at` on some of their states


@pytest.mark.parametrize("name", sorted(REFERENCE))
def test_reference_machines_are_explored_completely(name: str) -> None:
    result = explore(statekit.compile(MACHINES / f"{name}.yaml"))
    assert result.complete
    assert (len(result.configurations()), len(result.nodes)) == REFERENCE[name]
    # every declared event is checked in every node, a timer event only where it is armed
    timers = set(result.timer_events)
    armed = [{o.event for o in n.outcomes or () if o.event in timers} for n in result.nodes]
    assert result.checks == len(result.nodes) * len(result.events) + sum(map(len, armed))
    assert any(armed) == (name in TIMED)
    depths = [n.depth for n in result.nodes]
    assert depths == sorted(depths)  # breadth first: shortest paths first


# -- agreement with the engine ----------------------------------------------------


def _value(decl: FieldDecl, rng: random.Random) -> Any:
    t = decl.type
    if t.nullable and rng.random() < 0.1:
        return None
    if t.enum is not None:
        return rng.choice(t.enum)
    if t.base in (BaseType.INTEGER, BaseType.NUMBER):
        return rng.choice([-1, 0, 1, 1, 2, 3, 50, 100])
    if t.base is BaseType.STRING:
        return rng.choice(["w-1", "abc", ""])
    return rng.random() < 0.5


def _payload(chart: CompiledChart, event: str, rng: random.Random) -> dict[str, Any]:
    return {f.name: _value(f, rng) for f in chart.events[event].fields}


def _node_of(result: Exploration, config: object, history: Mapping[int, Any]) -> Node:
    key = tuple(sorted(history.items()))
    matches = [n for n in result.nodes if n.config.ids == config and n.history_key == key]
    assert matches, f"the engine reached {config} / {history}, the explorer did not"
    return matches[0]


@pytest.mark.parametrize("name", sorted(REFERENCE))
def test_every_engine_step_is_one_of_the_explored_outcomes(name: str) -> None:
    """Random concrete runs: every configuration the engine reaches was explored, and
    every classified outcome of the engine is one the explorer found there."""
    chart = statekit.load(MACHINES / f"{name}.yaml")
    ir = chart.ir
    result = explore(ir)
    rng = random.Random(7)
    events = list(ir.events)
    checked = 0
    for _walk in range(40):
        state = chart.start()
        for _step in range(40):
            node = _node_of(result, state.active_ids, state._history)
            event = rng.choice(events)
            outcome = chart.send(state, event, _payload(ir, event, rng))
            if outcome.reason in ENGINE_REASONS - {"TERMINAL_STATE", "UNDEFINED_TRANSITION"}:
                continue  # invalid payloads, runtime invariants, arithmetic: data, not structure
            assert node.outcomes is not None
            candidates = [o for o in node.outcomes if o.event == event]
            if outcome.status is Status.APPLIED:
                after = outcome.state
                targets = {
                    (result.nodes[o.target].config.ids, result.nodes[o.target].history_key)
                    for o in candidates
                    if o.fired
                }
                assert (after.active_ids, tuple(sorted(after._history.items()))) in targets
                state = after
            else:
                classes = {(o.status, o.reason) for o in candidates if not o.fired}
                assert (outcome.status, outcome.reason) in classes, (event, outcome.message)
            checked += 1
    assert checked > 500


# -- guards ----------------------------------------------------------------------

BRANCHING = """
statechart: branching
context: {n: integer}
events: {GO: {k: integer}}
guards:
  big: {if: event.k > 10, else: TOO_SMALL}
initial: a
states:
  a:
    on:
      GO:
        - {to: b, guard: big}
        - {to: c, if: "ctx.n > 0"}
  b: {final: true}
  c: {final: true}
"""


def test_data_guards_are_taken_both_ways_and_cited() -> None:
    result = explored(BRANCHING)
    start = result.nodes[0]
    assert start.outcomes is not None
    described = sorted(
        (o.basis, o.reason, tuple(a.describe(result.chart) for a in o.assumptions))
        for o in start.outcomes
    )
    assert described == [
        (
            "applied",
            None,
            ("guard big (event.k > 10) fails", "condition (ctx.n > 0) of GO from 'a' holds"),
        ),
        ("applied", None, ("guard big (event.k > 10) holds",)),
        (
            "guard",
            "TOO_SMALL",
            ("guard big (event.k > 10) fails", "condition (ctx.n > 0) of GO from 'a' fails"),
        ),
    ]


def test_active_guards_are_decided_exactly() -> None:
    result = explored("""
        statechart: exact
        events: {GO: {}, NEXT: {}}
        parallel: true
        states:
          a:
            initial: a1
            states:
              a1: {on: {GO: {to: a2, if: "active('b.b2')"}}}
              a2: {}
          b:
            initial: b1
            states: {b1: {on: {NEXT: b2}}, b2: {}}
        """)
    for node in result.nodes:
        assert all(not o.assumptions for o in node.outcomes or ())
    paths = {result.chart.states[s].path for s in reached_states(result)}
    assert "a.a2" in paths


def test_the_same_guard_twice_in_one_selection_gets_one_answer() -> None:
    result = explored("""
        statechart: same
        context: {n: integer}
        events: {GO: {}}
        guards: {positive: "ctx.n > 0"}
        initial: a
        states:
          a:
            on:
              GO:
                - {to: b, guard: positive}
                - {to: c, guard: positive, if: "ctx.n > 5"}
                - d
          b: {}
          c: {}
          d: {}
        """)
    chart = result.chart
    selected = {
        chart.states[chart.transitions[t].targets[0]].path for t in selected_transitions(result)
    }
    assert selected == {"b", "d"}  # c would need `positive` to fail and hold at once


def test_stability_tells_that_an_eventless_guard_is_still_false() -> None:
    """An `always` guard that kept a configuration stable stays false until an assign
    changes what it reads: PING (no assign) does not re-decide it, BUMP does."""
    result = explored("""
        statechart: stable
        context: {n: integer}
        events: {PING: {}, BUMP: {}}
        initial: waiting
        states:
          waiting:
            always: {to: done, if: "ctx.n > 3"}
            on:
              PING: {}
              BUMP: {do: [{assign: {n: ctx.n + 1}}]}
          done: {final: true, reject: {"*": DONE}}
        """)
    waiting = next(n for n in result.nodes if not n.config.final)
    assert waiting.outcomes is not None
    by_event = {e: [o for o in waiting.outcomes if o.event == e] for e in ("PING", "BUMP")}
    assert len(by_event["PING"]) == 1 and not by_event["PING"][0].assumptions
    assert len(by_event["BUMP"]) == 2


def test_state_reachable_only_through_raise() -> None:
    result = explored("""
        statechart: raised
        events: {START: {}, INTERNAL: {}}
        initial: idle
        states:
          idle: {on: {START: {to: working, do: [{raise: INTERNAL}]}}}
          working: {on: {INTERNAL: checked}}
          checked: {}
        """)
    chart = result.chart
    stable = {chart.states[s].path for n in result.nodes for s in n.config.atomic}
    assert stable == {"idle", "checked"}  # `working` is only passed through
    assert {chart.states[s].path for s in reached_states(result)} >= {"working", "checked"}


def test_history_values_are_part_of_the_abstract_state() -> None:
    result = explored("""
        statechart: history
        events: {NEXT: {}, OUT: {}, BACK: {}}
        initial: wizard
        states:
          wizard:
            initial: one
            on: {OUT: away}
            states:
              memory: {history: shallow}
              one: {on: {NEXT: two}}
              two: {}
          away: {on: {BACK: wizard.memory}}
        """)
    away = [n for n in result.nodes if result.chart.states[n.config.atomic[0]].path == "away"]
    assert len(away) == 2  # left from `one` or from `two`
    assert len(result.configurations()) == 3


# -- bounds ----------------------------------------------------------------------

GRID = """
statechart: grid
events: {A: {}, B: {}}
parallel: true
states:
  x: {initial: x0, states: {x0: {on: {A: x1}}, x1: {on: {A: x2}}, x2: {on: {A: x0}}}}
  y: {initial: y0, states: {y0: {on: {B: y1}}, y1: {on: {B: y2}}, y2: {on: {B: y0}}}}
"""


def test_the_configuration_bound_stops_the_exploration_and_says_so() -> None:
    full = explored(GRID)
    assert full.complete and len(full.nodes) == 9
    bounded = explored(GRID, max_configurations=4)
    assert not bounded.complete and len(bounded.nodes) == 4
    (limit,) = bounded.limits
    assert limit.kind == "configurations" and "4 abstract states" in limit.message
    assert all(n.outcomes is not None for n in bounded.nodes)  # every kept state expanded


def test_an_eventless_counter_loop_hits_the_branching_bound_without_hanging() -> None:
    result = explored("""
        statechart: counter
        context: {n: integer}
        initial: counting
        states:
          counting:
            always: {if: ctx.n < 100, do: [{assign: {n: ctx.n + 1}}]}
        """)
    assert [limit.kind for limit in result.limits] == ["branching"]
    assert len(result.nodes) == 1


def test_conflicts_are_attributed_to_the_macrostep_that_resolved_them() -> None:
    result = explored("""
        statechart: conflict
        events: {GO: {}}
        parallel: true
        states:
          p: {initial: p1, states: {p1: {on: {GO: {to: [p.p2, q.q2]}}}, p2: {}}}
          q: {initial: q1, states: {q1: {on: {GO: {to: [p.p1, q.q2]}}}, q2: {}}}
        """)
    (seen,) = result.conflicts
    assert seen.node == 0 and seen.event == "GO"
    conflict = seen.conflict
    assert len(conflict.enabled) == 2 and conflict.kept == conflict.enabled[:1]


def test_unsupported_bound_is_refused() -> None:
    with pytest.raises(ValueError):
        explore(chart_of(GRID), max_configurations=0)


def test_an_eventless_ping_pong_on_unchanged_data_is_a_livelock_outcome() -> None:
    result = explored("""
        statechart: pingpong
        context: {x: boolean, y: boolean}
        events: {GO: {}}
        initial: start
        states:
          start: {on: {GO: a}}
          a: {always: {to: b, if: ctx.x}}
          b: {always: {to: a, if: ctx.y}}
        """)
    # x and y are tracked (booleans no `assign` changes): each start node has its own
    # values and one outcome of GO; the livelock is the start with both true.
    starts = [n for n in result.nodes if n.depth == 0]
    by_values = {(n.tracked["x"], n.tracked["y"]): n.outcomes or [] for n in starts}
    assert len(by_values) == 4 and all(len(o) == 1 for o in by_values.values())
    reasons = sorted((o[0].basis, o[0].reason or "") for o in by_values.values())
    assert reasons == [("applied", ""), ("applied", ""), ("applied", ""), ("livelock", "LIVELOCK")]
    livelock = by_values[(True, True)][0]
    assert livelock.basis == "livelock"
    assert livelock.transitions() == ()  # rolled back: nothing counts as fired
    assert livelock.assumptions == ()  # decided by the values, not assumed
