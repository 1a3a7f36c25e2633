"""Shared test helpers: compile inline YAML text (importable as `chart_helpers`)."""

from __future__ import annotations

import shutil
import textwrap

import pytest

from statekit.compiler.diagnostics import Diagnostic
from statekit.compiler.ir import CompiledChart
from statekit.compiler.pipeline import CompileResult, compile_source
from statekit.engine.chart import Chart


def compile_text(text: str, file: str = "chart.yaml") -> CompileResult:
    """Compile dedented YAML text."""
    return compile_source(textwrap.dedent(text).lstrip("\n"), file)


def chart_of(text: str) -> CompiledChart:
    """Compile text that must have no errors."""
    result = compile_text(text)
    assert result.chart is not None, [str(d.span) + " " + d.message for d in result.diagnostics]
    return result.chart


def only(result: CompileResult, slug: str) -> Diagnostic:
    """The single diagnostic of `slug` in a result (fails when there is not exactly one)."""
    found = [d for d in result.diagnostics if d.slug == slug]
    assert len(found) == 1, result.diagnostics
    return found[0]


def machine(text: str) -> Chart:
    """A runnable `Chart` from text that must have no errors."""
    return Chart(chart_of(text))


@pytest.fixture
def dot_program() -> str:
    """The Graphviz `dot` program; a test that needs it fails (never skips) without it:
    `make test` installs Graphviz, so a missing one is a broken setup."""
    found = shutil.which("dot")
    if found is None:
        pytest.fail("Graphviz's dot is not installed: run `make test` (it installs it)")
    return found


def toggling_regions_yaml(regions: int, name: str = "boom", shared: str | None = None) -> str:
    """`regions` parallel regions, each toggling between two states on its own event:
    2^regions reachable configurations from a few lines of YAML per region. With
    `shared`, every region also takes that event (back to its first state), so the
    regions are one component and the lint analysis builds their product (else it
    explores them apart: `statekit.analysis.compositional`)."""
    events = ", ".join(
        [*(f"T{i}: {{}}" for i in range(regions)), *([f"{shared}: {{}}"] if shared else [])]
    )
    lines = [f"statechart: {name}", "parallel: true", f"events: {{{events}}}", "states:"]
    for i in range(regions):
        lines += [
            f"  r{i}:",
            f"    initial: a{i}",
            *([f"    on: {{{shared}: a{i}}}"] if shared else []),
            "    states:",
            f"      a{i}: {{on: {{T{i}: b{i}}}}}",
            f"      b{i}: {{on: {{T{i}: a{i}}}}}",
        ]
    return "\n".join(lines) + "\n"


RACE_CLASSES_YAML = """\
statechart: classes
events: {A: {}, B: {}, C: {}}
producers: {x: [A], y: [B], z: [C]}
parallel: true
states:
  left:
    initial: l0
    states:
      l0: {on: {A: l1, C: l1}}
      l1: {reject: {A: LEFT_DONE, C: LEFT_DONE}}
  right:
    initial: r0
    states:
      r0: {on: {B: r1}}
      r1: {reject: {B: RIGHT_DONE}}
"""
"""Three events of three producers over two regions: A and C both move `left` (their
orders end alike, the later one rejected: class info), B moves `right` (convergent with
both)."""
