"""import-scxml and an `<assign>` or `<send>` that fails whenever it runs (an undeclared
or read-only location, `1 = 1`, no such processor, a target that is no URI, a namelist
naming no `<data>`): SCXML raises `error.execution` and skips the rest of its block,
and the chart import-scxml writes does the same."""

from __future__ import annotations

from pathlib import Path

import pytest
from test_import_content import _import, _sent

from statekit.api import load
from statekit.testing import Simulator

FAILING = [
    '<send target="baz" event="e"/>',
    '<send type="27" event="e"/>',
    '<send event="e" namelist="nope"/>',
    '<assign location="nope" expr="1"/>',
    '<assign location="nope.field" expr="1"/>',
    '<assign location="_name" expr="\'x\'"/>',
    '<assign location="n" expr="1 = 1"/>',
]


@pytest.mark.parametrize("failing", FAILING)
def test_an_element_that_always_fails_raises_error_execution_and_ends_its_block(
    failing: str, tmp_path: Path
) -> None:
    body = f"""<datamodel><data id="n" expr="0"/></datamodel>
<state id="s0">
  <onentry>{failing}<assign location="n" expr="1"/></onentry>
  <onentry><assign location="n" expr="n + 10"/></onentry>
  <transition event="error.execution" cond="n == 10" target="pass"/>
  <transition event="*" target="fail"/>
</state>
"""
    code, stderr, chart = _import(tmp_path, body)
    assert code == 0, stderr
    assert "chart.scxml:4:" in stderr and "before it fails" in stderr
    assert chart is not None
    simulator = Simulator(load(tmp_path / "chart.yaml"))
    assert simulator.state.configuration == {"pass"}


def test_a_send_to_a_processor_statekit_lacks_is_still_refused(tmp_path: Path) -> None:
    processor = "http://example.com/scxml/#SomeOtherEventProcessor"
    body = _sent("", "true").replace('<send event="e">', f'<send event="e" type="{processor}">')
    code, stderr, _ = _import(tmp_path, body)
    assert code == 2 and "<send> with type is not expressible" in stderr


def test_an_expression_statekit_cannot_translate_is_still_refused(tmp_path: Path) -> None:
    body = """<datamodel><data id="n" expr="'a'"/></datamodel>
<state id="s0"><onentry><assign location="n" expr="n.upper()"/></onentry></state>
"""
    code, stderr, _ = _import(tmp_path, body)
    assert code == 2 and "member access" in stderr


def test_a_data_whose_expr_is_no_expression_is_unset_and_raises_at_the_start(
    tmp_path: Path,
) -> None:
    body = """<datamodel><data id="v" expr="1 = 1"/></datamodel>
<state id="s0">
  <onentry><raise event="first"/></onentry>
  <transition event="error.execution" target="s1"/>
  <transition event="*" target="fail"/>
</state>
<state id="s1">
  <onentry><assign location="v" expr="2"/></onentry>
  <transition cond="v == 2" target="pass"/>
</state>
"""
    code, stderr, chart = _import(tmp_path, body)
    assert code == 0, stderr
    assert "chart.scxml:2:" in stderr and "<data> left unset" in stderr
    assert chart is not None
    assert chart["context"] == {"v": {"type": "integer", "nullable": True, "default": None}}
    assert Simulator(load(tmp_path / "chart.yaml")).state.configuration == {"pass"}
