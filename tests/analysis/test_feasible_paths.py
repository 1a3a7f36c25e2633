"""Feasible paths only: the data-guard outcomes of one macrostep are reasoned about together,
and every path `statekit paths` prints carries payloads that replay through `Chart.send`.

The property: for generated charts (two parallel regions reacting to the same events,
guards and `if` conditions over the payload and the context, some `assign`s, a flag
one event sets and another reads), every
step of every covering path that carries a payload is taken exactly as printed when
the path is replayed with those payloads from the initial state; where every guard
reads only the payload (so the analysis's reasoning is exact), every step carries one;
and each order of each race `statekit races` prints replays to its printed end.
The same holds for what `statekit explain --format json` prints (each
configuration's path and each answer's payload) and for lint's counterexample
traces (the text notes, and the JSON `trace`).
"""

from __future__ import annotations

import json
import re
from typing import Any

from chart_helpers import chart_of
from cli_process import statekit
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from statekit.analysis.explain import explain
from statekit.analysis.explain_payloads import explanation_json
from statekit.analysis.explorer import explore
from statekit.analysis.paths import PathStep, covering_paths
from statekit.analysis.race_witness import race_replays
from statekit.analysis.races import races_of
from statekit.analysis.witness import Expected, PathReplays, takes
from statekit.compiler.ir import CompiledChart
from statekit.engine.chart import Chart
from statekit.engine.state import State
from statekit.lint.config import LintConfig
from statekit.lint.lint_files import lint_source
from statekit.testing.coverage.metrics import measure

REGIONS = """\
statechart: regions
context:
  cancel_at_period_end: {type: boolean, default: false}
events:
  CANCEL_REQUESTED:
    at_period_end: {type: boolean}
    days_left: {type: integer}
  RENEW: {}
parallel: true
states:
  billing:
    initial: active
    states:
      active:
        on:
          CANCEL_REQUESTED:
            to: cancelled
            if: not event.at_period_end
      cancelled: {}
  entitlement:
    initial: granted
    states:
      granted:
        on:
          CANCEL_REQUESTED:
            to: ending
            if: event.at_period_end and event.days_left > 0
            else: NO_DAYS_LEFT
          RENEW:
            to: granted
            if: ctx.cancel_at_period_end and not ctx.cancel_at_period_end
      ending: {}
"""


def _replays(ir: CompiledChart, steps: tuple[PathStep, ...]) -> int:
    """Replay the steps that carry a payload; return how many were checked. A step
    without one is a rejection the search could not bring about (the state stays) or
    the first of a tail it could not take (the replay stops)."""
    chart = Chart(ir)
    start = steps[0].payload_fields if steps and steps[0].event is None else None
    state = chart.start(start)  # the initial step's payload: the context to start with
    checked = 0
    for step in steps:
        if step.event is None:
            continue
        payload = step.payload_fields
        if payload is None:
            if step.status == "APPLIED":
                break
            continue
        result = chart.send(state, step.event, payload)
        expected = Expected(
            step.event, step.status, step.reason, step.transitions, step.configuration, step.tracked
        )
        assert takes(result, expected), (step, result.status, result.reason)
        state = result.state
        checked += 1
    return checked


def test_contradictory_conditions_of_one_event_are_never_combined() -> None:
    ir = chart_of(REGIONS)
    suite = covering_paths(explore(ir))
    renew = next(t.id for t in ir.transitions if t.event == "RENEW")
    assert renew in suite.never_selected  # its condition cannot hold
    for path in suite.paths:
        for step in path.steps:
            held = {a for a in step.assuming if a.endswith(" holds")}
            assert not any("(not event.at_period_end)" in a for a in held) or not any(
                "(event.at_period_end and" in a for a in held
            ), step
            if step.event is not None:
                assert step.payload is not None, step
        assert _replays(ir, path.steps) == sum(1 for s in path.steps if s.event)


def test_paths_print_and_serialise_the_payloads(tmp_path: Any) -> None:
    chart = tmp_path / "regions.yaml"
    chart.write_text(REGIONS)
    text = statekit("paths", str(chart))
    assert text.returncode == 0, text.stderr
    assert 'payload {"at_period_end": false, "days_left": 1}' in text.stdout
    as_json = statekit("paths", str(chart), "--format", "json")
    payloads = [
        s["payload"] for p in json.loads(as_json.stdout)["paths"] for s in p["steps"] if s["event"]
    ]
    assert payloads and all(isinstance(p, dict) for p in payloads)


def test_a_condition_the_reasoning_cannot_translate_is_kept_and_only_assumed() -> None:
    # `%` is not translated (Python's and the solver's remainders differ on negative
    # numbers): both conditions holding stays a run, and since no payload makes it
    # happen, the path prints it without a payload rather than with a wrong one.
    ir = chart_of(
        """\
statechart: parity
events:
  E:
    n: {type: integer}
parallel: true
states:
  a:
    initial: a0
    states:
      a0:
        on:
          E: {to: a1, if: event.n % 2 == 0}
      a1: {}
  b:
    initial: b0
    states:
      b0:
        on:
          E: {to: b1, if: event.n % 2 == 1}
      b1: {}
"""
    )
    exploration = explore(ir)
    both = [
        o
        for o in exploration.nodes[0].outcomes or ()
        if o.fired and all(a.holds for a in o.assumptions) and len(o.assumptions) == 2
    ]
    assert both  # kept: not refuted
    suite = covering_paths(exploration)
    steps = [s for p in suite.paths for s in p.steps if s.event and len(s.transitions) == 2]
    assert steps and all(s.payload is None for s in steps)


# -- the property ---------------------------------------------------------------------

ATOMS_PAYLOAD = st.sampled_from(
    [
        "event.n > 3",
        "event.n <= 3",
        "event.n == 7",
        "event.n >= 8",
        "event.flag",
        "not event.flag",
        "event.kind == 'x'",
        "event.kind != 'x'",
        "min(event.n, 5) == 5",
        "len(event.note) > 2",
        "event.note == 'abc'",
    ]
)
ATOMS_CONTEXT = st.sampled_from(["ctx.c > 3", "ctx.c <= 3", "ctx.c == event.n", "ctx.on"])
ATOMS_FLAG = st.sampled_from(["ctx.f", "not ctx.f"])
"""A tracked flag: set by some transitions (from the payload or a literal), read by others."""
SET_FLAG = st.sampled_from(['{f: "event.flag"}', '{f: "true"}', '{f: "false"}'])


@st.composite
def conditions(draw: st.DrawFn, with_context: bool, with_flag: bool = False) -> str:
    atoms = st.one_of(ATOMS_PAYLOAD, ATOMS_CONTEXT) if with_context else ATOMS_PAYLOAD
    if with_flag:
        atoms = st.one_of(atoms, ATOMS_FLAG)
    parts = draw(st.lists(atoms, min_size=1, max_size=2))
    joined = f" {draw(st.sampled_from(['and', 'or']))} ".join(parts)
    return f"not ({joined})" if draw(st.booleans()) else joined


@st.composite
def charts(draw: st.DrawFn, with_context: bool, with_flag: bool = False) -> str:
    lines = [
        "statechart: generated",
        "context:",
        "  c: {type: integer, default: 0}",
        "  on: {type: boolean, default: false}",
        "  f: {type: boolean, default: false}",
        "events:",
    ]
    for event in ("E0", "E1"):
        lines += [
            f"  {event}:",
            "    n: {type: integer}",
            "    flag: {type: boolean}",
            "    kind: {enum: [x, y]}",
            "    note: {type: string}",
        ]
    lines += ["parallel: true", "states:"]
    for region in ("r", "s"):
        lines += [f"  {region}:", f"    initial: {region}0", "    states:"]
        for index in range(2):
            lines += [f"      {region}{index}:", "        on:"]
            for event in ("E0", "E1"):
                if not draw(st.booleans()):
                    continue
                target = f"{region}{draw(st.integers(0, 1))}"
                condition = draw(conditions(with_context, with_flag))
                lines += [f"          {event}:", f"            - to: {target}"]
                lines.append(f'              if: "{condition}"')
                if with_context and draw(st.booleans()):
                    lines.append('              do: [{assign: {c: "event.n"}}]')
                elif with_flag and draw(st.booleans()):
                    lines.append(f"              do: [{{assign: {draw(SET_FLAG)}}}]")
                if draw(st.booleans()):
                    lines += [
                        f"            - to: {region}{1 - index}",
                        f'              if: "{draw(conditions(with_context, with_flag))}"',
                        f"              else: {region.upper()}{index}_{event}_REFUSED",
                    ]
            if lines[-1] == "        on:":
                lines[-1] = "        on: {}"
    return "\n".join(lines) + "\n"


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(text=charts(with_context=False))
def test_every_printed_path_replays_and_payload_guards_always_get_payloads(text: str) -> None:
    ir = chart_of(text)
    for path in covering_paths(explore(ir)).paths:
        events = [s for s in path.steps if s.event is not None]
        assert all(s.payload is not None for s in events), (text, path)
        assert _replays(ir, path.steps) == len(events)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(text=charts(with_context=False, with_flag=True))
def test_a_flag_set_by_one_event_and_read_by_another_is_never_taken_both_ways(text: str) -> None:
    # The flag is tracked (every assign of it is exact), so every guard reading it is
    # decided by the value the path gave it: an outcome that needs the other value is
    # not explored, and every step of every path gets a payload that replays it (from
    # the start context its first step names). A branch taking the flag against its
    # value would have no payload.
    ir = chart_of(text)
    exploration = explore(ir)
    assert "f" in exploration.tracked or "ctx.f" not in text
    for path in covering_paths(exploration).paths:
        events = [s for s in path.steps if s.event is not None]
        assert all(s.payload is not None for s in events), (text, path)
        assumed = [a for s in path.steps for a in s.assuming]
        assert not any("(ctx.f)" in a or "(not ctx.f)" in a for a in assumed), path
        assert _replays(ir, path.steps) == len(events)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(text=charts(with_context=True))
def test_every_printed_payload_replays_with_context_guards_and_assigns(text: str) -> None:
    ir = chart_of(text)
    for path in covering_paths(explore(ir)).paths:
        _replays(ir, path.steps)


HARD = """\
statechart: hard
events:
  E:
    a: {type: integer}
    b: {type: integer}
    c: {type: integer}
parallel: true
states:
  r:
    initial: r0
    states:
      r0:
        on:
          E:
            to: r1
            if: "event.a * event.a * event.a + event.b * event.b * event.b
              + event.c * event.c * event.c == 33"
      r1: {}
  s:
    initial: s0
    states:
      s0:
        on:
          E: {to: s1, if: "event.a > 0"}
      s1: {}
"""


def test_a_question_past_the_solvers_budget_keeps_its_run_with_a_note(tmp_path: Any) -> None:
    # Sums of three cubes: no solver settles 33 within the budget. The runs stay
    # (both transitions can still fire, together too) and the note says so.
    chart = tmp_path / "hard.yaml"
    chart.write_text(HARD)
    done = statekit("paths", str(chart))
    assert done.returncode == 0, done.stderr
    assert "went past the solver's budget" in done.stderr
    assert "2 of 2 transition(s) fired" in done.stdout
    exploration = explore(chart_of(HARD))
    assert exploration.reasoning[1] >= 1
    together = [
        o for o in exploration.nodes[0].outcomes or () if o.fired and len(o.transitions()) == 2
    ]
    assert together


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(text=charts(with_context=False))
def test_every_printed_race_order_replays_to_its_printed_end(text: str) -> None:
    ir = chart_of(text)
    report = races_of(explore(ir))
    chart = Chart(ir)
    for race in report.races:
        for order, replay in zip(race.orders, race_replays(report.exploration, race), strict=True):
            assert replay.complete, (text, race.events, order)  # payload-only guards
            state = chart.start()
            results = []
            for event, payload in zip(replay.events, replay.payloads, strict=True):
                assert payload is not None
                result = chart.send(state, event, payload)
                results.append(result)
                state = result.state
            first, second = results[-2:]
            assert (first.status.value, first.reason) == (order.first.status, order.first.reason)
            assert (second.status.value, second.reason) == (
                order.second.status,
                order.second.reason,
            )
            assert state.leaves == order.configuration


# -- explain and lint print payloads that replay -------------------------------------


def _sent(
    chart: Chart, events: list[dict[str, Any]], start: dict[str, Any] | None = None
) -> State | None:
    """The state `events` (`{"event", "payload"}` as explain's JSON prints them) lead to
    from the start (with the printed `start_context`, if any), every step applied; None
    when a payload is only assumed."""
    state = chart.start(start or None)
    for step in events:
        if step["payload"] is None:
            return None
        result = chart.send(state, step["event"], step["payload"])
        assert result.status.value == "APPLIED", (step, result.reason)
        state = result.state
    return state


def _explain_replays(ir: CompiledChart) -> tuple[int, int]:
    """Replay every path and answer `explain --format json` prints with payloads; return
    (answers checked, answers printed)."""
    exploration = explore(ir)
    document = explanation_json(explain(exploration), PathReplays(exploration))
    chart = Chart(ir)
    checked = printed = 0
    for row in document["configurations"]:
        at = _sent(chart, row["path"], row.get("start_context"))
        if at is not None:
            assert set(at.leaves) == set(row["states"]), (row["path"], row["states"])
        for event, verdicts in row["events"].items():
            for verdict in verdicts:
                printed += 1
                start = (
                    at
                    if "path" not in verdict
                    else _sent(chart, verdict["path"], verdict.get("start_context"))
                )
                if start is None or verdict["payload"] is None:
                    continue
                result = chart.send(start, event, verdict["payload"])
                assert (result.status.value, result.reason) == (
                    verdict["status"],
                    verdict["reason"],
                ), (row["states"], event, verdict)
                if "target" in verdict:
                    assert set(result.state.leaves) == set(verdict["target"]), verdict
                checked += 1
    return checked, printed


STEP_LINE = re.compile(r"^\s+(\d+)\. (\S+) (→ \{(.*)\}|ALREADY_APPLIED|REJECTED (\S+))$")
PAYLOAD_LINE = re.compile(r"^\s+payload (\{.*\})$")
ASSUMED_LINE = "payload: none found by replay"


START_LINE = re.compile(r"^\s+start context (\{.*\})$")


def _lint_traces(
    ir: CompiledChart, text: str
) -> list[tuple[dict[str, Any], list[tuple[str, str, Any]]]]:
    """The counterexample traces of lint's findings: per trace, the context the instance
    starts with (empty: the defaults) and each step's event, its printed outcome and its
    payload ({} when none is printed, None when assumed)."""
    report = lint_source(text, "generated.yaml", LintConfig())
    traces: list[tuple[dict[str, Any], list[tuple[str, str, Any]]]] = []
    for finding in report.diagnostics:
        steps: list[tuple[str, str, Any]] = []
        for note in finding.notes:
            if note == "path from the initial configuration:":
                steps = []
                traces.append(({}, steps))
            elif (start := START_LINE.match(note)) is not None:
                traces[-1][0].update(json.loads(start.group(1)))
            elif (step := STEP_LINE.match(note)) is not None:
                steps.append((step.group(2), step.group(3), {}))
            elif (payload := PAYLOAD_LINE.match(note)) is not None:
                event, outcome, _ = steps[-1]
                steps[-1] = (event, outcome, json.loads(payload.group(1)))
            elif ASSUMED_LINE in note:
                event, outcome, _ = steps[-1]
                steps[-1] = (event, outcome, None)
    return traces


def _lint_replays(ir: CompiledChart, text: str) -> tuple[int, int]:
    """Replay every trace lint prints; return (steps checked, steps printed)."""
    chart = Chart(ir)
    checked = printed = 0
    for start, trace in _lint_traces(ir, text):
        state = chart.start(start or None)
        for event, outcome, payload in trace:
            printed += 1
            if payload is None:
                break  # from here on the trace is assumed
            result = chart.send(state, event, payload)
            if outcome.startswith("→"):
                assert result.status.value == "APPLIED", (trace, result.reason)
                assert "{" + ", ".join(result.state.leaves) + "}" == outcome[2:], trace
            elif outcome == "ALREADY_APPLIED":
                assert result.status.value == "ALREADY_APPLIED", trace
            else:
                assert f"REJECTED {result.reason}" == outcome, (trace, result.reason)
            state = result.state
            checked += 1
    return checked, printed


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(text=charts(with_context=False))
def test_explain_and_lint_traces_replay_and_payload_guards_always_get_payloads(
    text: str,
) -> None:
    ir = chart_of(text)
    checked, printed = _explain_replays(ir)
    assert checked == printed, text
    checked, printed = _lint_replays(ir, text)
    assert checked == printed, text


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(text=charts(with_context=True))
def test_explain_and_lint_traces_replay_with_context_guards_and_assigns(text: str) -> None:
    ir = chart_of(text)
    _explain_replays(ir)
    _lint_replays(ir, text)


def test_explain_and_lint_print_checked_payloads_on_a_known_chart(tmp_path: Any) -> None:
    ir = chart_of(REGIONS)
    # nothing assigns ctx.cancel_at_period_end, so an instance keeps the value it was
    # created with: the exploration starts from both, and explain answers from each
    assert _explain_replays(ir) == (24, 24)
    assert _lint_replays(ir, REGIONS) == (5, 5)
    chart = tmp_path / "regions.yaml"
    chart.write_text(REGIONS)
    as_json = statekit("explain", str(chart), "--format", "json")
    assert as_json.returncode == 0, as_json.stderr
    first = json.loads(as_json.stdout)["configurations"][0]
    assert first["path"] == []
    answers = [v["payload"] for v in first["events"]["CANCEL_REQUESTED"]]
    assert {"at_period_end": False, "days_left": 1} in answers
    assert "payload" in statekit("explain", str(chart)).stdout  # the text table's column
    linted = statekit("lint", str(chart))
    assert 'payload {"at_period_end": true, "days_left": 1}' in linted.stdout, linted.stdout


def test_every_lint_format_carries_the_checked_payloads(tmp_path: Any) -> None:
    chart = tmp_path / "regions.yaml"
    chart.write_text(REGIONS)
    found = json.loads(statekit("lint", str(chart), "--format", "json").stdout)
    traces = [d["trace"] for d in found["diagnostics"] if "trace" in d]
    assert traces
    machine = Chart(chart_of(REGIONS))
    for trace in traces:  # the JSON trace replays to each step's printed outcome
        state = machine.start()
        for step in trace:
            if step["event"] is None:
                continue
            assert step["payload"] is not None, trace
            result = machine.send(state, step["event"], step["payload"])
            shown = "→ {" + ", ".join(result.state.leaves) + "}"
            if result.status.value != "APPLIED":
                shown = f"{result.status.value} {result.reason}"
            assert shown == step["outcome"], trace
            state = result.state
    sarif = json.loads(statekit("lint", str(chart), "--format", "sarif").stdout)
    results = sarif["runs"][0]["results"]
    assert any("trace" in r.get("properties", {}) for r in results)
    assert all('payload {"' in r["message"]["text"] for r in results if "properties" in r)
    github = statekit("lint", str(chart), "--format", "github").stdout
    assert 'payload {"at_period_end": true, "days_left": 1}' in github


def _coverage_replays(ir: CompiledChart) -> int:
    """Replay every coverage hint (a missing transition or rejection reason) whose
    payloads were all found; return how many were checked."""
    coverage = measure(explore(ir), None)
    chart = Chart(ir)
    checked = 0
    for item in (*coverage.transition.missing, *coverage.rejection.missing):
        path, payloads = item["path"], item["payloads"]
        if path is None:
            continue
        assert len(payloads) == len(path)
        if not path or any(p is None for p in payloads):
            continue  # only assumed from some step on
        state = chart.start(item.get("start_context"))
        for event, payload in zip(path, payloads, strict=True):
            result = chart.send(state, event, payload)
            state = result.state
        if "reason" in item:
            assert result.reason == item["reason"], (item, result.reason)
        else:
            assert item["id"] in {t.id for m in result.evidence for t in m.transitions}, item
        checked += 1
    for race in coverage.race.missing:
        path, payloads = race["path"], race["payloads"]
        assert len(payloads) == len(path)
        if any(p is None for p in payloads):
            continue
        state = chart.start(race.get("start_context"))
        for event, payload in zip(path, payloads, strict=True):
            state = chart.send(state, event, payload).state
        assert set(state.leaves) <= set(race["configuration"]), race
        checked += 1
    return checked


def test_coverage_hints_carry_payloads_that_replay() -> None:
    assert _coverage_replays(chart_of(REGIONS)) == 6  # 5 transitions and rejections, 1 race


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(text=charts(with_context=True))
def test_coverage_hints_replay_to_what_they_cover(text: str) -> None:
    _coverage_replays(chart_of(text))
