"""The public entry points: `compile_chart` (alias `compile`) and `load`."""

from __future__ import annotations

from pathlib import Path

import pytest

import statekit
from statekit.api import compile_chart, load
from statekit.compiler.diagnostics import CompileError


def test_compile_is_the_public_alias_of_compile_chart() -> None:
    assert statekit.compile is statekit.compile_chart is compile_chart


def test_compile_chart_returns_the_ir_and_load_wraps_it(tmp_path: Path) -> None:
    path = tmp_path / "c.yaml"
    path.write_text("statechart: c\ninitial: a\nstates:\n  a: {}\n", encoding="utf-8")
    assert compile_chart(path).name == "c"
    assert load(path).ir == compile_chart(path)


def test_compile_chart_raises_with_the_errors(tmp_path: Path) -> None:
    path = tmp_path / "c.yaml"
    path.write_text("statechart: c\ninitial: b\nstates:\n  a: {}\n", encoding="utf-8")
    with pytest.raises(CompileError) as raised:
        compile_chart(path)
    assert [d.slug for d in raised.value.diagnostics] == ["invalid-initial"]


def test_load_keeps_the_text_it_compiled_and_a_bare_chart_has_none(tmp_path: Path) -> None:
    path = tmp_path / "c.yaml"
    text = "statechart: c\ninitial: a\nstates:\n  a: {}\n"
    path.write_text(text, encoding="utf-8")
    assert load(path).source == text
    assert statekit.Chart(compile_chart(path)).source is None
    with pytest.raises(CompileError):
        load(tmp_path / "missing.yaml")
