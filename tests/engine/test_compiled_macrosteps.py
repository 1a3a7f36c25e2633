"""The compiled macrosteps (`statekit.engine.compiled_macrostep`) against the general loop.

Charts are generated from drawn structure: a chain of states whose eventless
transitions are guard-free, guarded by `active()` alone, or guarded by the
context (the path is then not static), with assigns and emits on the way; a
compound state whose final child raises a done event that nothing answers or
that a `done` transition answers (guard-free, `active()`, or the context);
final states of both regions (so the chart becomes final inside a
macrostep); `after` timers (a literal delay, `at:` and `delay:` over the
context, an `at:` whose value leaves the 64-bit range for most values of
the context) on the chain's states, armed and cancelled in one macrostep
when an eventless transition passes through their state, re-armed when
`RESET` re-enters it; a `raise` and a history state (which need the general
loop) next to them; and a microstep bound that a chain may reach. Delayed
`send`s (timers no state owns) sit among the `after` timers of the state,
and deliveries of armed timers (`fire`) leave a state active without its
timer, whose exit then has nothing to cancel.
On each chart a drawn stream of events goes through `step` (memo and
compiled macrosteps on) and `step(..., memoised=False)` (the general loop
alone): results, messages, timers (the state's, and those each step armed
and cancelled), evidence, rejection messages and the state's JSON must be
equal after every event.
"""

from __future__ import annotations

from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import statekit
from statekit.compiler.pipeline import compile_source
from statekit.engine.compiled_macrostep import CompiledMacrostep, compiled_macrostep
from statekit.engine.result import Result, Status
from statekit.engine.state import State
from statekit.engine.step import step
from statekit.engine.tables import Tables
from statekit.engine.timers import ArmedTimer

GUARDS = ("none", "free", "active", "data")
"""How an eventless or done transition is guarded: absent, guard-free, `active()`, context."""
CONDITION = {"active": "active('right.y')", "data": "ctx.n > 2"}
TIMERS = ("none", "after", "at", "delay", "overflow")


def _transition(target: str, kind: str, effect: bool) -> str:
    parts = [f"to: {target}"]
    if kind in CONDITION:
        parts.append(f'if: "{CONDITION[kind]}"')
    if effect:
        parts.append('do: [{assign: {n: "ctx.n + 1"}}, {emit: {type: Moved, payload: {n: ctx.n}}}]')
    return "{" + ", ".join(parts) + "}"


def _timer(kind: str) -> str:
    if kind == "after":
        return "after: {1s: left.s0}"
    if kind == "at":
        return 'after: [{at: "ctx.m + 5000", to: left.s0}]'
    if kind == "overflow":  # out of range once ctx.n is 3 or more: EVALUATION_ERROR
        return 'after: [{at: "ctx.n * 4000000000000000000", to: left.s0}]'
    return 'after: [{delay: "ctx.m", to: left.s0}]'


def generated_chart(
    chain: list[tuple[str, bool, str]], done: tuple[str, bool], ends_left: bool
) -> str:
    """A chart whose left region runs `chain` (per state: its eventless transition's
    guard kind, whether it has effects, its timer kind) into `left.box`, whose final
    child's done event is answered as `done` says; `ends_left` makes the done
    transition go to the left region's final state (else back to the chain's start)."""
    lines = [
        "statechart: generated",
        "context:",
        "  n: {type: integer, default: 0}",
        "  m: {type: integer, default: 10}",
        "events:",
        "  GO: {k: {type: integer}}",
        "  STEP: {}",
        "  FLIP: {}",
        "  END: {}",
        "  POKE: {}",
        "  RESET: {}",
        "  BACK: {}",
        "  TICK: {}",
        "  LATER: {}",
        "parallel: true",
        "states:",
        "  left:",
        "    initial: s0",
        "    on: {RESET: left.s0, END: {to: [left.end, right.z]}}",
        "    states:",
    ]
    for i, (kind, effect, timer) in enumerate(chain):
        following = f"left.s{i + 1}" if i + 1 < len(chain) else "left.box"
        lines.append(f"      s{i}:")
        if i == 0:
            lines.append(
                "        on: {GO: {to: left.s1,"
                ' do: [{assign: {n: "ctx.n + event.k", m: event.k}}]},'
                " POKE: {do: [{raise: {event: TICK}}]}, TICK: left.box}"
                if len(chain) > 1
                else '        on: {GO: {to: left.box, do: [{assign: {n: "ctx.n + event.k"}}]}}'
            )
        if kind != "none" and i > 0:
            lines.append(f"        always: {_transition(following, kind, effect)}")
        elif i > 0:
            lines.append(f"        on: {{STEP: {following}}}")
        if timer != "none":
            lines.append(f"        {_timer(timer)}")
    done_kind, done_effect = done
    lines += [
        "      box:",
        "        initial: inside",
        "        states:",
        "          inside: {on: {STEP: left.box.out}}",
        "          out: {final: true, entry: [{emit: {type: Out, payload: {n: ctx.n}}}]}",
    ]
    if done_kind != "none":
        target = "left.end" if ends_left else "left.s0"
        lines.append(f"        done: {_transition(target, done_kind, done_effect)}")
    lines += [
        "      end: {final: true}",
        "      last: {history: shallow}",
        "  right:",
        "    initial: x",
        "    states:",
        "      x: {on: {FLIP: right.y, BACK: left.last, LATER: {do: [{send: {event: TICK,"
        " delay: 2s}}]}}}",
        "      y: {on: {FLIP: right.x, END: right.z, LATER: {do: [{send: {event: STEP, at:"
        ' "ctx.m"}}]}}}',
        "      z: {final: true}",
    ]
    return "\n".join(lines) + "\n"


def chart_of(text: str, bound: int) -> statekit.Chart:
    ir = compile_source(text, "generated.yaml").chart
    assert ir is not None, text
    return statekit.Chart(ir, max_microsteps=bound)


link = st.tuples(st.sampled_from(GUARDS), st.booleans(), st.sampled_from(TIMERS))
EVENTS: tuple[str, ...] = ("GO",) * 2 + ("STEP",) * 3 + ("FLIP",) * 2
EVENTS += ("END", "POKE", "RESET", "BACK", "TICK", "LATER", "FIRE", "FIRE")
"""The events of a stream, weighted towards those that move along the chain; `FIRE`
delivers one of the state's armed timers (the stream's number picks which)."""
SETTINGS = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@SETTINGS
@given(
    chain=st.lists(link, min_size=1, max_size=5),
    done=st.tuples(st.sampled_from(GUARDS), st.booleans()),
    ends_left=st.booleans(),
    bound=st.sampled_from([2, 3, 1000]),
    stream=st.lists(
        st.tuples(st.sampled_from(EVENTS), st.sampled_from([-1, 0, 3, 3])), min_size=4, max_size=25
    ),
)
def test_compiled_macrosteps_equal_the_general_loop(
    chain: list[tuple[str, bool, str]],
    done: tuple[str, bool],
    ends_left: bool,
    bound: int,
    stream: list[tuple[str, int]],
) -> None:
    chart = chart_of(generated_chart(chain, done, ends_left), bound)
    tables = chart.tables
    state = chart.start(now_ms=0)
    for i, (event, k) in enumerate(stream):
        payload = {"k": k} if event == "GO" else None
        if event == "FIRE":
            if not state.timers:
                continue
            armed = state.timers[k % len(state.timers)]
            fast = chart.fire(state, armed.id, now_ms=i * 700, event_id=f"e{i}")
            general = _delivered(tables, state, armed, f"e{i}", i * 700)
            assert fast.timer == armed
        else:
            fast = step(tables, state, event, payload, f"e{i}", now_ms=i * 700)
            general = step(tables, state, event, payload, f"e{i}", now_ms=i * 700, memoised=False)
            assert fast == general, (event, fast, general)
        assert (fast.status, fast.reason, fast.state, fast.emitted) == (
            general.status,
            general.reason,
            general.state,
            general.emitted,
        )
        assert (fast.timers_armed, fast.timers_cancelled, fast.sent) == (
            general.timers_armed,
            general.timers_cancelled,
            general.sent,
        )
        assert fast.evidence == general.evidence
        assert fast.message == general.message
        assert fast.state.to_json() == general.state.to_json()
        assert [m.payload for m in fast.emitted] == [m.payload for m in general.emitted]
        state = fast.state if not fast.state.is_final else chart.start(now_ms=i)


def _delivered(
    tables: Tables, state: State, armed: ArmedTimer, event_id: str, now_ms: int
) -> Result:
    """The delivery of `armed` as the general loop makes it: the step of its event from
    the state without the timer (read back from the state's JSON without it)."""
    data = state.to_data()
    data["timers"] = [t for t in data["timers"] if t["id"] != armed.id]
    without = State.from_json(tables, data)
    payload = armed.payload if armed.owner is None else None
    return step(
        tables, without, armed.event, payload, event_id, now_ms=now_ms, memoised=False, timer=armed
    )


def test_the_reference_charts_macrosteps_with_done_events_and_eventless_steps_compile() -> None:
    """The task chart's cancellation of a running task lands in `cancelling` (an
    eventless transition guarded by `active()`), its reconciliation enters a final
    state and then takes that transition: both are compiled, the second as two
    microsteps, and give the general loop's result."""
    task = statekit.load(Path(__file__).resolve().parents[2] / "machines" / "task.yaml")
    tables = task.tables
    start = {"attempt": 1, "worker_id": "w", "lease_until_ms": 9}
    started = task.send(task.start(), "TaskStarted", start)
    cancel = step(tables, started.state, "TaskCancelled", {"requested_by": "ann"}, "c")
    assert cancel == step(
        tables, started.state, "TaskCancelled", {"requested_by": "ann"}, "c", memoised=False
    )
    reconciled = step(tables, cancel.state, "EffectsReconciled", {"attempt": 1}, "r")
    general = step(tables, cancel.state, "EffectsReconciled", {"attempt": 1}, "r", memoised=False)
    assert reconciled == general and reconciled.status is Status.APPLIED
    assert reconciled.state.is_final and len(reconciled.evidence) == 2
    assert reconciled.evidence[0].raised == ("done.state.cancellation",)
    config = cancel.state._config
    (transitions,) = [key for key in config.cache.single if config.cache.single[key]]
    compiled = compiled_macrostep(tables, config, transitions)
    assert isinstance(compiled, CompiledMacrostep) and len(compiled.steps) == 2
    assert compiled.target is reconciled.state._config
