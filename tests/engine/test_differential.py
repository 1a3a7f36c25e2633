"""Differential testing against python-statemachine 3 (SCXML semantics in Python).

Each chart is translated into a python-statemachine `StateChart` (`psm_translate`), and
both engines are driven with the same hypothesis-generated event sequences; after the
start and after every event the configuration (as dotted paths, ancestors included),
the context and the emitted messages must be identical, and python-statemachine must
have stopped exactly when our chart is final.

What is compared: the reference machines (payment, task, media player) and small
inline charts that put the algorithm's corners under load: nested compound states
with the same event at several depths, parallel regions whose transitions conflict,
multi-target transitions, targetless and self transitions, eventless transitions
guarded on the context, `done` of compound and parallel states, `raise`, shallow and
deep history with defaults, a deep `initial`, a parallel root and a root with
transitions of its own. Entry, exit and transition effects fold an order-sensitive
code into `ctx.log`, so that a different exit or entry order shows in the context.

Time is compared in test_differential_time.py. Here no clock moves: `Chart.send` fires
no timer, and the peer's clock stands before every due time (`UNTIMED`).

A sequence stops where the engines differ by design (docs/semantics.md, "Differences
from python-statemachine"): when our step is rejected as EVALUATION_ERROR, LIVELOCK or
INVARIANT_VIOLATION (rejected atomically here; the peer would run the macrostep), and
when our chart is final. Payloads are always valid (ours validates them first). The
designed differences themselves are pinned down by the tests at the end of this file.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest
from chart_helpers import machine
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from psm_translate import OPTIONS, Mirror, Translation, Untranslatable, translate
from statemachine.io import create_machine_class_from_definition

import statekit
from statekit.compiler.ir import FieldDecl
from statekit.compiler.value_types import BaseType
from statekit.engine.chart import Chart
from statekit.engine.result import EVALUATION_ERROR, INVARIANT_VIOLATION, LIVELOCK, Status
from statekit.engine.state import State

MACHINES = Path(__file__).resolve().parents[2] / "machines"
STOPS = frozenset({EVALUATION_ERROR, LIVELOCK, INVARIANT_VIOLATION})
LOG = "(ctx.log * 31 + {}) % 1000003"
"""An order-sensitive fold: effects that run in another order leave another `ctx.log`."""


def log(code: int) -> str:
    """`assign: {log: ...}` folding `code` into ctx.log, as a flow-style YAML effect."""
    return f'{{assign: {{log: "{LOG.format(code)}"}}}}'


NESTED = f"""
statechart: nested
description: Three levels of compound states; the same events at several depths.
context:
  log: {{type: integer, default: 0}}
  n: {{type: integer, default: 0}}
events: {{A: {{}}, B: {{}}, C: {{k: integer}}, D: {{}}, E: {{}}, F: {{}}}}
initial: outer
states:
  outer:
    initial: mid
    entry: [{log(1)}]
    exit: [{log(2)}]
    on:
      A: other
      C: {{do: [{{assign: {{n: ctx.n + event.k}}}}, {log(3)}]}}
      E: mid.deep
      F: {{to: outer, if: ctx.n % 2 == 1, do: [{log(4)}]}}
    states:
      mid:
        initial: leaf1
        entry: [{log(5)}]
        exit: [{log(6)}]
        on:
          B: leaf2
          C: {{to: leaf2, if: event.k > 1, do: [{log(7)}]}}
        states:
          leaf1:
            entry: [{log(8)}]
            exit: [{log(9)}]
            on:
              A: {{to: leaf2, if: ctx.n > 2}}
              D: {{to: other, do: [{log(10)}]}}
          leaf2:
            entry: [{log(11)}]
            on:
              B: leaf1
              D: {{to: leaf2, do: [{log(12)}]}}
              F: {{if: active('outer.mid.leaf2') and ctx.n > 0, do: [{{assign: {{n: 0}}}}]}}
          deep:
            initial: d1
            exit: [{log(13)}]
            states:
              d1: {{on: {{E: d2, B: d2}}, exit: [{log(14)}]}}
              d2: {{on: {{E: d1}}}}
  other:
    entry: [{log(15)}]
    on:
      A: outer
      B: outer.mid.leaf2
      E: {{to: [outer.mid.deep.d2], do: [{log(16)}]}}
"""

REGIONS = f"""
statechart: regions
description: Three regions whose transitions conflict, leave the parallel state, cross regions.
context:
  log: {{type: integer, default: 0}}
  hits: {{type: integer, default: 0}}
events: {{GO: {{}}, FLIP: {{}}, OUT: {{}}, STEP: {{k: integer}}, SYNC: {{}}, BACK: {{}}}}
initial: par
states:
  par:
    parallel: true
    entry: [{log(1)}]
    exit: [{log(2)}]
    on:
      OUT: {{to: idle, do: [{log(3)}]}}
      BACK: {{to: par, if: ctx.hits > 0}}
    states:
      r1:
        initial: a1
        entry: [{log(4)}]
        exit: [{log(5)}]
        states:
          a1:
            entry: [{log(6)}]
            exit: [{log(7)}]
            on:
              FLIP: {{to: b1, do: [{log(8)}]}}
              STEP: {{to: b1, if: event.k % 2 == 0}}
              OUT: {{to: idle, if: ctx.hits > 1, do: [{log(9)}]}}
          b1:
            entry: [{log(10)}]
            on:
              FLIP: a1
              SYNC: {{to: [a1, b2], do: [{log(11)}]}}
              GO: {{to: other, do: [{log(12)}]}}
      r2:
        initial: a2
        entry: [{log(13)}]
        exit: [{log(14)}]
        states:
          a2:
            entry: [{log(15)}]
            on:
              FLIP: {{to: b2, do: [{log(16)}]}}
              STEP: {{do: [{{assign: {{hits: ctx.hits + 1}}}}, {log(17)}]}}
              OUT: {{to: other, do: [{log(18)}]}}
          b2:
            entry: [{log(19)}]
            exit: [{log(20)}]
            on:
              FLIP: a2
              GO: {{to: idle, do: [{log(21)}]}}
      r3:
        initial: a3
        states:
          a3:
            entry: [{log(22)}]
            on:
              GO: {{to: b3, do: [{log(23)}]}}
              FLIP: {{to: b3, if: "active('r1.a1')"}}
              SYNC: {{to: [a1, a2], do: [{log(24)}]}}
          b3:
            exit: [{log(25)}]
            on:
              STEP: {{to: a3, if: event.k > 0, do: [{log(26)}]}}
  idle:
    entry: [{log(27)}]
    on:
      GO: par
      FLIP: {{to: [b1, b2], do: [{log(28)}]}}
      STEP: {{to: a3, do: [{log(29)}]}}
  other:
    on:
      GO: {{to: [b2, b3]}}
      BACK: idle
"""

DONE = f"""
statechart: done_events
description: done of compound and parallel states, eventless transitions, raise.
context:
  log: {{type: integer, default: 0}}
  count: {{type: integer, default: 0}}
events:
  {{FINISH1: {{}}, FINISH2: {{}}, FINISH3: {{}}, RESET: {{}}, BUMP: {{}}, KICK: {{}}, SKIP: {{}}}}
initial: work
states:
  work:
    parallel: true
    done: {{to: summary, do: [{log(1)}]}}
    states:
      one:
        initial: busy
        done: {{do: [{log(2)}]}}
        states:
          busy:
            on:
              FINISH1: {{to: ok, do: [{log(3)}]}}
              SKIP: {{to: [ok, two.finished], do: [{log(4)}]}}
          ok:
            final: true
            entry: [{log(5)}, {{raise: BUMP}}]
      two:
        initial: stage
        done: {{do: [{log(6)}]}}
        states:
          stage:
            initial: s1
            done: {{to: finished, do: [{log(7)}]}}
            states:
              s1: {{on: {{FINISH2: s2, FINISH3: s3}}}}
              s2:
                always: {{to: s3, if: ctx.count > 0, do: [{log(8)}]}}
                on: {{FINISH2: s3}}
              s3: {{final: true, entry: [{log(9)}]}}
          finished: {{final: true, entry: [{log(10)}]}}
    on:
      BUMP: {{do: [{{assign: {{count: ctx.count + 1}}}}, {log(11)}]}}
  summary:
    entry: [{log(12)}]
    always: {{to: closed, if: ctx.count >= 3}}
    on:
      BUMP: {{do: [{{assign: {{count: ctx.count + 1}}}}]}}
      RESET: {{to: work, do: [{log(13)}]}}
      KICK: {{do: [{{raise: BUMP}}, {{raise: RESET}}, {log(14)}]}}
  closed: {{final: true, entry: [{log(15)}]}}
"""

HISTORY = f"""
statechart: history
description: Shallow and deep history with defaults, around nested and parallel states.
context:
  log: {{type: integer, default: 0}}
events:
  {{NEXT: {{}}, DOWN: {{}}, SIDE: {{}}, OUT: {{}}, BACK: {{}}, DEEPBACK: {{}}, RESTART: {{}},
    MAIN: {{}}}}
initial: app
states:
  app:
    initial: main.b
    entry: [{log(1)}]
    exit: [{log(2)}]
    on:
      OUT: away
      SIDE: side
    states:
      shallow: {{history: shallow}}
      deep: {{history: deep, default: main.c.c2}}
      main:
        initial: a
        entry: [{log(3)}]
        exit: [{log(4)}]
        states:
          inner: {{history: deep}}
          a: {{on: {{NEXT: b}}}}
          b: {{on: {{NEXT: c, DOWN: c2}}, entry: [{log(5)}]}}
          c:
            initial: c1
            exit: [{log(6)}]
            states:
              c1: {{on: {{NEXT: c2}}}}
              c2: {{on: {{NEXT: c1, DOWN: a}}, exit: [{log(7)}]}}
      side:
        parallel: true
        on:
          MAIN: main
          RESTART: inner
        states:
          p:
            initial: p1
            states:
              p1: {{on: {{NEXT: p2}}}}
              p2: {{entry: [{log(8)}]}}
          q:
            initial: q1
            states:
              lastq: {{history: shallow, default: q2}}
              q1: {{on: {{NEXT: q2}}}}
              q2: {{on: {{NEXT: q1, DOWN: lastq}}, exit: [{log(9)}]}}
  away:
    entry: [{log(10)}]
    on:
      BACK: shallow
      DEEPBACK: deep
      RESTART: app
      MAIN: inner
      SIDE: lastq
"""

PARALLEL_ROOT = f"""
statechart: parallel_root
description: A parallel root whose regions end separately; the chart ends when both have.
parallel: true
context:
  log: {{type: integer, default: 0}}
events: {{A: {{}}, B: {{}}, END: {{}}}}
states:
  left:
    initial: l1
    states:
      l1: {{on: {{A: l2, END: [lend, rend]}}, exit: [{log(1)}]}}
      l2: {{on: {{A: l1, B: lend}}}}
      lend: {{final: true, entry: [{log(2)}]}}
  right:
    initial: r1
    states:
      r1: {{on: {{B: r2}}}}
      r2: {{on: {{B: rend, A: r1}}, entry: [{log(4)}]}}
      rend: {{final: true}}
"""

ROOT_TRANSITIONS = f"""
statechart: root_transitions
description: The root's own transitions (SCXML has none on <scxml>) and a deep initial.
context:
  log: {{type: integer, default: 0}}
events: {{HOME: {{}}, A: {{}}, B: {{}}, STOP: {{}}}}
initial: box.inner.x
on:
  HOME: {{to: box, do: [{log(1)}]}}
  STOP: {{to: done, if: ctx.log > 0}}
states:
  box:
    initial: inner
    entry: [{log(2)}]
    exit: [{log(3)}]
    states:
      inner:
        initial: y
        states:
          x: {{on: {{A: y}}}}
          y: {{on: {{A: x, B: out}}, entry: [{log(4)}]}}
  out:
    on: {{A: box}}
  done: {{final: true}}
"""

INLINE = {
    "nested": NESTED,
    "regions": REGIONS,
    "done_events": DONE,
    "history": HISTORY,
    "parallel_root": PARALLEL_ROOT,
    "root_transitions": ROOT_TRANSITIONS,
}
CHARTS: dict[str, Chart] = {
    **{
        name: statekit.load(MACHINES / f"{name}.yaml")
        for name in ("payment", "task", "media_player")
    },
    **{name: machine(text) for name, text in INLINE.items()},
}
TRANSLATIONS: dict[str, Translation] = {name: translate(c.ir) for name, c in CHARTS.items()}
UNTIMED = -(2**62)
"""The peer's clock here: before every due time, so none of its timers comes due, as none
fires through `Chart.send` (the task's lease timer; time itself is compared in
test_differential_time.py)."""


def _started(attempt: int) -> tuple[str, dict[str, Any]]:
    return ("TaskStarted", {"attempt": attempt, "worker_id": "w-1", "lease_until_ms": 1000})


def _artifact(attempt: int) -> list[tuple[str, dict[str, Any]]]:
    return [
        ("ArtifactUploaded", {"attempt": attempt, "sha256": "abc"}),
        ("ArtifactVerified", {"attempt": attempt, "sha256": "abc"}),
    ]


SCRIPTS: dict[str, list[list[tuple[str, dict[str, Any]]]]] = {
    "task": [
        [_started(1), *_artifact(1), ("TaskCompleted", {"attempt": 1})],
        [
            _started(1),
            ("TaskFailed", {"attempt": 1, "error": "x", "retryable": True}),
            _started(2),
            ("LeaseRenewed", {"attempt": 2, "lease_until_ms": 2000}),
            *_artifact(2),
            ("TaskFailed", {"attempt": 2, "error": "x", "retryable": True}),
            _started(3),
            ("TaskFailed", {"attempt": 3, "error": "x", "retryable": True}),
        ],
        [
            _started(1),
            *_artifact(1)[:1],
            ("TaskCancelled", {"requested_by": "ann"}),
            ("LeaseRenewed", {"attempt": 1, "lease_until_ms": 2000}),
            ("EffectsReconciled", {"attempt": 1}),
        ],
    ],
    "payment": [
        [
            ("START_PAY", {"amount": 100}),
            ("PAY_FAILED", {"code": "x"}),
            ("RETRY_PAY", {}),
            ("PAY_SUCCESS", {"channel_ref": "c"}),
            ("START_REFUND", {"amount": 30, "requester": "user"}),
            ("REFUND_SUCCESS", {"refund_ref": "r1"}),
            ("START_REFUND", {"amount": 70, "requester": "support"}),
            ("REFUND_SUCCESS", {"refund_ref": "r2"}),
            ("CLOSE", {}),
        ]
    ],
    "media_player": [
        [
            ("POWER_ON", {}),
            ("SEARCH", {"query": "q"}),
            ("PLAY_QUEUE", {"tracks": 2}),
            ("STALLED", {}),
            ("BUFFER_PROGRESS", {"pct": 100}),
            ("SET_VOLUME", {"level": 0}),
            ("OPEN_SETTINGS", {}),
            ("CLOSE_SETTINGS", {}),
            ("TRACK_ENDED", {}),
            ("POWER_OFF", {}),
            ("POWER_ON", {}),
            ("TRACK_ENDED", {}),
            ("BATTERY_LEVEL", {"pct": 1}),
        ]
    ],
}
"""Realistic histories; a sequence may start with a prefix of one (then drawn events)."""
EXAMPLES = {"payment": 350, "task": 350, "media_player": 250}
"""Sequences per chart (the inline charts get `DEFAULT_EXAMPLES`)."""
DEFAULT_EXAMPLES = 200
MAX_LENGTH = 40
TALLY: Counter[tuple[str, str]] = Counter()
"""(chart, what) -> count: sequences, events compared by status, sequences stopped by reason."""


def values(decl: FieldDecl, context: Mapping[str, Any]) -> st.SearchStrategy[Any]:
    """Valid values of a declared type: mostly one taken from the context (the context
    field of the same name, or any integer there, or that plus one), else one from a small
    pool, so that guards comparing the payload with the context both pass and fail."""
    t = decl.type
    if t.enum is not None:
        return st.sampled_from(t.enum)
    if t.base is BaseType.BOOLEAN:
        return st.booleans()
    if t.base in (BaseType.INTEGER, BaseType.NUMBER):
        pool: list[Any] = [-1, 0, 1, 2, 3, 50, 100]
        near: list[Any] = [v for v in context.values() if type(v) is int]
        near += [v + 1 for v in near]
        same = context.get(decl.name)
        named = [same, same + 1] if type(same) is int else near
    else:
        pool = ["abc", "w-1", ""]
        near = [v for v in context.values() if type(v) is str]
        named = [context[decl.name]] if type(context.get(decl.name)) is str else near
    choices = [st.sampled_from(pool)]
    if near:
        choices += [st.sampled_from(sorted(set(named))), st.sampled_from(sorted(set(near)))]
    base = st.one_of(choices)
    return (base | st.none()) if t.nullable else base


def draw_event(data: st.DataObject, chart: Chart, state: State) -> tuple[str, dict[str, Any]]:
    """Usually an event some active state has a transition for, sometimes any declared
    event; always with a valid payload (defaults filled in, as our engine validates it)."""
    ir = chart.ir
    handled = {event for s in state.active_ids for event in ir.candidates[s] if event in ir.events}
    any_event = not handled or data.draw(st.integers(0, 4)) == 0
    event = data.draw(st.sampled_from(sorted(ir.events if any_event else handled)))
    fields = ir.events[event].fields
    raw = data.draw(
        st.fixed_dictionaries(
            {f.name: values(f, state.context) for f in fields if not f.has_default},
            optional={f.name: values(f, state.context) for f in fields if f.has_default},
        )
    )
    return event, dict(chart.tables.validators[event](raw))


def draw_step(data: st.DataObject, chart: Chart, state: State) -> tuple[str, dict[str, Any]]:
    """One event in four as `draw_event` draws it (rejections included); else the first
    of up to six draws that applies, and (two times in three) does not end the chart:
    guards on attempt numbers and checksums reject most events drawn blindly, and a
    final chart ends the sequence."""
    mode = data.draw(st.integers(0, 3))
    event, payload = draw_event(data, chart, state)
    for _ in range(6 if mode else 0):
        result = chart.send(state, event, payload)
        if result.applied and (mode == 3 or not result.state.is_final):
            break
        event, payload = draw_event(data, chart, state)
    return event, payload


def observe(chart: Chart, state: State, mirror: Mirror) -> None:
    """The two engines agree on the configuration, the context and termination."""
    assert mirror.configuration == state.configuration, "configuration"
    assert mirror.context == dict(state.context), "context"
    if TRANSLATIONS[chart.name].terminates:
        assert mirror.terminated == state.is_final, "termination"


def run_both(chart: Chart, data: st.DataObject, length: int) -> None:
    """Drive our engine and python-statemachine with the same events: half the time a
    prefix of one of the chart's `SCRIPTS`, then drawn events, `length` in all."""
    scripted: list[tuple[str, dict[str, Any]]] = []
    if chart.name in SCRIPTS and data.draw(st.booleans()):
        script = data.draw(st.sampled_from(SCRIPTS[chart.name]))
        scripted = list(script[: data.draw(st.integers(1, len(script)))])
    start = chart.initialize()
    state = start.state
    mirror = TRANSLATIONS[chart.name].start(now_ms=UNTIMED)
    observe(chart, state, mirror)
    assert mirror.take_emitted() == [(m.type, dict(m.payload)) for m in start.emitted]
    TALLY[chart.name, "sequences"] += 1
    for _ in range(length):
        if state.is_final:
            TALLY[chart.name, "stopped: final"] += 1
            return
        event, payload = scripted.pop(0) if scripted else draw_step(data, chart, state)
        result = chart.send(state, event, payload)
        if result.reason in STOPS:
            TALLY[chart.name, f"stopped: {result.reason}"] += 1
            return
        mirror.send(event, payload)
        TALLY[chart.name, "events"] += 1
        TALLY[chart.name, result.status.value] += 1
        state = result.state
        observe(chart, state, mirror)
        assert mirror.take_emitted() == [(m.type, dict(m.payload)) for m in result.emitted]


@pytest.mark.parametrize("name", sorted(CHARTS))
def test_same_configurations_as_python_statemachine(name: str) -> None:
    chart = CHARTS[name]

    @settings(
        max_examples=EXAMPLES.get(name, DEFAULT_EXAMPLES),
        deadline=None,
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
    )
    @given(st.data(), st.integers(min_value=1, max_value=MAX_LENGTH))
    def check(data: st.DataObject, length: int) -> None:
        run_both(chart, data, length)

    check()


def test_the_translation_refuses_names_the_peer_reads_differently() -> None:
    for event in ("done", "error", "error_timeout", "done_state_x", "send"):
        chart = machine(
            f"""
            statechart: names
            events: {{{event}: {{}}}}
            initial: a
            states:
              a: {{on: {{{event}: b}}}}
              b: {{}}
            """
        )
        with pytest.raises(Untranslatable):
            translate(chart.ir)


# -- Differences by design, and the peer's deviations, pinned (docs/semantics.md) ----------


def test_the_peer_selects_transitions_in_configuration_order() -> None:
    """python-statemachine takes the atomic states in the order they entered the
    configuration: once r1 is re-entered, r2's OUT is selected first and wins the
    conflict that r1's OUT (earlier in the document) wins in SCXML and here."""
    chart = machine(
        """
        statechart: selection
        events: {FLIP: {}, OUT: {}}
        initial: p
        states:
          p:
            parallel: true
            states:
              r1:
                initial: a1
                states:
                  a1: {on: {FLIP: b1, OUT: x}}
                  b1: {on: {FLIP: a1}}
              r2:
                initial: a2
                states:
                  a2: {on: {OUT: y}}
          x: {}
          y: {}
        """
    )
    ours = chart.start()
    peer, corrected = translate(chart.ir, scxml_order=False).start(), translate(chart.ir).start()
    for event in ("FLIP", "FLIP", "OUT"):
        ours = chart.send(ours, event).state
        peer.send(event, {})
        corrected.send(event, {})
    assert ours.configuration == corrected.configuration == {"x"}
    assert peer.configuration == {"y"}


def test_the_peers_document_order_is_not_pre_order() -> None:
    """python-statemachine numbers r2 like a (a sibling gets its elder sibling's first
    child's number), so it enters r2 before a.a1: entry effects run out of document order."""
    chart = machine(
        """
        statechart: entry_order
        context: {log: {type: string, default: ""}}
        events: {GO: {}}
        initial: idle
        states:
          idle: {on: {GO: p}}
          p:
            parallel: true
            states:
              r1:
                initial: a
                states:
                  a:
                    initial: a1
                    states:
                      a1: {entry: [{assign: {log: "ctx.log + 'a1 '"}}]}
              r2:
                initial: b
                entry: [{assign: {log: "ctx.log + 'r2 '"}}]
                states:
                  b: {}
        """
    )
    ours = chart.send(chart.start(), "GO").state
    peer, corrected = translate(chart.ir, scxml_order=False).start(), translate(chart.ir).start()
    peer.send("GO", {})
    corrected.send("GO", {})
    assert ours.context["log"] == corrected.context["log"] == "a1 r2 "
    assert peer.context["log"] == "r2 a1 "
    assert peer.configuration == ours.configuration


def test_a_parallel_root_ends_before_pending_done_events() -> None:
    """When the last region of a parallel root becomes final, our chart is final at once
    (SCXML's `running = false`): the region's pending done.state event is not processed.
    python-statemachine processes it and terminates after the macrostep."""
    chart = machine(
        """
        statechart: parallel_root_done
        parallel: true
        context: {log: {type: string, default: ""}}
        events: {A: {}, B: {}}
        states:
          left:
            initial: l1
            done: {do: [{assign: {log: "ctx.log + 'left done'"}}]}
            states:
              l1: {on: {A: l2}}
              l2: {final: true}
          right:
            initial: r1
            states:
              r1: {on: {B: r2}}
              r2: {final: true}
        """
    )
    ours, peer = chart.start(), translate(chart.ir).start()
    for event in ("B", "A"):
        ours = chart.send(ours, event).state
        peer.send(event, {})
    assert ours.is_final and peer.terminated
    assert ours.configuration == peer.configuration
    assert ours.context["log"] == ""
    assert peer.context["log"] == "left done"


def test_an_expression_error_rejects_the_event_atomically() -> None:
    """Ours: EVALUATION_ERROR and nothing changes. The peer (`StateChart` default): the
    failing block raises error.execution, the rest of the microstep runs."""
    chart = machine(
        """
        statechart: failing
        context: {log: {type: string, default: ""}, zero: {type: integer, default: 0}}
        events: {GO: {}}
        initial: a
        states:
          a:
            exit: [{assign: {log: "ctx.log + 'exited a'"}}]
            on: {GO: {to: b, do: [{assign: {zero: 1 // ctx.zero}}]}}
          b: {}
        """
    )
    result = chart.send(chart.start(), "GO")
    assert (result.status, result.reason) == (Status.REJECTED, EVALUATION_ERROR)
    assert result.state.configuration == {"a"} and result.state.context["log"] == ""
    peer = translate(chart.ir, errors_as_events=True).start()
    peer.send("GO", {})
    assert peer.configuration == {"b"} and peer.context == {"log": "exited a", "zero": 0}


def test_a_failing_guard_rejects_where_the_peer_reads_false() -> None:
    chart = machine(
        """
        statechart: failing_guard
        context: {zero: {type: integer, default: 0}}
        events: {GO: {}}
        initial: a
        states:
          a: {on: {GO: [{to: b, if: 1 // ctx.zero > 0}, {to: c}]}}
          b: {}
          c: {}
        """
    )
    assert chart.send(chart.start(), "GO").reason == EVALUATION_ERROR
    peer = translate(chart.ir, errors_as_events=True).start()
    peer.send("GO", {})
    assert peer.configuration == {"c"}


def test_an_invariant_rejects_a_step_the_peer_applies() -> None:
    chart = machine(
        """
        statechart: bounded
        context: {n: {type: integer, default: 0}}
        events: {INC: {}}
        initial: a
        states:
          a: {on: {INC: {do: [{assign: {n: ctx.n + 1}}]}}}
        invariants:
          small: {assert: ctx.n < 2}
        """
    )
    state, peer = chart.start(), translate(chart.ir).start()
    for _ in range(2):
        result = chart.send(state, "INC")
        state = result.state
        peer.send("INC", {})
    assert (result.status, result.reason) == (Status.REJECTED, INVARIANT_VIOLATION)
    assert state.context["n"] == 1 and peer.context["n"] == 2


def test_event_names_match_exactly_where_the_peer_matches_prefixes() -> None:
    """A transition on `done` fires on every done.state.* event in the peer (SCXML's
    descriptor prefix matching); ours waits for an event named exactly `done`."""
    chart = machine(
        """
        statechart: prefix
        events: {X: {}, done: {}}
        initial: a
        states:
          a:
            initial: a1
            on: {done: c}
            states:
              a1: {on: {X: a2}}
              a2: {final: true}
          c: {}
        """
    )
    assert chart.send(chart.start(), "X").state.configuration == {"a", "a.a2"}
    peer_class = create_machine_class_from_definition(
        "prefix",
        states={
            "a": {
                "initial": True,
                "on": {"done": [{"target": "c"}]},
                "states": {
                    "a1": {"initial": True, "on": {"X": [{"target": "a2"}]}},
                    "a2": {"final": True},
                },
            },
            "c": {},
        },
        **OPTIONS,
    )
    peer = peer_class()
    peer.send("X")
    assert list(peer.configuration_values) == ["c"]
    with pytest.raises(Untranslatable):
        translate(chart.ir)


def test_every_event_is_classified_where_the_peer_ignores_it() -> None:
    """Ours: REJECTED with a reason (or ALREADY_APPLIED); `StateChart.send` returns None
    and changes nothing (`StateMachine` raises TransitionNotAllowed instead)."""
    chart = CHARTS["payment"]
    result = chart.send(chart.start(), "PAY_SUCCESS", {"channel_ref": "x"})
    assert (result.status, result.reason) == (Status.REJECTED, "PAYMENT_NOT_STARTED")
    peer = TRANSLATIONS["payment"].start()
    assert peer.machine.send("PAY_SUCCESS", sk_payload={"channel_ref": "x"}) is None
    assert peer.configuration == {"created"}
