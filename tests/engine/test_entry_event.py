"""`_event` in entry and exit actions and in eventless transitions: bound to the event the
macrostep is processing (the external one, then each internal one it takes up; an
eventless microstep keeps the last), null in the start's entry, where none is bound.

Every row runs on the three paths (`Chart.send`: the memo and the compiled paths;
`Chart(memo=False)`: the general path; `step(memoised=False)`: the reference loop), which
must agree on everything, and a replay of the accepted events gives the same state.
"""

from __future__ import annotations

from typing import Any

import pytest
from chart_helpers import machine
from hypothesis import given
from hypothesis import strategies as st
from test_compiled_choice import assert_same
from test_properties import SETTINGS, draw_event

import statekit
from statekit.engine.memo import memoised_macrostep
from statekit.engine.result import Status
from statekit.engine.step import step
from statekit.engine.tables import DependsOnData

AUDIT = """
statechart: audit
context:
  log: {type: list, items: {type: string, nullable: true}, default: []}
  kinds:
    type: list
    items: {type: string, enum: [external, internal, platform], nullable: true}
    default: []
events:
  CLOSE: {reason: {type: string, default: none}}
  CANCEL: {}
  CHECKED: {}
  REOPEN: {}
  SPLIT: {}
  LEFT: {}
  RIGHT: {}
initial: open
states:
  open:
    entry:
      - assign: {log: "ctx.log + ['open', _event.name]", kinds: "ctx.kinds + [_event.type]"}
    exit: [{assign: {log: "ctx.log + ['-open', _event.name]"}}]
    on:
      CLOSE: closing
      CANCEL: {to: cancelled, do: [{raise: CHECKED}]}
      SPLIT: both
  closing:
    entry: [{assign: {log: "ctx.log + ['closing', _event.name]"}}]
    always:
      - {to: closed, if: "_event.name == 'CLOSE' and _event.type == 'external'"}
      - {to: open}
  closed:
    entry: [{assign: {log: "ctx.log + ['closed', _event.name]"}}]
    on: {REOPEN: open}
  cancelled:
    entry: [{assign: {log: "ctx.log + ['cancelled', _event.name]"}}]
    on: {CHECKED: checked}
  checked:
    entry:
      - assign: {log: "ctx.log + ['checked', _event.name]", kinds: "ctx.kinds + [_event.type]"}
    on: {REOPEN: open}
  both:
    parallel: true
    states:
      left:
        initial: working
        states:
          working:
            entry: [{assign: {log: "ctx.log + ['left', _event.name]"}}]
            on: {LEFT: finished}
          finished: {final: true}
      right:
        initial: working
        states:
          working:
            entry: [{assign: {log: "ctx.log + ['right', _event.name]"}}]
            on: {RIGHT: finished}
          finished: {final: true}
    done: merged
  merged:
    entry:
      - assign: {log: "ctx.log + ['merged', _event.name]", kinds: "ctx.kinds + [_event.type]"}
    on: {REOPEN: open}
"""

START = ["open", None]
ROWS: list[tuple[str, list[str], list[str | None], list[str | None]]] = [
    ("start: no event is bound", [], START, [None]),
    (
        "entry via an event, and the exit before it",
        ["CLOSE", "REOPEN"],
        [*START, "-open", "CLOSE", "closing", "CLOSE", "closed", "CLOSE", "open", "REOPEN"],
        [None, "external"],
    ),
    (
        "entry via raise: the internal event once it is taken up",
        ["CANCEL"],
        [*START, "-open", "CANCEL", "cancelled", "CANCEL", "checked", "CHECKED"],
        [None, "internal"],
    ),
    (
        "entry via an eventless transition keeps the last event",
        ["CLOSE"],
        [*START, "-open", "CLOSE", "closing", "CLOSE", "closed", "CLOSE"],
        [None],
    ),
    (
        "parallel: every region's entry sees the same event",
        ["SPLIT"],
        [*START, "-open", "SPLIT", "left", "SPLIT", "right", "SPLIT"],
        [None],
    ),
    (
        "a done event is bound as the platform's",
        ["SPLIT", "LEFT", "RIGHT"],
        [*START, "-open", "SPLIT", "left", "SPLIT", "right", "SPLIT", "merged", "done.state.both"],
        [None, "platform"],
    ),
]


def _paths() -> tuple[statekit.Chart, statekit.Chart]:
    cached = machine(AUDIT)
    return cached, statekit.Chart(cached.ir, memo=False)


@pytest.mark.parametrize(
    ("events", "log", "kinds"), [r[1:] for r in ROWS], ids=[r[0] for r in ROWS]
)
def test_entry_and_exit_read_the_bound_event_on_every_path(
    events: list[str], log: list[str | None], kinds: list[str | None]
) -> None:
    cached, general = _paths()
    state = cached.start()
    for i, event in enumerate(events):
        fast = cached.send(state, event, event_id=f"e{i}")
        assert fast.status is Status.APPLIED, fast.message
        assert_same(fast, general.send(state, event, event_id=f"e{i}"), f"e{i}")
        assert_same(fast, step(cached.tables, state, event, None, f"e{i}", memoised=False), f"e{i}")
        state = fast.state
    assert list(state.context["log"]) == log
    assert list(state.context["kinds"]) == kinds
    replayed = cached.replay([(event, {}) for event in events])
    assert replayed.ok and replayed.state == state


def test_a_guard_free_macrostep_whose_entry_reads_the_event_is_not_memoised() -> None:
    """The memo keeps macrosteps that run no effect; an entry that reads `_event` is an
    effect, so `REOPEN`, guard-free, depends on the data (the event it was entered by)."""
    chart = machine(AUDIT)
    closed = chart.send(chart.send(chart.start(), "CLOSE").state, "REOPEN").state
    assert isinstance(memoised_macrostep(chart.tables, closed._config, "CLOSE"), DependsOnData)


def test_the_paths_agree_on_random_streams() -> None:
    cached, general = _paths()

    @SETTINGS
    @given(st.data(), st.integers(min_value=1, max_value=25))
    def check(data: st.DataObject, length: int) -> None:
        state = general.start()
        accepted: list[tuple[str, dict[str, Any] | None, str]] = []
        for i in range(length):
            event, payload = draw_event(data, general, state)
            fast = general.send(state, event, payload, event_id=f"e{i}")
            reference = step(general.tables, state, event, payload, f"e{i}", memoised=False)
            assert_same(fast, reference, f"e{i}")
            memoised = cached.send(cached.state_from_json(state.to_json()), event, payload)
            assert memoised.state.to_json() == fast.state.to_json()
            if fast.status is not Status.REJECTED:
                accepted.append((event, payload, f"e{i}"))
            state = fast.state
        replayed = general.replay(accepted)
        assert replayed.ok and replayed.state.to_json() == state.to_json()

    check()
