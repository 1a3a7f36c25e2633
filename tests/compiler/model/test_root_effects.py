"""The root state is never entered or exited (docs/semantics.md): an `entry:` or `exit:`
on it, which would never run, is refused at compile time with a positioned error naming
where its effects belong; the same effects on the initial state run at creation."""

from __future__ import annotations

import pytest

from statekit.compiler.pipeline import compile_source
from statekit.engine.chart import Chart

CHART = """\
statechart: greeter
version: 1
description: Counts its greetings.
context:
  greetings: {type: integer, default: 0}
events:
  hello: {}
ROOTinitial: waiting
states:
  waiting:
STATE    on:
      hello: {do: [{assign: {greetings: ctx.greetings + 1}}]}
"""
EFFECTS = "[{assign: {greetings: 10}}]"


def _chart(root: str = "", state: str = "") -> str:
    return CHART.replace("ROOT", root).replace("STATE", state)


@pytest.mark.parametrize(
    ("key", "verb", "instead"),
    [("entry", "entered", "initial state"), ("exit", "exited", "final state")],
)
def test_root_entry_and_exit_are_positioned_errors(key: str, verb: str, instead: str) -> None:
    text = _chart(root=f"{key}: {EFFECTS}\n")
    result = compile_source(text, "greeter.yaml")
    assert result.chart is None
    (problem,) = [d for d in result.diagnostics if f"'{key}:'" in d.message]
    assert problem.severity.value == "error"
    assert f"the root state is never {verb}" in problem.message
    assert (problem.span.line, problem.span.column) == (8, 1)  # at the key
    assert any(instead in note for note in problem.notes)  # where the effects belong


def test_the_same_effects_on_the_initial_state_run_at_creation() -> None:
    result = compile_source(_chart(state=f"    entry: {EFFECTS}\n"), "g.yaml")
    assert result.chart is not None
    assert Chart(result.chart).initialize().state.context["greetings"] == 10
