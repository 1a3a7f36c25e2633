"""`done.state.<path>` as an event any state's `on:` handles: raised on the internal
queue after the events raised before it, processed by whatever configuration is active
when it is dequeued (the state itself, an ancestor, a sibling after the state was left,
a state of another region, or nobody), with the final state's `output:` as its payload.

Every case runs through the three paths of the engine (the reference loop, the general
path without the memo, the cached path), which must give the same results."""

from __future__ import annotations

import pytest
from chart_helpers import compile_text, machine
from test_compiled_choice import assert_same

import statekit
from statekit.engine.result import Status
from statekit.engine.step import step

HEAD = """
statechart: done_events
@ERRORS@
context:
  log: {type: string, default: ""}
  score: {type: integer, default: 0}
events: {FINISH: {}, OTHER: {}, LEAVE: {}}
initial: work
states:
"""


def _log(word: str) -> str:
    return f"[{{assign: {{log: \"ctx.log + '{word};'\"}}}}]"


def _logged(text: str) -> str:
    """`{log: word}` placeholders (`%word%`) as assign effects."""
    out = text
    while "%" in out:
        before, word, after = out.split("%", 2)
        out = before + _log(word) + after
    return out


COMPOUND = """
  work:
    initial: doing
    @OWN@
    on:
      done.state.work: {to: after, do: %on-the-state%}
      LEAVE: after
    states:
      doing: {on: {FINISH: finished}}
      finished: {final: true, output: {points: "10 // (ctx.score + 1)"}, entry: @ENTRY@}
  after:
    on:
      done.state.work:
        - {to: end, if: "event.points > 5", do: %sibling%}
        - {to: end, do: %sibling-low%}
  end: {final: true}
"""
ON_THE_STATE = "      done.state.work: {to: after, do: %on-the-state%}\n"

NESTED = """
  work:
    initial: inner
    on:
      done.state.work.inner: {to: after, do: %outer%}
    states:
      inner:
        initial: doing
        @OWN@
        states:
          doing: {on: {FINISH: finished}}
          finished: {final: true}
  after: {on: {OTHER: end}}
  end: {final: true}
"""

PARALLEL = """
  work:
    parallel: true
    on:
      done.state.work.left: {to: after, do: %region%}
    states:
      left:
        initial: l1
        states:
          l1: {on: {FINISH: l2}}
          l2: {final: true}
      right:
        initial: r1
        states:
          r1: {on: {FINISH: r2}}
          r2: {final: true}
  after:
    on:
      done.state.work: {to: end, do: %parallel-after-leaving%}
  end: {final: true}
"""

OTHER_REGION = """
  work:
    parallel: true
    states:
      task:
        initial: t1
        states:
          t1: {on: {FINISH: t2}}
          t2: {final: true}
      watcher:
        initial: waiting
        states:
          waiting: {on: {done.state.work.task: {to: seen, do: %watcher%}}}
          seen: {}
  end: {final: true}
"""


def _text(body: str, *, own: str = "", entry: str = "[]", errors: str = "") -> str:
    text = (HEAD + body).replace("@OWN@", own).replace("@ENTRY@", entry)
    return _logged(text.replace("@ERRORS@", errors))


SIBLING = COMPOUND.replace(ON_THE_STATE, "")
CASES = {
    # no own `done:`: the state's `on:` entry on its own done event
    "on-the-state": (_text(COMPOUND), ["FINISH"], {"after"}, "on-the-state;"),
    # a raise before the done event leaves `work`: `after` takes done.state.work
    "sibling-after-leaving": (
        _text(SIBLING, entry="[{raise: LEAVE}]"),
        ["FINISH"],
        {"end"},
        "sibling;",
    ),
    "nested-on-the-ancestor": (_text(NESTED), ["FINISH"], {"after"}, "outer;"),
    "nested-own-done-first": (
        _text(NESTED, own="done: {to: end, do: %inner%}"),
        ["FINISH"],
        {"end"},
        "inner;",
    ),
    # done.state.work.left leaves `work`; the later done.state.work is taken by `after`
    "parallel-then-sibling": (
        _text(PARALLEL),
        ["FINISH"],
        {"end"},
        "region;parallel-after-leaving;",
    ),
    "another-region": (
        _text(OTHER_REGION),
        ["FINISH"],
        {"work", "work.task", "work.task.t2", "work.watcher", "work.watcher.seen"},
        "watcher;",
    ),
    # nobody handles it: the done event is dropped, the external event still applies
    "never-handled": (
        _text(NESTED.replace("done.state.work.inner: {to: after, do: %outer%}", "OTHER: after")),
        ["FINISH"],
        {"work", "work.inner", "work.inner.finished"},
        "",
    ),
}


def _paths(text: str) -> tuple[statekit.Chart, statekit.Chart]:
    cached = machine(text)
    return cached, statekit.Chart(cached.ir, memo=False)


@pytest.mark.parametrize("name", sorted(CASES))
def test_the_done_event_is_handled_by_the_configuration_active_when_it_is_dequeued(
    name: str,
) -> None:
    text, events, configuration, log = CASES[name]
    cached, general = _paths(text)
    state = general.start()
    for i, event in enumerate(events):
        fast = general.send(state, event, event_id=f"e{i}")
        reference = step(general.tables, state, event, None, f"e{i}", memoised=False)
        assert_same(fast, reference, f"e{i}")
        memoised = cached.send(cached.state_from_json(state.to_json()), event, event_id=f"e{i}")
        assert_same(memoised, reference, f"e{i}")
        assert fast.status is Status.APPLIED
        state = fast.state
    assert state.configuration == frozenset(configuration)
    assert state.context["log"] == log
    raised = [e for m in fast.evidence for e in m.raised]
    assert any(e.startswith("done.state.") for e in raised), raised


def test_the_payload_is_the_final_states_output() -> None:
    chart = machine(_text(SIBLING, entry="[{raise: LEAVE}]"))
    result = chart.send(chart.start(), "FINISH")
    done = [m for m in result.evidence if m.event == "done.state.work"]
    assert [dict(m.payload) for m in done] == [{"points": 10}]
    assert result.state.context["log"] == "sibling;"  # event.points > 5, typed integer


def test_a_failing_output_raises_error_execution_first_and_the_done_event_is_empty() -> None:
    text = _text(SIBLING, errors="on_evaluation_error: raise", entry="[{raise: LEAVE}]")
    text = text.replace('points: "10 // (ctx.score + 1)"', 'points: "10 // ctx.score"')
    text = text.replace(
        "  after:\n    on:\n",
        f"  after:\n    on:\n      error.execution: {{do: {_log('error')}}}\n",
    )
    cached, general = _paths(text)
    start = general.start()
    fast = general.send(start, "FINISH", event_id="f")
    reference = step(general.tables, start, "FINISH", None, "f", memoised=False)
    assert_same(fast, reference, "f")
    assert_same(cached.send(start, "FINISH", event_id="f"), reference, "f")
    events = [m.event for m in fast.evidence]
    assert events[:4] == ["FINISH", "LEAVE", "error.execution", "done.state.work"]
    done = fast.evidence[3]
    assert dict(done.payload) == {}
    # `event.points` is absent: the guard fails to evaluate, raising error.execution again
    assert fast.state.configuration == frozenset({"end"})
    assert fast.state.context["log"] == "error;sibling-low;"


def test_a_done_event_cannot_be_sent_from_outside() -> None:
    chart = machine(_text(COMPOUND))
    result = chart.send(chart.start(), "done.state.work")
    assert (result.status, result.reason) == (Status.REJECTED, "UNKNOWN_EVENT")


@pytest.mark.parametrize(
    ("key", "words"),
    [
        ("done.state.work.inner.doing", "'work.inner.doing' is an atomic state: it is never done"),
        ("done.state.work.inner.finished", "'work.inner.finished' is a final state"),
        ("done.state.nowhere", "names no compound or parallel state"),
        ("done.state.inner", "the event has the state's full path: done.state.work.inner"),
        ("done.state.work", "state 'work' handles its own done event in `done:` and in `on:`"),
    ],
    ids=["atomic", "final", "unknown", "short-name", "own-done-twice"],
)
def test_a_done_event_of_no_compound_or_parallel_state_is_a_positioned_error(
    key: str, words: str
) -> None:
    text = _text(NESTED).replace("done.state.work.inner:", f"{key}:")
    text = text.replace("    initial: inner\n", "    initial: inner\n    done: after\n")
    result = compile_text(text)
    errors = [d for d in result.diagnostics if d.severity.value == "error"]
    assert [d.slug for d in errors] == ["schema" if "own" in words else "unknown-event"], errors
    assert words in errors[0].message + " ".join(errors[0].notes)
    rows = text.lstrip("\n").splitlines()
    line = next(i for i, row in enumerate(rows, 1) if row.strip().startswith(key))
    assert (errors[0].span.line, errors[0].span.column) == (line, 7)


def test_a_guard_reading_a_field_the_done_event_lacks_is_a_compile_error() -> None:
    text = _text(PARALLEL).replace(
        "done.state.work: {to: end,", 'done.state.work: {to: end, if: "event.points > 1",'
    )
    result = compile_text(text)
    assert any(d.slug == "expression-type" and "points" in d.message for d in result.diagnostics), (
        result.diagnostics
    )
