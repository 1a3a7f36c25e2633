"""Relative state references: a target resolved from its source state outward, the
explicit `.child` / `^sibling` forms, and the global form unchanged."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from chart_helpers import chart_of, compile_text, only

from statekit.api import compile_chart
from statekit.compiler.diagnostics import SourceSpan
from statekit.compiler.model.state_index import StateIndex

ROOT = Path(__file__).resolve().parents[3]

TICKET = """
statechart: ticket
events: {AGENT_REPLIED: {}, CUSTOMER_REPLIED: {}, SOLVED: {}}
parallel: true
states:
  first_response:
    initial: pending
    states:
      pending:
        on: {AGENT_REPLIED: met}
      met: {}
  resolution:
    initial: pending
    states:
      pending:
        on: {SOLVED: met, CUSTOMER_REPLIED: waiting.customer}
      waiting:
        initial: customer
        states:
          customer:
            on: {AGENT_REPLIED: pending, SOLVED: ^^met}
      met: {}
"""


def _target(chart_text: str, source: str, event: str) -> str:
    chart = chart_of(chart_text)
    by_id = {s.id: s.path for s in chart.states}
    for index in chart.state(source).transitions:
        transition = chart.transitions[index]
        if transition.event == event:
            return ", ".join(by_id[t] for t in transition.targets)
    raise AssertionError(f"no {event} from {source}")


@pytest.mark.parametrize(
    ("source", "event", "target"),
    [
        ("first_response.pending", "AGENT_REPLIED", "first_response.met"),  # sibling
        ("resolution.pending", "SOLVED", "resolution.met"),  # sibling, the other region
        ("resolution.pending", "CUSTOMER_REPLIED", "resolution.waiting.customer"),  # dotted
        ("resolution.waiting.customer", "AGENT_REPLIED", "resolution.pending"),  # outward
        ("resolution.waiting.customer", "SOLVED", "resolution.met"),  # explicit ^^
    ],
)
def test_a_target_resolves_from_its_source_outward(source: str, event: str, target: str) -> None:
    assert _target(TICKET, source, event) == target


@pytest.mark.parametrize(
    ("ref", "target"),
    [
        (".inner", "a.b.inner"),
        (".inner.deep", "a.b.inner.deep"),
        ("^c", "a.c"),
        ("^b", "a.b"),  # itself, from its parent
        ("^^a", "a"),
        ("^^z", "z"),
        ("inner", "a.b.inner"),  # a bare name is not looked for among the children...
        ("c", "a.c"),
        ("deep", "a.b.inner.deep"),  # ...but a unique name anywhere still resolves
    ],
)
def test_explicit_relative_forms(ref: str, target: str) -> None:
    text = f"""
    statechart: rel
    events: {{GO: {{}}}}
    initial: a
    states:
      a:
        initial: b
        states:
          b:
            initial: inner
            on: {{GO: '{ref}'}}
            states:
              inner:
                initial: deep
                states: {{deep: {{}}}}
          c: {{}}
      z: {{}}
    """
    assert _target(text, "a.b", "GO") == target


def test_a_near_name_wins_over_a_far_one() -> None:
    text = TICKET.replace("on: {SOLVED: met, CUSTOMER", "on: {SOLVED: met, CUSTOMER")
    assert _target(text, "first_response.pending", "AGENT_REPLIED") == "first_response.met"


@pytest.mark.parametrize(
    ("ref", "needle"),
    [
        ("^nothing", "'^nothing' from 'a.b' names 'a.nothing', which is not a state"),
        (".c", "'.c' from 'a.b' names 'a.b.c', which is not a state"),
        ("^^^c", "'^^^c' goes above the root from 'a.b'"),
    ],
)
def test_a_relative_form_that_names_nothing_is_explained(ref: str, needle: str) -> None:
    result = compile_text(
        f"""
        statechart: rel
        events: {{GO: {{}}}}
        initial: a
        states:
          a:
            initial: b
            states:
              b: {{on: {{GO: '{ref}'}}}}
              c: {{}}
        """
    )
    d = only(result, "unknown-state")
    assert d.message == needle
    assert (d.span.line, d.span.column) == (8, 20)


def test_an_ambiguity_names_the_relative_form_of_each_candidate_and_each_compiles() -> None:
    text = TICKET.replace("parallel: true\n", "parallel: true\non: {SOLVED: met}\n")
    d = only(compile_text(text), "ambiguous-state")
    forms = dict(re.findall(r"candidate: (\S+) \(from here: '([^']+)'\)", "\n".join(d.notes)))
    assert forms == {
        "first_response.met": ".first_response.met",
        "resolution.met": ".resolution.met",
    }
    for path, form in forms.items():
        assert _target(text.replace("{SOLVED: met}", f"{{SOLVED: '{form}'}}"), "", "SOLVED") == (
            path
        )


@pytest.mark.parametrize(
    "place",
    [
        "invariants: {i: {when: ^met, require: first_response}}",
        "invariants: {i: {when: first_response, require: .met}}",
        "invariants: {i: {assert: \"active('^met')\"}}",
    ],
)
def test_references_without_a_source_stay_global(place: str) -> None:
    d = only(compile_text(TICKET + place + "\n"), "unknown-state")
    assert "has no state to start from here" in d.message


def test_a_history_default_is_relative_to_the_history_state() -> None:
    text = """
    statechart: hist
    events: {GO: {}}
    initial: a
    states:
      a:
        initial: b
        states:
          b: {}
          c: {}
          h: {history: shallow, default: c}
      other:
        initial: c
        states: {c: {on: {GO: a.h}}}
    """
    chart = chart_of(text)
    assert chart.state("a.h").history_default == (chart.path_index["a.c"],)


def _charts() -> list[Path]:
    return sorted([*(ROOT / "machines").glob("*.yaml"), *(ROOT / "tests").rglob("*.yaml")])


def test_every_global_reference_still_names_the_same_state_from_every_source() -> None:
    """Over every chart of the repository that compiles: any dotted suffix that names one
    state globally names that state from every source state too, so no chart written
    before relative references compiles to another digest."""
    span = SourceSpan("chart.yaml", 1, 1, 1, 1)
    checked = 0
    for path in _charts():
        try:
            chart = compile_chart(path)
        except Exception:  # the fixtures of compile errors
            continue
        paths = [s.path for s in chart.states if s.path]
        index = StateIndex((s.id, s.path) for s in chart.states)
        suffixes = {".".join(p.split(".")[i:]) for p in paths for i in range(p.count(".") + 1)}
        for ref in suffixes:
            named = index.resolve(ref, span)
            if not isinstance(named, int):
                continue
            for source in ["", *paths]:
                assert index.resolve_from(ref, source, span) == named, (path, ref, source)
                checked += 1
    assert checked > 1000


def test_initial_may_name_its_child_as_a_target_would() -> None:
    chart = chart_of(
        """
        statechart: init
        initial: .a
        states:
          a:
            initial: .b.c
            states: {b: {initial: c, states: {c: {}}}}
        """
    )
    assert chart.state("").initial == (chart.path_index["a"],)
    assert chart.state("a").initial == (chart.path_index["a.b.c"],)


@pytest.mark.parametrize("name", ["^a", "^"])
def test_a_state_name_cannot_start_with_a_caret(name: str) -> None:
    d = only(
        compile_text(f"statechart: x\ninitial: a\nstates:\n  a: {{}}\n  '{name}': {{}}\n"),
        "schema",
    )
    assert "not starting with '*' or '^'" in d.message
    assert d.span.line == 5


TRIAL_TICKET = """
statechart: ticket
events: {ASK_CUSTOMER: {}, CUSTOMER_REPLIED: {}, SOLVED: {}}
initial: open
states:
  breached: {final: true}
  solved: {final: true}
  open:
    parallel: true
    on: {SOLVED: solved}
    states:
      first_response:
        initial: pending
        states:
          pending: {}
      resolution:
        initial: working
        after: [{id: sla, delay: 1d, to: BREACH}]
        states:
          working:
            on: {ASK_CUSTOMER: WAIT}
          waiting:
            on: {CUSTOMER_REPLIED: working}
"""


@pytest.mark.parametrize(
    ("breach", "wait", "hint"),
    [
        ("^breached", "waiting", "did you mean '^^breached' (breached)?"),
        ("breached", ".waiting", "did you mean '^waiting' (open.resolution.waiting)?"),
        ("breached", "^^waiting", "did you mean '^waiting' (open.resolution.waiting)?"),
        (
            "^pending",
            "waiting",
            "did you mean '^first_response.pending' (open.first_response.pending)?",
        ),
    ],
)
def test_a_relative_form_that_names_nothing_suggests_the_form_that_reaches_the_state(
    breach: str, wait: str, hint: str
) -> None:
    text = TRIAL_TICKET.replace("BREACH", f"'{breach}'").replace("WAIT", f"'{wait}'")
    d = only(compile_text(text), "unknown-state")
    assert d.notes == (
        hint,
        "'.name' names a child of the state, '^name' a sibling, and '^^name' a sibling of its"
        " parent.",
    )


def test_a_relative_form_naming_no_state_anywhere_gets_only_the_sentence_on_forms() -> None:
    text = TRIAL_TICKET.replace("BREACH", "'^nowhere'").replace("WAIT", "waiting")
    d = only(compile_text(text), "unknown-state")
    assert d.notes == (
        "'.name' names a child of the state, '^name' a sibling, and '^^name' a sibling of its"
        " parent.",
    )
