"""Timers in the analysis: timer events occur where armed, in the exploration, the rules,
`explain` and `paths`."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

import pytest
from analysis_charts import chart_of, explored, findings
from click.testing import CliRunner
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from statekit.analysis.explain import explain
from statekit.analysis.facts import facts_of
from statekit.analysis.paths import covering_paths
from statekit.analysis.races import find_races
from statekit.analysis.timers import armed_sends
from statekit.cli.group import cli as main
from statekit.compiler.pipeline import compile_source
from statekit.engine.chart import Chart
from statekit.testing import Simulator

TIMEOUT = """
statechart: timeout
events: {GO: {}}
initial: idle
states:
  idle: {on: {GO: waiting}}
  waiting:
    reject: {GO: BUSY}
    after:
      15m: {to: closed}
  closed: {final: true, reject: {"*": CLOSED}}
"""

TIMER = "after(15m)@waiting"


def _write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "chart.yaml"
    path.write_text(textwrap.dedent(text).lstrip("\n"), encoding="utf-8")
    return path


def test_a_state_left_only_by_a_timeout_is_reachable_and_not_dead(tmp_path: Path) -> None:
    exploration = explored(TIMEOUT)
    chart = exploration.chart
    closed = chart.path_index["closed"]
    assert exploration.complete
    assert any(closed in n.config.ids for n in exploration.nodes)
    facts = facts_of(exploration)
    assert chart.path_index["waiting"] in facts.left_states
    (timer,) = [t for t in chart.transitions if t.event == TIMER]
    assert timer.id in facts.selected_transitions
    assert findings(tmp_path, TIMEOUT) == []


@pytest.mark.parametrize("with_timer", [True, False])
def test_a_trap_is_broken_by_a_timer(tmp_path: Path, with_timer: bool) -> None:
    after = "    after:\n      30s: {to: done}\n" if with_timer else ""
    text = (
        "statechart: trap\nevents: {GO: {}}\ninitial: idle\nstates:\n"
        "  idle: {on: {GO: stuck}}\n"
        "  stuck:\n    reject: {GO: STUCK}\n"
        + after
        + '  done: {final: true, reject: {"*": DONE}}\n'
    )
    slugs = {d.slug for d in findings(tmp_path, text)}
    if with_timer:
        assert slugs == set()
    else:
        assert "no-final-path" in slugs and "unreachable-state" in slugs


def test_an_invariant_violated_only_after_a_timeout_names_the_timer_in_its_trace(
    tmp_path: Path,
) -> None:
    text = TIMEOUT.replace(
        "initial: idle",
        "initial: idle\ninvariants:\n  never_closed: {when: closed, forbid: closed}",
    )
    (finding,) = findings(tmp_path, text, "invariant-violation")
    trace = "\n".join(finding.notes)
    assert "1. GO" in trace and f"2. {TIMER}" in trace


TIMER_CHARTS = {
    "on an atomic state": (
        """
        events: {GO: {}, BACK: {}}
        initial: a
        states:
          a: {on: {GO: b}, reject: {BACK: AT_A}}
          b:
            on: {BACK: a}
            reject: {GO: AT_B}
            after: {5s: {to: a}}
        """,
        "b",
    ),
    "on a compound state": (
        """
        events: {GO: {}, BACK: {}}
        initial: a
        states:
          a: {on: {GO: b}, reject: {BACK: AT_A}}
          b:
            initial: b1
            on: {BACK: a}
            reject: {GO: AT_B}
            after: {1m: {to: a}}
            states:
              b1: {}
        """,
        "b",
    ),
    "on a nested child": (
        """
        events: {GO: {}, NEXT: {}}
        initial: a
        states:
          a: {on: {GO: b}, reject: {NEXT: AT_A}}
          b:
            initial: b1
            on: {GO: a}
            states:
              b1: {on: {NEXT: b2}}
              b2:
                reject: {NEXT: AT_B2}
                after: {2h: {to: b1}}
        """,
        "b.b2",
    ),
    "in a parallel region": (
        """
        events: {GO: {}, STOP: {}}
        parallel: true
        states:
          left:
            initial: l1
            states:
              l1: {on: {GO: l2}}
              l2: {after: {250ms: {to: l1}}, reject: {GO: AT_L2}}
          right:
            initial: r1
            states:
              r1: {on: {STOP: r2}}
              r2: {on: {STOP: r1}}
        """,
        "left.l2",
    ),
    "with a guard and else": (
        """
        events: {GO: {}}
        context: {n: {type: integer, default: 0}}
        initial: a
        states:
          a: {on: {GO: b}}
          b:
            reject: {GO: AT_B}
            after:
              - delay: ctx.n
                to: a
                if: ctx.n > 1
                else: TOO_SOON
        """,
        "b",
    ),
}


@pytest.mark.parametrize("name", sorted(TIMER_CHARTS))
def test_timer_events_occur_exactly_where_their_state_is_active(tmp_path: Path, name: str) -> None:
    body, owner_path = TIMER_CHARTS[name]
    text = "statechart: timers\n" + textwrap.dedent(body).lstrip("\n")
    exploration = explored(text)
    chart = exploration.chart
    (timer,) = chart.timers
    assert chart.states[timer.state].path == owner_path
    armed_somewhere = False
    for node in exploration.nodes:
        events = {o.event for o in node.outcomes or ()}
        armed = timer.state in node.config.ids
        armed_somewhere |= armed
        assert (timer.name in events) is armed, (name, node.config)
    assert armed_somewhere
    assert [d for d in findings(tmp_path, text, "undefined-pair") if timer.name in d.message] == []
    assert findings(tmp_path, text, "dead-state") == []


SEND_PLACES = {
    "transition effect": (
        "a: {on: {GO: {to: b, do: [{send: {event: PING, delay: 5s}}]}}}",
        "b: {}",
    ),
    "entry effect": ("a: {on: {GO: b}}", "b: {entry: [{send: {event: PING, delay: 5s}}]}"),
    "exit effect": ("a: {on: {GO: b}, exit: [{send: {event: PING, delay: 5s}}]}", "b: {}"),
    "undelayed send": ("a: {on: {GO: {to: b, do: [{send: {event: PING}}]}}}", "b: {}"),
}


@pytest.mark.parametrize("place", sorted(SEND_PLACES))
def test_a_sent_event_must_be_classified_wherever_it_can_arrive(tmp_path: Path, place: str) -> None:
    a, b = SEND_PLACES[place]
    text = (
        f"statechart: sends\nevents: {{GO: {{}}, PING: {{}}}}\ninitial: a\nstates:\n  {a}\n  {b}\n"
    )
    found = findings(tmp_path, text, "undefined-pair")
    assert {d.message.split()[1] for d in found} >= {"PING"}
    classified = text.replace("b: {", 'b: {reject: {"*": DONE}, ', 1).replace(
        "a: {", "a: {reject: {PING: EARLY}, ", 1
    )
    assert [
        d for d in findings(tmp_path, classified, "undefined-pair") if "PING" in d.message
    ] == []


SENDS = """
statechart: sends
events: {GO: {}, STOP: {}, RETRY: {}}
initial: a
states:
  a:
    on: {GO: {to: b, do: [{send: {event: RETRY, delay: 30s, id: retry}}]}}
    reject: {STOP: AT_A, RETRY: AT_A}
  b:
    on: {GO: c, RETRY: a}
    reject: {STOP: AT_B}
  c:
    on: {STOP: {to: d, do: [{cancel: retry}]}, RETRY: a}
    reject: {GO: AT_C}
  d: {final: true, reject: {"*": DONE}}
"""


def test_a_delayed_send_stays_armed_across_state_exits_until_cancelled_by_id() -> None:
    exploration = explored(SENDS)
    armed = armed_sends(exploration)
    by_state: dict[str, set[frozenset[str]]] = {}
    for node in exploration.nodes:
        (leaf,) = [exploration.chart.states[s].path for s in node.config.atomic]
        by_state.setdefault(leaf, set()).add(armed[node.id])
    # back in a by an external RETRY while the timer is armed: it may still be armed there
    assert by_state["a"] == {frozenset({"retry"})}
    assert by_state["b"] == {frozenset({"retry"})}
    assert by_state["c"] == {frozenset({"retry"})}  # left b: still armed
    assert by_state["d"] == {frozenset()}  # cancelled by id on the way
    rows = {row.states: row for row in explain(exploration).rows}
    assert rows[("c",)].sends == ("retry",) and rows[("d",)].sends == ()


def test_no_send_timers_are_computed_for_a_chart_without_delayed_sends() -> None:
    exploration = explored(TIMEOUT)
    assert set(armed_sends(exploration)) == {frozenset()}


def test_explain_json_lists_timers_and_their_answers(tmp_path: Path) -> None:
    path = _write(tmp_path, TIMEOUT)
    result = CliRunner().invoke(main, ["explain", str(path), "--format", "json"])
    assert result.exit_code == 0, result.output
    out = json.loads(result.output)
    assert out["timers"] == [
        {
            "name": TIMER,
            "state": "waiting",
            "due": "15m",
            "transitions": ["'waiting' --after(15m)@waiting--> 'closed' (line 9)"],
        }
    ]
    configs = {tuple(c["states"]): c for c in out["configurations"]}
    assert configs[("waiting",)]["timers"] == [TIMER]
    assert configs[("waiting",)]["events"][TIMER][0]["target"] == ["closed"]
    assert configs[("idle",)]["timers"] == [] and TIMER not in configs[("idle",)]["events"]
    table = CliRunner().invoke(main, ["explain", str(path), "--table"])
    assert f"| {TIMER} | → closed | 1 | waiting | waiting |" in table.output
    assert f"| {TIMER} | waiting | 15m |" in table.output
    text = CliRunner().invoke(main, ["explain", str(path), "--event", TIMER])
    assert text.exit_code == 0 and TIMER in text.output


def test_explain_json_of_a_chart_without_timers_has_no_timer_keys(tmp_path: Path) -> None:
    path = _write(tmp_path, TIMEOUT.replace("    after:\n      15m: {to: closed}\n", ""))
    out = json.loads(CliRunner().invoke(main, ["explain", str(path), "--format", "json"]).output)
    assert "timers" not in out and all("timers" not in c for c in out["configurations"])


def test_paths_pass_through_a_timer(tmp_path: Path) -> None:
    suite = covering_paths(explored(TIMEOUT))
    events = [[s.event for s in p.steps] for p in suite.paths]
    assert any(TIMER in e for e in events)
    assert suite.never_selected == ()
    path = _write(tmp_path, TIMEOUT)
    result = CliRunner().invoke(main, ["paths", str(path)])
    assert f"  {TIMER} → {{closed}}" in result.output


def test_unknown_event_for_explain_names_the_timer_events(tmp_path: Path) -> None:
    path = _write(tmp_path, TIMEOUT)
    result = CliRunner().invoke(main, ["explain", str(path), "--event", "NOPE"])
    assert result.exit_code == 2 and TIMER in result.output


def test_chart_of_keeps_timer_names_stable() -> None:
    chart = chart_of(TIMEOUT)
    assert [t.name for t in chart.timers] == [TIMER]


LEAVES = ("s0", "s1", "s2", "p.c0", "p.c1")
DELAYS = ("1s", "2s", "5s")


@st.composite
def _timed_charts(draw: st.DrawFn) -> str:
    """A small chart: three flat states and a compound `p` with two children; random
    transitions on two events and random `after` timers (on any state, `p` included)."""
    targets = st.sampled_from(LEAVES)

    def body(name: str, indent: str) -> str:
        lines: list[str] = []
        on = draw(st.dictionaries(st.sampled_from(["E0", "E1"]), targets, max_size=2))
        if on:
            lines.append(indent + "on: {" + ", ".join(f"{e}: {t}" for e, t in on.items()) + "}")
        after = draw(st.dictionaries(st.sampled_from(DELAYS), targets, max_size=2))
        if after:
            entries = ", ".join(f"{d}: {{to: {t}}}" for d, t in after.items())
            lines.append(indent + "after: {" + entries + "}")
        return "\n".join(lines)

    out = ["statechart: random", "events: {E0: {}, E1: {}}", "initial: s0", "states:"]
    for name in ("s0", "s1", "s2"):
        out.append(f"  {name}:")
        out.append(body(name, "    ") or "    description: plain")
    out.append("  p:")
    out.append("    initial: c0")
    parent = body("p", "    ")
    if parent:
        out.append(parent)
    out.append("    states:")
    for child in ("c0", "c1"):
        out.append(f"      {child}:")
        out.append(body(child, "        ") or "        description: plain")
    return "\n".join(out) + "\n"


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    text=_timed_charts(),
    moves=st.lists(
        st.one_of(st.sampled_from(["E0", "E1"]), st.sampled_from([0, 500, 1000, 3000])), max_size=25
    ),
)
def test_every_configuration_the_simulator_reaches_is_in_the_exploration(
    text: str, moves: list[str | int]
) -> None:
    result = compile_source(text, "random.yaml")
    assert result.chart is not None, [d.message for d in result.diagnostics]
    chart = result.chart
    reachable = {frozenset(c.ids) for c in explored(text).configurations()}
    simulator = Simulator(Chart(chart, source=text), now_ms=0)
    seen = [simulator.state.active_ids]
    for move in moves:
        if isinstance(move, str):
            simulator.send(move)
            seen.append(simulator.state.active_ids)
        else:
            for fired in simulator.advance(move):
                seen.append(fired.state.active_ids)
            seen.append(simulator.state.active_ids)
    for ids in seen:
        assert frozenset(ids) in reachable, (text, moves)


RACE = """
statechart: pay
events: {PaymentSucceeded: {}}
producers: {channel: [PaymentSucceeded]}
initial: flow
states:
  flow:
    initial: processing
    states:
      processing:
        on: {PaymentSucceeded: paid}
        after: {15m: {to: closed}}
      paid: {final: true, reject: {"*": PAID}}
      closed: {final: true, reject: {"*": CLOSED}}
"""
RACE_TIMER = "after(15m)@flow.processing"


def test_a_timer_races_with_an_event_and_a_races_entry_decides_it(tmp_path: Path) -> None:
    report = find_races(chart_of(RACE))
    (race,) = report.races
    assert race.events == ("PaymentSucceeded", RACE_TIMER)
    texts = {o.text() for o in race.orders}
    assert texts == {
        f"PaymentSucceeded APPLIED, then {RACE_TIMER} REJECTED STALE_TIMER → {{flow.paid}}",
        f"{RACE_TIMER} APPLIED, then PaymentSucceeded REJECTED CLOSED → {{flow.closed}}",
    }
    (finding,) = findings(tmp_path, RACE, "undecided-race")
    assert RACE_TIMER in finding.message
    decided = RACE.replace(
        "initial: flow",
        "races:\n  timeout:\n"
        f"    events: [PaymentSucceeded, '{RACE_TIMER}']\n"
        "    decision: the first to commit wins\ninitial: flow",
    )
    assert findings(tmp_path, decided, "undecided-race") == []
    assert findings(tmp_path, decided, "stale-race-decision") == []


def test_two_timers_are_not_paired_as_a_race() -> None:
    text = RACE.replace("after: {15m: {to: closed}}", "after: {15m: {to: closed}, 1h: {to: paid}}")
    events = {race.events for race in find_races(chart_of(text)).races}
    assert all("PaymentSucceeded" in pair for pair in events)


TRANSIENT = {
    "left by always": ("always: done", True),
    "left by a guarded always": ("always: {to: done, if: 'ctx.ready'}", False),
    "left by a raised event": ("entry: [{raise: {event: GO}}]\n    on: {GO: done}", True),
    "waiting": ("on: {GO: done}", False),
}


@pytest.mark.parametrize("name", sorted(TRANSIENT))
def test_a_timer_whose_state_never_stays_active_is_reported(tmp_path: Path, name: str) -> None:
    leave, transient = TRANSIENT[name]
    text = (
        "statechart: transient\nevents: {GO: {}}\n"
        "context: {ready: {type: boolean, default: false}}\ninitial: idle\nstates:\n"
        "  idle: {on: {GO: checking}}\n"
        f"  checking:\n    after: {{30s: {{to: idle}}}}\n    {leave}\n"
        "  done: {final: true}\n"
    )
    found = findings(tmp_path, text, "transient-timer")
    assert [d.span.line for d in found] == ([8] if transient else [])
    if transient:
        assert "after(30s)@checking" in found[0].message


def test_a_timer_cancelled_by_the_other_event_differs_only_in_what_it_emitted() -> None:
    # PaymentSucceeded ends in paid either way, but the timer's Reminder is emitted only
    # when the timer comes first: the outbox is part of the end state, so it is a race
    # in messages (it was no race while only configurations and answers were compared)
    text = RACE.replace(
        "after: {15m: {to: closed}}", "after: {15m: {do: [{emit: {type: Reminder}}]}}"
    )
    (race,) = find_races(chart_of(text)).races
    assert (race.race_class, race.difference) == ("race", "messages")
    assert race.orders[0].configuration == race.orders[1].configuration
