"""The exploration tracks finite-domain context fields across events.

A flag set by one event (`assign: {cancel_at_period_end: event.at_period_end}`)
and read by a later event's guard is decided by the value the past gave it, never
taken both ways; a field whose assignments are not exact stays abstract (the same
charts with such an assignment are the contrast each test needs to be able to fail).
"""

from __future__ import annotations

import json
from pathlib import Path

from chart_helpers import chart_of
from cli_process import statekit

from statekit.analysis.explain import explain
from statekit.analysis.explorer import explore
from statekit.analysis.paths import covering_paths
from statekit.analysis.races import races_of
from statekit.analysis.tracked_context import MAX_VALUATIONS, TrackedFields
from statekit.engine.chart import Chart

START = ("billing.active", "entitlement.granted")
EXACT = "event.at_period_end"
ABSTRACT = "event.at_period_end == true"  # a comparison: not an exact source

SUBSCRIPTION = """\
statechart: subscription
context:
  cancel_at_period_end: {type: boolean, default: false}
events:
  CANCEL_REQUESTED:
    at_period_end: {type: boolean}
  PERIOD_ENDED: {}
  PAYMENT_FAILED: {}
parallel: true
states:
  billing:
    initial: active
    states:
      active:
        on:
          CANCEL_REQUESTED:
            do: [{assign: {cancel_at_period_end: "SOURCE"}}]
          PERIOD_ENDED:
            to: ended
            if: ctx.cancel_at_period_end
            else: NOT_ENDING
      ended: {}
  entitlement:
    initial: granted
    states:
      granted:
        on:
          PERIOD_ENDED: {to: revoked, if: ctx.cancel_at_period_end}
          PAYMENT_FAILED: {to: grace, if: not ctx.cancel_at_period_end}
      grace: {}
      revoked: {}
"""


def _subscription(source: str) -> str:
    return SUBSCRIPTION.replace("SOURCE", source)


def test_a_flag_set_by_one_event_decides_a_later_events_guards() -> None:
    exploration = explore(chart_of(_subscription(EXACT)))
    assert exploration.tracked == ("cancel_at_period_end",)
    for node in exploration.nodes:
        ended = [o for o in node.outcomes or () if o.event == "PERIOD_ENDED"]
        assert len(ended) == 1, node  # decided by the value, one outcome
        assert ended[0].assumptions == ()
        if node.config == exploration.nodes[0].config:
            assert ended[0].fired is (node.tracked["cancel_at_period_end"] is True)
    # the split: CANCEL_REQUESTED leads to a node with each value, no assumption printed
    start = exploration.nodes[0]
    cancels = [o for o in start.outcomes or () if o.event == "CANCEL_REQUESTED"]
    reached = {exploration.nodes[o.target].tracked["cancel_at_period_end"] for o in cancels}
    assert reached == {True, False}


def test_an_inexact_assignment_leaves_the_field_abstract() -> None:
    exploration = explore(chart_of(_subscription(ABSTRACT)))
    assert exploration.tracked == ()
    ended = [o for o in exploration.nodes[0].outcomes or () if o.event == "PERIOD_ENDED"]
    assert len(ended) > 1  # taken both ways, as before


def _diverging_races(source: str) -> list[tuple[str, ...]]:
    report = races_of(explore(chart_of(_subscription(source))))
    return [
        race.configuration
        for race in report.races
        if set(race.events) == {"PAYMENT_FAILED", "PERIOD_ENDED"}
        and race.orders[0].configuration != race.orders[1].configuration
    ]


def test_a_race_only_an_untracked_flag_allows_is_not_reported() -> None:
    # PAYMENT_FAILED needs the flag false, PERIOD_ENDED true: never both in one run.
    assert _diverging_races(ABSTRACT)  # the flag abstract: the race is (wrongly) there
    assert _diverging_races(EXACT) == []


def test_a_start_value_other_than_the_default_is_explored_and_real() -> None:
    # An instance may be created with the flag already true (`Chart.start(context)`),
    # so a start node has each value; the one with `true` ends the period at once.
    ir = chart_of(_subscription(EXACT))
    exploration = explore(ir)
    starts = {n.tracked["cancel_at_period_end"]: n for n in exploration.nodes if n.depth == 0}
    assert set(starts) == {False, True}
    assert starts[False].id == 0  # the declared default first
    shown = exploration.tracked_nodes.distinguishing_text(starts[True].id)
    assert shown == "with ctx.cancel_at_period_end = true"
    ended = next(o for o in starts[True].outcomes or () if o.event == "PERIOD_ENDED")
    chart = Chart(ir)
    result = chart.send(chart.start({"cancel_at_period_end": True}), "PERIOD_ENDED", {})
    assert ended.fired and result.status.value == "APPLIED"
    assert set(result.state.leaves) == {"billing.ended", "entitlement.revoked"}


def test_nodes_that_differ_only_in_tracked_values_are_told_apart() -> None:
    exploration = explore(chart_of(_subscription(EXACT)))
    configs = [n.config for n in exploration.nodes]
    twins = [n for n in exploration.nodes if configs.count(n.config) > 1]
    assert twins
    texts = {exploration.tracked_nodes.distinguishing_text(n.id) for n in twins}
    assert texts == {
        "with ctx.cancel_at_period_end = false",
        "with ctx.cancel_at_period_end = true",
    }


def test_guards_mixing_a_tracked_value_and_the_payload_join_one_question() -> None:
    # `ctx.tier == 'gold' and event.n > 3` holding where the tier is silver is no run.
    ir = chart_of(
        """\
statechart: tiers
context:
  tier: {enum: [silver, gold], default: silver}
events:
  UPGRADE: {}
  ORDER: {n: {type: integer}}
initial: open
states:
  open:
    on:
      UPGRADE: {to: open, do: [{assign: {tier: "'gold'"}}]}
      ORDER:
        - {to: big, if: "ctx.tier == 'gold' and event.n > 3"}
        - {to: small, if: "event.n <= 3"}
        - {to: other, if: "ctx.tier == 'silver'"}
  big: {}
  small: {}
  other: {}
"""
    )
    exploration = explore(ir)
    for node in exploration.nodes:
        if node.depth == 0 and ir.states[next(iter(node.config.atomic))].path == "open":
            fired = {
                ir.states[t].path
                for o in node.outcomes or ()
                if o.event == "ORDER" and o.fired
                for t in exploration.nodes[o.target].config.atomic
            }
            expected = {"big", "small"} if node.tracked["tier"] == "gold" else {"small", "other"}
            assert fired == expected, (node.tracked, fired)


def test_past_the_bound_fields_stay_abstract_with_a_note() -> None:
    count = MAX_VALUATIONS.bit_length()  # booleans: one more than the bound allows
    fields = "\n".join(f"  f{i}: {{type: boolean, default: false}}" for i in range(count))
    guards = " and ".join(f"ctx.f{i}" for i in range(count))
    ir = chart_of(
        f"""\
statechart: many
context:
{fields}
events:
  GO: {{}}
initial: a
states:
  a:
    on:
      GO: {{to: b, if: "{guards}"}}
  b: {{}}
"""
    )
    tracked = TrackedFields(ir)
    assert len(tracked.names) == count - 1 and tracked.valuations <= MAX_VALUATIONS
    exploration = explore(ir)
    assert exploration.tracking_notes and "ctx.f" in exploration.tracking_notes[0]
    assert exploration.complete  # an abstract field is less precise, never a bound hit


def test_a_field_no_guard_reads_is_not_tracked() -> None:
    ir = chart_of(
        """\
statechart: unread
context:
  seen: {type: boolean, default: false}
events:
  GO: {}
initial: a
states:
  a:
    on:
      GO: {to: a, do: [{assign: {seen: true}}]}
"""
    )
    exploration = explore(ir)
    assert exploration.tracked == () and len(exploration.nodes) == 1


def test_every_printed_path_replays_from_its_start_context() -> None:
    ir = chart_of(_subscription(EXACT))
    chart = Chart(ir)
    for path in covering_paths(explore(ir)).paths:
        state = chart.start(path.steps[0].payload_fields)
        for step in path.steps[1:]:
            assert step.payload_fields is not None, step
            result = chart.send(state, str(step.event), step.payload_fields)
            assert (result.status.value, result.reason) == (step.status, step.reason)
            assert all(result.state.context[k] == v for k, v in step.tracked)
            state = result.state


def test_paths_show_the_start_context_and_the_values_that_tell_nodes_apart(
    tmp_path: Path,
) -> None:
    chart = tmp_path / "subscription.yaml"
    chart.write_text(_subscription(EXACT))
    done = statekit("paths", str(chart))
    assert done.returncode == 0, done.stderr
    assert 'start context {"cancel_at_period_end": true}' in done.stdout
    assert "assuming the instance starts with ctx.cancel_at_period_end = true" in done.stdout
    assert "→ {billing.active, entitlement.granted} with ctx.cancel_at_period_end = " in (
        done.stdout
    )
    assert "none found by replay" not in done.stdout
    as_json = json.loads(statekit("paths", str(chart), "--format", "json").stdout)
    firsts = [p["steps"][0]["payload"] for p in as_json["paths"]]
    assert {"cancel_at_period_end": True} in firsts and None in firsts


def test_explain_names_the_tracked_value_each_answer_holds_in() -> None:
    exploration = explore(chart_of(_subscription(EXACT)))
    start = next(r for r in explain(exploration).rows if r.states == START)
    ended = {v.text(): v.assuming for v in start.verdicts["PERIOD_ENDED"]}
    assert ended == {
        "REJECTED NOT_ENDING": ("ctx.cancel_at_period_end = false",),
        "→ billing.ended, entitlement.revoked": ("ctx.cancel_at_period_end = true",),
    }
    # without tracking, the same answers are only assumed, each way
    abstract = explore(chart_of(_subscription(ABSTRACT)))
    row = next(r for r in explain(abstract).rows if r.states == START)
    assert all(
        any("holds" in a or "fails" in a for a in v.assuming) for v in row.verdicts["PERIOD_ENDED"]
    )


TRACKABLE = [
    # (field declaration, assignment source, payload field type, a guard on it, tracked?)
    ("{type: boolean, default: false}", '"true"', "boolean", "ctx.f", True),
    ("{type: boolean, default: false}", '"event.v"', "boolean", "ctx.f", True),
    ("{type: boolean, default: false}", '"not event.v"', "boolean", "ctx.f", False),
    (
        "{type: boolean, nullable: true}",
        '"event.v"',
        "{type: boolean, nullable: true}",
        "ctx.f == true",
        True,
    ),
    ("{type: boolean, default: false}", '"ctx.g"', "boolean", "ctx.f", True),
    ("{enum: [a, b, c], default: a}", '"event.v"', "{enum: [a, b]}", "ctx.f == 'a'", True),
    ("{enum: [a, b], default: a}", "\"'b'\"", "{enum: [a, b]}", "ctx.f == 'a'", True),
    ("{enum: [a, b], default: a, nullable: true}", '"null"', "{enum: [a]}", "ctx.f == 'a'", True),
    ("{type: integer, default: 0}", '"1"', "integer", "ctx.f > 0", False),
    ("{type: string, default: a}", '"event.v"', "string", "ctx.f == 'a'", False),
]


def test_which_fields_are_tracked() -> None:
    for declared, source, payload, guard, tracked in TRACKABLE:
        ir = chart_of(
            f"""\
statechart: table
context:
  f: {declared}
  g: {{type: boolean, default: false}}
events:
  SET: {{v: {payload}}}
  READ: {{}}
initial: a
states:
  a:
    on:
      SET: {{to: a, do: [{{assign: {{f: {source}}}}}]}}
      READ:
        - {{to: b, if: "{guard}"}}
        - {{to: b, if: "ctx.g"}}
  b: {{}}
"""
        )
        names = TrackedFields(ir).names
        assert ("f" in names) is tracked, (declared, source, payload, names)
        assert "g" in names  # read by a guard, never assigned: tracked from any start
