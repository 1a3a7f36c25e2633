"""Race classes: a pair is a race when its orders may end in different states, info when
they end alike but answer an event differently, convergent when neither differs.

Hand-made charts pin each class and each kind of difference (configuration, context,
messages, timers, answers); the property replays every pair the analysis calls
convergent or info through `Chart.send`, in both orders and for many payloads, from
each configuration it was found in, and requires identical end states.
"""

from __future__ import annotations

import itertools
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from analysis_charts import chart_of, findings
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from statekit.analysis.exploration import Exploration
from statekit.analysis.races import CONVERGENT, INFO, RACE, find_races
from statekit.analysis.witness import Expected, candidates, chart_literals, witness_payloads
from statekit.compiler.ir import CompiledChart
from statekit.engine.chart import Chart
from statekit.engine.result import Result
from statekit.engine.state import State

NOW = 1_000_000
"""The clock every replayed step is given (both events of a pair arrive at one instant)."""


def _two_regions(left: str, right: str, context: str = "", extra: str = "") -> str:
    return f"""
statechart: pair
context:
  c: {{type: integer, default: 0}}
  d: {{type: integer, default: 0}}
{context}
events: {{A: {{n: integer}}, B: {{n: integer}}}}
{extra}
parallel: true
states:
  left:
    initial: l0
    states:
      l0: {{on: {{A: {left}}}}}
      l1: {{reject: {{A: DONE}}}}
  right:
    initial: r0
    states:
      r0: {{on: {{B: {right}}}}}
      r1: {{reject: {{B: DONE}}}}
"""


CASES: dict[str, tuple[str, str, str | None]] = {
    # left's A transition, right's B transition, the class and what differs
    "disjoint assigns commute": (
        "{to: l1, do: [{assign: {c: event.n}}]}",
        "{to: r1, do: [{assign: {d: event.n}}]}",
        None,
    ),
    "a write the other reads": (
        "{to: l1, do: [{assign: {c: event.n}}]}",
        "{to: r1, do: [{assign: {d: ctx.c}}]}",
        "context",
    ),
    "a write the other's guard reads": (
        "{to: l1, do: [{assign: {c: event.n}}]}",
        "{to: r1, if: ctx.c > 3, else: LOW}",
        "configuration",
    ),
    "two messages: the outbox holds both either way": (
        "{to: l1, do: [{emit: {type: Left}}]}",
        "{to: r1, do: [{emit: {type: Right, payload: {n: event.n}}}]}",
        None,
    ),
    "a message that reads what the other writes": (
        "{to: l1, do: [{emit: {type: Left, payload: {c: ctx.c}}}]}",
        "{to: r1, do: [{assign: {c: event.n}}]}",
        "context",
    ),
    "two events queued: their order is the queue's": (
        "{to: l1, do: [{send: {event: B, payload: {n: 1}}}]}",
        "{to: r1, do: [{send: {event: A, payload: {n: 2}}}]}",
        "messages",
    ),
    "one send id armed by one and cancelled by the other": (
        "{to: l1, do: [{send: {event: B, payload: {n: 1}, delay: 1s, id: k}}]}",
        "{to: r1, do: [{cancel: k}]}",
        "messages",
    ),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_each_kind_of_difference_between_two_regions(case: str) -> None:
    left, right, difference = CASES[case]
    report = find_races(chart_of(_two_regions(left, right)))
    if difference is None:
        assert report.races == ()
        (pair,) = report.convergent
        assert (pair.events, pair.race_class, pair.difference) == (("A", "B"), CONVERGENT, None)
    else:
        (race,) = report.races
        assert (race.events, race.race_class, race.difference) == (("A", "B"), RACE, difference)
        assert report.convergent == ()


def test_a_timer_re_armed_by_one_order_only_is_a_race() -> None:
    # B re-enters `waiting` (re-arming its timer) only when A has not left it first
    text = """
statechart: timers
events: {A: {}, B: {}}
initial: waiting
states:
  waiting:
    after: {1m: gone}
    on: {A: {to: other}, B: {to: waiting}}
  other: {on: {B: waiting}, reject: {A: DONE}}
  gone: {final: true}
"""
    report = find_races(chart_of(text))
    ab = next(r for r in report.races if r.events == ("A", "B"))
    assert ab.race_class == RACE


def test_a_different_reason_with_the_same_end_is_info() -> None:
    text = """
statechart: reasons
events: {A: {}, B: {}}
initial: s0
states:
  s0: {on: {B: s1}, reject: {A: TOO_EARLY}}
  s1: {reject: {A: TOO_LATE, B: DONE}}
"""
    (race,) = find_races(chart_of(text)).races
    assert (race.race_class, race.difference) == (INFO, "answers")


def test_a_pair_is_shown_where_its_end_configurations_differ() -> None:
    # In s0 the two orders differ only in the answer; in t0 (after GO) they end in
    # different states: that is where the pair is shown, the other counted.
    text = """
statechart: shown
events: {A: {}, B: {}, GO: {}}
producers: {x: [A], y: [B], z: [GO]}
races: {go_a: {events: [GO, A], decision: x}, go_b: {events: [GO, B], decision: x}}
initial: s0
states:
  s0: {on: {B: s1, GO: t0}, reject: {A: TOO_EARLY}}
  s1: {reject: {A: TOO_LATE, B: DONE, GO: DONE}}
  t0: {on: {A: a, B: b}, reject: {GO: DONE}}
  a: {final: true}
  b: {final: true}
"""
    (race,) = [r for r in find_races(chart_of(text)).races if r.events == ("A", "B")]
    assert (race.configuration, race.race_class, race.difference) == (
        ("t0",),
        RACE,
        "configuration",
    )
    assert [(o.configuration, o.race_class) for o in race.elsewhere] == [(("s0",), INFO)]


TICKET = """
statechart: ticket
events: {Finished: {}, Closed: {}, Noted: {}}
producers: {worker: [Finished], user: [Closed], clerk: [Noted]}
parallel: true
states:
  status:
    initial: open
    states:
      open: {on: {Finished: closed, Closed: closed}}
      closed: {reject: {Finished: ALREADY_CLOSED, Closed: ALREADY_CLOSED}}
  notes:
    initial: empty
    states:
      empty: {on: {Noted: noted}}
      noted: {reject: {Noted: ALREADY_NOTED}}
"""


FLAG_FROM_PAYLOAD = """
statechart: flag
version: 1
context: {hold: {type: boolean, default: false}}
events: {SCORED: {hold: boolean}, PAID: {}, SHIP: {}}
producers: {risk: [SCORED], psp: [PAID], warehouse: [SHIP]}
parallel: true
states:
  risk:
    initial: a
    states:
      a: {on: {SCORED: {to: b, do: [{assign: {hold: event.hold}}]}}}
      b: {}
  pay: {initial: p, states: {p: {on: {PAID: q}}, q: {}}}
  ship:
    initial: w
    states:
      w: {on: {SHIP: {to: s, if: not ctx.hold, else: HOLD}}}
      s: {}
"""


def test_a_flag_stored_from_the_payload_is_one_payload_in_both_orders() -> None:
    """The exploration splits SCORED per value of `event.hold` (`hold` is tracked): the
    branch that stored true in one order is not compared with the one that stored false
    in the other, so SCORED and PAID (which never reads it) converge, while SHIP, which
    reads it, races with SCORED."""
    report = find_races(chart_of(FLAG_FROM_PAYLOAD))
    classes = {r.events: r.race_class for r in (*report.races, *report.convergent)}
    assert classes[("SCORED", "PAID")] == CONVERGENT
    assert classes[("SCORED", "SHIP")] == RACE


def test_each_class_has_its_rule_and_the_suggested_entry_silences_it(tmp_path: Path) -> None:
    # Finished/Closed: the same end, the later one told ALREADY_CLOSED (info); Noted
    # moves another region (convergent with both): no rule reports it.
    assert findings(tmp_path, TICKET, "undecided-race") == []
    (finding,) = findings(tmp_path, TICKET, "order-dependent-answer")
    assert finding.severity.value == "info"
    assert "'Finished' (worker) and 'Closed' (user)" in finding.message
    assert "the orders differ in answers" in finding.notes
    entry = next(n for n in finding.notes if n.startswith("decide it: races: "))
    pasted = entry.removeprefix("decide it: races: ").split(" (add `in:", 1)[0]
    decided = TICKET + f"races: {pasted}\n"
    assert findings(tmp_path, decided, "order-dependent-answer") == []
    assert findings(tmp_path, decided, "stale-race-decision") == []
    convergent = {r.events for r in find_races(chart_of(TICKET)).convergent}
    assert convergent == {("Finished", "Noted"), ("Closed", "Noted")}


# -- the property -------------------------------------------------------------------------

CONDITIONS = ["event.n > 3", "event.flag", "not event.flag", "ctx.c > 3", "ctx.c == event.n"]
EFFECTS = [
    '{assign: {c: "event.n"}}',
    '{assign: {d: "ctx.c + 1"}}',
    '{assign: {c: "ctx.c + event.n"}}',
    "{emit: {type: Note}}",
    '{emit: {type: Seen, payload: {c: "ctx.c"}}}',
    "{send: {event: E2, payload: {n: 1, flag: true}}}",
    "{send: {event: E2, payload: {n: 2, flag: false}, delay: 10s, id: later}}",
    "{cancel: later}",
]


@st.composite
def charts(draw: st.DrawFn) -> str:
    """Two regions of two states reacting to three events, with guards over the payload
    and the context, assigns, messages, sends and `after` timers."""
    lines = [
        "statechart: generated",
        "context:",
        "  c: {type: integer, default: 0}",
        "  d: {type: integer, default: 0}",
        "events:",
    ]
    lines += [f"  E{i}: {{n: {{type: integer}}, flag: {{type: boolean}}}}" for i in range(3)]
    lines += ["parallel: true", "states:"]
    for region in ("r", "s"):
        lines += [f"  {region}:", f"    initial: {region}0", "    states:"]
        for index in range(2):
            lines.append(f"      {region}{index}:")
            timed = draw(st.integers(0, 3)) == 0
            if timed:
                lines.append(f"        after: {{5s: {region}{1 - index}}}")
            handled = [e for e in ("E0", "E1", "E2") if draw(st.booleans())]
            if not handled:
                lines[-1] += "" if timed else " {}"
                continue
            lines.append("        on:")
            for event in handled:
                target = draw(st.sampled_from([f"{region}0", f"{region}1", None]))
                parts = [] if target is None else [f"to: {target}"]
                if draw(st.booleans()):
                    parts.append(f'if: "{draw(st.sampled_from(CONDITIONS))}"')
                    parts.append(f"else: {region.upper()}{index}_{event}_NO")
                effects = draw(st.lists(st.sampled_from(EFFECTS), max_size=2))
                if effects or target is None:
                    parts.append(f"do: [{', '.join(effects) or '{emit: {type: Ping}}'}]")
                lines.append(f"          {event}: {{{', '.join(parts)}}}")
    text = "\n".join(lines) + "\n"
    if "id: later" not in text:  # a `cancel:` must name a send of the chart
        text = text.replace("{cancel: later}", EFFECTS[6], 1)
    return text


def _end(result: Result) -> tuple[object, ...]:
    """A state as the comparison sees it, with the messages and queued events of the
    steps that led to it (see `statekit.analysis.race_effects`: timers by what they will
    deliver and when, not by the arming counter)."""
    state = result.state
    timers = Counter(
        (
            t.id if t.owner is not None or not t.id.startswith("send(") else "send",
            t.event,
            tuple(sorted(t.payload.items())),
            t.delay_ms,
            t.due_ms,
            t.owner,
        )
        for t in state.timers
    )
    return (state.configuration, dict(state.history), dict(state.context), timers)


def _both_orders(
    chart: Chart, start: State, a: tuple[str, dict[str, Any]], b: tuple[str, dict[str, Any]]
) -> list[tuple[tuple[object, ...], Counter[object], tuple[object, ...], tuple[Any, ...]]]:
    out: list[tuple[tuple[object, ...], Counter[object], tuple[object, ...], tuple[Any, ...]]] = []
    for first, second in ((a, b), (b, a)):
        one = chart.send(start, first[0], first[1], now_ms=NOW)
        two = chart.send(one.state, second[0], second[1], now_ms=NOW)
        messages: Counter[object] = Counter(
            (m.type, tuple(sorted(m.payload.items()))) for m in (*one.emitted, *two.emitted)
        )
        queued = tuple((s.event, tuple(sorted(s.payload.items()))) for s in (*one.sent, *two.sent))
        answers = {
            first[0]: (one.status.value, one.reason),
            second[0]: (two.status.value, two.reason),
        }
        out.append((_end(two), messages, queued, tuple(sorted(answers.items()))))
    return out


def _reach(exploration: Exploration, node: int, chart: Chart) -> State | None:
    """The state at the end of the path to `node`, replayed with checked payloads (None
    when the bounded search finds none for a step)."""
    ir = exploration.chart
    steps = []
    for _source, outcome in exploration.path(node):
        if outcome.event is None:
            continue
        steps.append(
            Expected(outcome.event, outcome.status.value, outcome.reason, outcome.transitions(), "")
        )
    payloads = witness_payloads(ir, steps)
    if any(p is None for p in payloads):
        return None
    state = chart.start(now_ms=NOW)
    for step, payload in zip(steps, payloads, strict=True):
        state = chart.send(state, step.event, payload, now_ms=NOW).state
    return state


def _payloads(ir: CompiledChart, event: str, state: State) -> list[dict[str, Any]]:
    declared = ir.events.get(event)
    if declared is None:
        return [{}]  # a timer's event
    names = [f.name for f in declared.fields]
    literals = chart_literals(ir)
    choices = [candidates(f, state.context, literals)[:5] for f in declared.fields]
    return [dict(zip(names, values, strict=True)) for values in itertools.product(*choices)]


@settings(
    max_examples=60, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow]
)
@given(text=charts())
def test_every_convergent_or_info_pair_replays_to_one_end_state(text: str) -> None:
    ir = chart_of(text)
    report = find_races(ir)
    chart = Chart(ir)
    timers = set(report.exploration.timer_events)
    for race in (*report.races, *report.convergent):
        a, b = race.events
        occurrences = [
            (race.node, race.race_class),
            *((o.node, o.race_class) for o in race.elsewhere),
        ]
        for node, race_class in occurrences:
            if race_class == RACE:
                continue
            start = _reach(report.exploration, node, chart)
            if start is None:
                continue
            for pa in _payloads(ir, a, start):
                for pb in _payloads(ir, b, start):
                    ab, ba = _both_orders(chart, start, (a, pa), (b, pb))
                    where = (text, race.events, node, pa, pb)
                    assert ab[0] == ba[0], where  # configuration, history, context, timers
                    assert ab[1] == ba[1], where  # the outbox's messages
                    assert ab[2] == ba[2], where  # the events queued (one order's at most)
                    if race_class == CONVERGENT:
                        answers_ab, answers_ba = dict(ab[3]), dict(ba[3])
                        if b in timers:  # a timer's own answer is no difference
                            answers_ab.pop(b)
                            answers_ba.pop(b)
                        assert answers_ab == answers_ba, where
