"""Every `races:` entry that undecided-race suggests is valid as written: pasted into its
chart, the chart compiles and that race is decided (timers of top-level and nested
states, delay expressions and deadlines included)."""

from __future__ import annotations

import re
import textwrap
from pathlib import Path

import pytest
import yaml
from analysis_charts import findings

from statekit.compiler.diagnostics import Diagnostic
from statekit.compiler.pipeline import compile_source

TOP_LEVEL_TIMER = """
statechart: top_timer
version: 1
events: {GO: {}}
producers: {user: [GO]}
initial: waiting
states:
  waiting:
    on: {GO: done}
    after: {1h: timed_out}
  done: {final: true}
  timed_out: {final: true}
"""

NESTED_TIMER = """
statechart: billing
version: 1
events: {PAYMENT_METHOD_ATTACHED: {}, CANCEL: {}}
producers: {customer: [PAYMENT_METHOD_ATTACHED], support: [CANCEL]}
initial: billing
states:
  billing:
    initial: active
    states:
      active: {on: {CANCEL: cancelled}}
      cancelled:
        on: {PAYMENT_METHOD_ATTACHED: active}
        after: {30d: closed}
      closed: {final: true}
"""

EXPRESSION_TIMERS = """
statechart: expression_timers
version: 1
context: {grace_ms: {type: integer, default: 1000}, deadline: {type: integer, default: 5}}
events: {PAID: {}, "order-cancelled": {}}
producers: {bank: [PAID], shop: [order-cancelled]}
initial: open
states:
  open:
    on: {PAID: paid, order-cancelled: cancelled}
    after:
      - {delay: ctx.grace_ms * 2, to: expired}
  paid:
    initial: shipping
    states:
      shipping:
        on: {order-cancelled: refunded}
        after:
          - {at: ctx.deadline, to: late}
      late: {on: {order-cancelled: refunded}}
      refunded: {final: true}
  cancelled: {final: true}
  expired: {final: true}
"""

DECLARED_ONLY = """
statechart: lesson
version: 1
initial: running
events: {TaskCompleted: {}, CancellationRequested: {}}
producers: {worker: [TaskCompleted], user: [CancellationRequested]}
states:
  running:
    on: {TaskCompleted: completed, CancellationRequested: cancelled}
  completed: {final: true}
  cancelled: {final: true}
"""

SHARED_PRODUCER = """
statechart: webhooks
version: 1
events: {PICKED_UP: {}, DELIVERED: {}, CANCEL: {}}
producers:
  carrier: [PICKED_UP, DELIVERED]
  ops: [DELIVERED]
  customer: [CANCEL]
initial: waiting
states:
  waiting: {on: {PICKED_UP: picked, DELIVERED: delivered, CANCEL: cancelled}}
  picked: {on: {DELIVERED: delivered, CANCEL: cancelled}, already: [PICKED_UP]}
  delivered: {final: true, already: [PICKED_UP, DELIVERED], reject: {CANCEL: DELIVERED}}
  cancelled: {final: true, reject: {"*": CANCELLED}}
"""

_SUGGESTION = re.compile(r"^decide it: races: (\{.*\}) \(add `in: STATE`")
_UNORDERED = re.compile(r"^or declare their producer unordered: producers: (\{.*\}) \(in place")


def _undecided(tmp_path: Path, text: str) -> list[Diagnostic]:
    """The findings of both rules that ask for a race decision: pairs whose orders end
    in other states (`undecided-race`) and pairs whose orders only answer differently
    (`order-dependent-answer`, such as a webhook made idempotent by `already`)."""
    return findings(tmp_path, text, "undecided-race") + findings(
        tmp_path, text, "order-dependent-answer"
    )


def _unordered_suggested(tmp_path: Path, text: str) -> dict[tuple[str, ...], str]:
    """The suggested unordered producer entry of each undecided pair that has one."""
    out: dict[tuple[str, ...], str] = {}
    for finding in _undecided(tmp_path, text):
        for note in finding.notes:
            if (match := _UNORDERED.match(note)) is not None:
                ((_, producer),) = yaml.safe_load(match.group(1)).items()
                assert producer["unordered"] is True
                out[tuple(sorted(finding.message.split("'")[1:4:2]))] = match.group(1)
    return out


def _suggested(tmp_path: Path, text: str) -> dict[tuple[str, ...], str]:
    """The suggested entry of each undecided pair, by the pair's events (sorted)."""
    out: dict[tuple[str, ...], str] = {}
    for finding in _undecided(tmp_path, text):
        (entry,) = [m.group(1) for n in finding.notes if (m := _SUGGESTION.match(n))]
        ((_, race),) = yaml.safe_load(entry).items()
        assert f"'{race['events'][0]}'" in finding.message
        out[tuple(sorted(race["events"]))] = entry
    return out


@pytest.mark.parametrize(
    ("text", "timer_pairs"),
    [
        (TOP_LEVEL_TIMER, 1),
        (NESTED_TIMER, 1),
        (EXPRESSION_TIMERS, 2),
        (DECLARED_ONLY, 0),
        (SHARED_PRODUCER, 0),
    ],
    ids=[
        "top-level-timer",
        "nested-timer",
        "expression-and-deadline-timers",
        "declared",
        "shared-producer",
    ],
)
def test_each_suggested_entry_compiles_and_decides_its_race(
    tmp_path: Path, text: str, timer_pairs: int
) -> None:
    suggested = _suggested(tmp_path, text)
    assert suggested
    timers = [pair for pair in suggested if any("@" in event for event in pair)]
    assert len(timers) == timer_pairs, suggested
    for pair, entry in suggested.items():
        pasted = textwrap.dedent(text).lstrip("\n") + f"races: {entry}\n"
        compiled = compile_source(pasted, "chart.yaml")
        assert compiled.chart is not None, [d.message for d in compiled.diagnostics]
        assert pair not in _suggested(tmp_path, pasted)
    every = ", ".join(entry[1:-1] for entry in suggested.values())
    all_pasted = textwrap.dedent(text).lstrip("\n") + f"races: {{{every}}}\n"
    assert _suggested(tmp_path, all_pasted) == {}
    assert findings(tmp_path, all_pasted, "stale-race-decision") == []


def test_a_timer_of_a_top_level_state_is_a_race_event() -> None:
    """`after(1h)@waiting` matches both the event-name and the timer-name pattern: the
    schema accepts it (it once refused it, its `oneOf` matching twice)."""
    text = textwrap.dedent(TOP_LEVEL_TIMER).lstrip("\n")
    text += 'races: {go_vs_timer: {events: [GO, "after(1h)@waiting"], decision: GO wins}}\n'
    compiled = compile_source(text, "chart.yaml")
    assert compiled.chart is not None, [d.message for d in compiled.diagnostics]
    assert [d.events for d in compiled.chart.races] == [("GO", "after(1h)@waiting")]


def test_a_suggested_name_the_chart_uses_gets_a_suffix(tmp_path: Path) -> None:
    text = textwrap.dedent(TOP_LEVEL_TIMER).lstrip("\n")
    text += "races: {GO_vs_after_1h_waiting: {events: [GO, GO], decision: x}}\n"
    (entry,) = _suggested(tmp_path, text.replace("[GO, GO]", "[GO, done_x]")).values()
    assert entry.startswith("{GO_vs_after_1h_waiting_2:")


def test_the_unordered_form_is_suggested_where_one_producers_events_race_and_decides_them(
    tmp_path: Path,
) -> None:
    """PICKED_UP and DELIVERED are both carrier's, yet race (ops sends DELIVERED too): the
    finding also suggests carrier's `unordered: true` form, which decides them pasted in
    place of carrier's list; the pair with CANCEL (two producers) gets no such form."""
    text = textwrap.dedent(SHARED_PRODUCER).lstrip("\n")
    suggested = _unordered_suggested(tmp_path, text)
    assert list(suggested) == [("DELIVERED", "PICKED_UP")]
    assert ("CANCEL", "DELIVERED") in _suggested(tmp_path, text)
    (entry,) = suggested.values()
    assert entry == (
        "{carrier: {events: [PICKED_UP, DELIVERED], unordered: true, decision: who wins and why}}"
    )
    pasted = text.replace("  carrier: [PICKED_UP, DELIVERED]\n", f"  {entry[1:-1]}\n")
    assert pasted != text
    compiled = compile_source(pasted, "chart.yaml")
    assert compiled.chart is not None, [d.message for d in compiled.diagnostics]
    assert ("DELIVERED", "PICKED_UP") not in _suggested(tmp_path, pasted)
    assert _unordered_suggested(tmp_path, pasted) == {}
    assert ("CANCEL", "DELIVERED") in _suggested(tmp_path, pasted)
