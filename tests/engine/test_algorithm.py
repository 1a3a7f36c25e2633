"""The SCXML procedures, one semantic rule per test, on small inline charts.

Effects append to a `log` context field so that tests can see the order in
which exit, transition and entry effects ran.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import pytest
from chart_helpers import chart_of, machine

from statekit.compiler.ir import GuardCheck, Transition
from statekit.engine.algorithm import macrostep
from statekit.engine.chart import Chart
from statekit.engine.errors import LivelockError
from statekit.engine.result import LIVELOCK, Status
from statekit.engine.selection import select_transitions
from statekit.engine.tables import Tables


def log_of(text: str, *events: str) -> tuple[str, frozenset[str]]:
    """Send `events` in turn (each must apply); the final log and configuration."""
    chart = machine(text)
    state = chart.start()
    for event in events:
        result = chart.send(state, event)
        assert result.status is Status.APPLIED, (event, result.reason, result.message)
        state = result.state
    return state.context["log"], state.configuration


DESCENDANTS_FIRST = """
statechart: order
context: {log: string}
events: {GO: {}}
initial: outer
states:
  outer:
    initial: inner
    on: {GO: {to: b, do: [{assign: {log: "ctx.log + 'outer'"}}]}}
    states:
      inner:
        on: {GO: {to: a, do: [{assign: {log: "ctx.log + 'inner'"}}]}}
      a: {}
  b: {}
"""


def test_a_descendants_transition_is_selected_before_its_ancestors() -> None:
    log, config = log_of(DESCENDANTS_FIRST, "GO")
    assert log == "inner"
    assert config == {"outer", "outer.a"}


ALTERNATIVES = """
statechart: alternatives
context: {n: integer}
events: {GO: {n: integer}}
initial: s
states:
  s:
    on:
      GO:
        - {to: big, if: event.n > 5}
        - {to: small}
        - {to: never}
  big: {}
  small: {}
  never: {}
"""


def test_alternatives_are_tried_in_document_order() -> None:
    chart = machine(ALTERNATIVES)
    s0 = chart.start()
    assert chart.send(s0, "GO", {"n": 9}).state.configuration == {"big"}
    assert chart.send(s0, "GO", {"n": 1}).state.configuration == {"small"}


REGIONS = """
statechart: regions
context: {log: string}
events: {LEAVE: {}, MOVE: {}, INNER: {}}
initial: p
states:
  p:
    parallel: true
    on:
      INNER: {to: out2, do: [{assign: {log: "ctx.log + 'p'"}}]}
    states:
      r1:
        initial: a
        states:
          a:
            on:
              LEAVE: {to: out1, do: [{assign: {log: "ctx.log + '1'"}}]}
              MOVE: {to: a2, do: [{assign: {log: "ctx.log + '1'"}}]}
          a2: {}
      r2:
        initial: b
        states:
          b:
            on:
              LEAVE: {to: out2, do: [{assign: {log: "ctx.log + '2'"}}]}
              MOVE: {to: b2, do: [{assign: {log: "ctx.log + '2'"}}]}
              INNER: {to: b2, do: [{assign: {log: "ctx.log + 'b'"}}]}
          b2: {}
  out1: {}
  out2: {}
"""


def test_conflicting_transitions_in_two_regions_the_first_in_document_order_wins() -> None:
    log, config = log_of(REGIONS, "LEAVE")
    assert log == "1"
    assert config == {"out1"}


def test_transitions_in_independent_regions_fire_in_one_microstep() -> None:
    chart = machine(REGIONS)
    result = chart.send(chart.start(), "MOVE")
    assert result.state.context["log"] == "12"
    assert result.state.configuration == {"p", "p.r1", "p.r1.a2", "p.r2", "p.r2.b2"}
    (micro,) = result.evidence
    assert [t.source for t in micro.transitions] == ["p.r1.a", "p.r2.b"]
    assert micro.exited == ("p.r2.b", "p.r1.a")
    assert micro.entered == ("p.r1.a2", "p.r2.b2")


def test_a_descendant_source_preempts_an_ancestor_transition_of_another_region() -> None:
    # r1's atomic state selects p's INNER, r2's selects b's INNER; their exit sets
    # intersect and b is a descendant of p, so only b's transition fires.
    log, config = log_of(REGIONS, "INNER")
    assert log == "b"
    assert "p.r2.b2" in config


SHARED = """
statechart: shared
context: {n: integer}
events: {GO: {}}
initial: p
states:
  p:
    parallel: true
    on: {GO: {do: [{assign: {n: ctx.n + 1}}]}}
    states:
      r1: {initial: a, states: {a: {}}}
      r2: {initial: b, states: {b: {}}}
"""


def test_an_ancestor_transition_reached_from_several_regions_fires_once() -> None:
    chart = machine(SHARED)
    result = chart.send(chart.start(), "GO")
    assert result.state.context["n"] == 1
    assert len(result.evidence[0].transitions) == 1


ORDERS = """
statechart: orders
context: {log: string, seen: boolean}
events: {GO: {}, INSIDE: {}, SELF: {}, UP: {}}
initial: a
states:
  a:
    initial: a1
    exit: [{assign: {log: "ctx.log + 'xa '"}}]
    entry: [{assign: {log: "ctx.log + 'na '"}}]
    states:
      a1:
        entry: [{assign: {log: "ctx.log + 'na1 '"}}]
        exit: [{assign: {log: "ctx.log + 'xa1 '"}}]
        on:
          GO:
            to: b.b2
            do: [{assign: {log: "ctx.log + 't '", seen: "active('a1') or active('b')"}}]
          INSIDE: a2
          SELF: a1
          UP: a
      a2:
        entry: [{assign: {log: "ctx.log + 'na2 '"}}]
  b:
    initial: b1
    entry: [{assign: {log: "ctx.log + 'nb '"}}]
    states:
      b1: {entry: [{assign: {log: "ctx.log + 'nb1 '"}}]}
      b2: {entry: [{assign: {log: "ctx.log + 'nb2 '"}}]}
"""


def test_exit_in_reverse_order_then_transition_effects_then_entry_in_document_order() -> None:
    chart = machine(ORDERS)
    s0 = chart.start()
    assert s0.context["log"] == "na na1 "
    result = chart.send(s0, "GO")
    assert result.state.context["log"] == "na na1 xa1 xa t nb nb2 "
    (micro,) = result.evidence
    assert micro.exited == ("a.a1", "a")
    assert micro.entered == ("b", "b.b2")
    # Transition effects run after every exit and before any entry.
    assert result.state.context["seen"] is False


def test_the_transition_domain_bounds_exit_and_entry() -> None:
    log, config = log_of(ORDERS, "INSIDE")
    assert log == "na na1 xa1 na2 "
    assert config == {"a", "a.a2"}


def test_a_self_transition_exits_and_re_enters_its_source() -> None:
    log, _ = log_of(ORDERS, "SELF")
    assert log == "na na1 xa1 na1 "


def test_a_transition_to_an_ancestor_re_enters_it_by_default() -> None:
    log, config = log_of(ORDERS, "UP")
    assert log == "na na1 xa1 xa na na1 "
    assert config == {"a", "a.a1"}


TARGETLESS = """
statechart: targetless
context: {n: integer, log: string}
events: {PING: {}}
initial: a
states:
  a:
    entry: [{assign: {log: "ctx.log + 'na '"}}]
    exit: [{assign: {log: "ctx.log + 'xa '"}}]
    on:
      PING: {do: [{assign: {n: ctx.n + 1}}]}
"""


def test_a_targetless_transition_runs_effects_without_exit_or_entry() -> None:
    chart = machine(TARGETLESS)
    s0 = chart.start()
    result = chart.send(s0, "PING")
    assert result.status is Status.APPLIED
    assert result.state.configuration == s0.configuration
    assert result.state.context == {"n": 1, "log": "na "}
    (micro,) = result.evidence
    assert micro.exited == () and micro.entered == ()
    assert micro.transitions[0].targets == ()


COMPOUND_TARGET = """
statechart: compound
events: {GO: {}, DEEP: {}}
initial: a
states:
  a: {on: {GO: b, DEEP: c}}
  b:
    initial: b1
    states: {b1: {}, b2: {}}
  c:
    initial: m.m2
    states:
      m:
        initial: m1
        states: {m1: {}, m2: {}}
"""


def test_a_compound_target_enters_its_initial_descendants() -> None:
    chart = machine(COMPOUND_TARGET)
    s0 = chart.start()
    assert chart.send(s0, "GO").state.configuration == {"b", "b.b1"}
    assert chart.send(s0, "DEEP").state.configuration == {"c", "c.m", "c.m.m2"}


HISTORY = """
statechart: hist
context: {log: string}
events: {NEXT: {}, OUT: {}, BACK: {}, DEEP_BACK: {}, SWITCH: {}}
initial: away
states:
  m:
    initial: p
    on: {OUT: away, SWITCH: q}
    states:
      h: {history: shallow}
      d: {history: deep, default: q.q2}
      p:
        initial: p1
        states:
          p1: {on: {NEXT: p2}}
          p2: {}
      q:
        initial: q1
        states: {q1: {on: {NEXT: q2}}, q2: {}}
  away:
    on: {BACK: m.h, DEEP_BACK: m.d}
"""


def test_history_defaults_apply_when_nothing_was_recorded() -> None:
    _, shallow = log_of(HISTORY, "BACK")
    assert shallow == {"m", "m.p", "m.p.p1"}  # the parent's initial
    _, deep = log_of(HISTORY, "DEEP_BACK")
    assert deep == {"m", "m.q", "m.q.q2"}  # the declared default


def test_shallow_history_restores_the_child_and_enters_it_by_default() -> None:
    chart = machine(HISTORY)
    state = chart.start()
    for event in ("BACK", "NEXT", "OUT", "BACK"):
        state = chart.send(state, event).state
    assert state.configuration == {"m", "m.p", "m.p.p1"}
    assert state.history["m.h"] == ("m.p",)


def test_deep_history_restores_the_atomic_descendants() -> None:
    chart = machine(HISTORY)
    state = chart.start()
    for event in ("BACK", "NEXT", "OUT", "DEEP_BACK"):
        state = chart.send(state, event).state
    assert state.configuration == {"m", "m.p", "m.p.p2"}
    assert state.history["m.d"] == ("m.p.p2",)
    for event in ("SWITCH", "NEXT", "OUT", "DEEP_BACK"):
        state = chart.send(state, event).state
    assert state.configuration == {"m", "m.q", "m.q.q2"}


DONE = """
statechart: done
context: {log: string}
events: {FINISH: {}, F1: {}, F2: {}, ANY: {}}
initial: c
states:
  c:
    initial: c1
    done: {to: p, do: [{assign: {log: "ctx.log + 'c-done '"}}]}
    states:
      c1: {on: {FINISH: c2}}
      c2: {final: true}
  p:
    parallel: true
    done: {to: end, do: [{assign: {log: "ctx.log + 'p-done '"}}]}
    states:
      r1: {initial: x, states: {x: {on: {F1: xf}}, xf: {final: true}}}
      r2: {initial: y, states: {y: {on: {F2: yf}}, yf: {final: true}}}
  end: {final: true}
"""


def test_a_compound_state_reaching_a_final_child_raises_its_done_event() -> None:
    chart = machine(DONE)
    result = chart.send(chart.start(), "FINISH")
    assert result.state.configuration == {"p", "p.r1", "p.r1.x", "p.r2", "p.r2.y"}
    assert result.state.context["log"] == "c-done "
    first, second = result.evidence
    assert first.raised == ("done.state.c",)
    assert second.event == "done.state.c"
    assert second.transitions[0].kind == "done"


def test_a_parallel_state_is_done_when_every_region_is_final() -> None:
    chart = machine(DONE)
    state = chart.send(chart.start(), "FINISH").state
    after_f1 = chart.send(state, "F1")
    assert after_f1.evidence[0].raised == ("done.state.p.r1",)
    assert "p.r1.xf" in after_f1.state.configuration  # p is not done yet
    after_f2 = chart.send(after_f1.state, "F2")
    assert after_f2.evidence[0].raised == ("done.state.p.r2", "done.state.p")
    assert after_f2.state.configuration == {"end"}
    assert after_f2.state.context["log"] == "c-done p-done "
    assert after_f2.state.is_final


RAISE = """
statechart: raising
context: {log: string}
events: {GO: {}, A: {n: integer}, B: {}}
initial: s
states:
  s:
    on:
      GO:
        to: t
        do:
          - raise: {event: A, payload: {n: 7}}
          - raise: B
          - assign: {log: "ctx.log + 'go '"}
  t:
    always: {to: u, do: [{assign: {log: "ctx.log + 'always '"}}]}
  u:
    on:
      A: {if: event.n == 7, do: [{assign: {log: "ctx.log + 'A '"}}]}
      B: {do: [{assign: {log: "ctx.log + 'B '"}}]}
"""


def test_eventless_transitions_run_before_raised_events_which_run_in_order() -> None:
    chart = machine(RAISE)
    result = chart.send(chart.start(), "GO")
    assert result.state.context["log"] == "go always A B "
    assert [m.event for m in result.evidence] == ["GO", None, "A", "B"]
    assert result.evidence[0].raised == ("A", "B")
    assert result.evidence[2].payload == {"n": 7}


FINAL_STOPS = """
statechart: final_stops
context: {n: integer}
events: {END: {}, LATER: {}}
initial: a
states:
  a:
    on:
      END: {to: z, do: [{raise: LATER}]}
      LATER: {do: [{assign: {n: 1}}]}
  z: {final: true}
"""


def test_reaching_a_top_level_final_state_ends_the_macrostep() -> None:
    chart = machine(FINAL_STOPS)
    result = chart.send(chart.start(), "END")
    assert result.state.is_final
    assert len(result.evidence) == 1  # the raised LATER is never processed
    assert result.state.context["n"] == 0


SPIN = """
statechart: spin
events: {GO: {}, PING: {}, PONG: {}, RAISE: {}}
initial: a
states:
  a:
    on:
      GO: b
      RAISE: {do: [{raise: PING}]}
      PING: {do: [{raise: PONG}]}
      PONG: {do: [{raise: PING}]}
  b: {always: c}
  c: {always: b}
"""


def test_an_eventless_loop_is_rejected_as_livelock_and_changes_nothing() -> None:
    chart = machine(SPIN)
    s0 = chart.start()
    result = chart.send(s0, "GO")
    assert result.status is Status.REJECTED and result.reason == LIVELOCK
    assert result.state is s0
    assert result.message is not None and "1000 microsteps" in result.message


def test_a_raise_loop_is_a_livelock_too_and_the_bound_is_configurable() -> None:
    chart = Chart(chart_of(SPIN), max_microsteps=10)
    result = chart.send(chart.start(), "RAISE")
    assert result.reason == LIVELOCK
    assert "10 microsteps" in (result.message or "")


@pytest.mark.parametrize("bound", [1, 2, 3, 4])
def test_the_static_livelock_verdict_agrees_with_the_general_loop_at_the_bound(
    bound: int,
) -> None:
    text = """
        statechart: chain
        events: {GO: {}}
        initial: a
        states:
          a: {on: {GO: b}}
          b: {always: c}
          c: {always: d}
          d: {}
        """
    chart = Chart(chart_of(text), max_microsteps=bound)
    s0 = chart.start()
    try:
        run = macrostep(chart.tables, s0.active_ids, {}, s0.context, ("GO", {}))
        expected: tuple[Status, str | None, frozenset[str] | None] = (
            Status.APPLIED,
            None,
            frozenset(chart.tables.states[s].path for s in run.configuration.ids),
        )
    except LivelockError:
        expected = (Status.REJECTED, LIVELOCK, None)
    for _ in range(2):
        result = chart.send(s0, "GO")
        shown = result.state.configuration if result.status is Status.APPLIED else None
        assert (result.status, result.reason, shown) == expected
    assert (expected[1] == LIVELOCK) == (bound < 3)


def test_macrostep_is_callable_on_configurations_with_a_guard_oracle() -> None:
    tables = Tables(chart_of(ALTERNATIVES))
    big = tables.chart.path_index["s"]
    asked: list[str] = []

    def never(
        check: GuardCheck,
        transition: Transition | None,
        ctx: Mapping[str, Any],
        payload: Mapping[str, Any],
        active: frozenset[int],
    ) -> bool:
        asked.append(check.expression.source)
        return False

    context = {"n": 0}
    run = macrostep(tables, frozenset({big}), {}, context, ("GO", {"n": 100}), oracle=never)
    assert asked == ["event.n > 5"]
    assert run.fired
    assert {tables.states[s].path for s in run.configuration.ids} == {"small"}
    assert context == {"n": 0}
    enabled, failed = select_transitions(
        tables, tables.configuration(frozenset({big})), ("GO", {"n": 100}), context, {}
    )
    assert [tables.transitions[t].targets for t in enabled] == [(tables.chart.path_index["big"],)]
    assert failed is None
