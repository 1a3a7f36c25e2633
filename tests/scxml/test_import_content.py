"""import-scxml and a `<send>`'s `<content>`: sent as the payload field `content`,
read by `_event.data` as a whole; XML or JSON bodies, and `<content>` beside
`<param>`, refused at their position."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml
from cli_process import statekit

from statekit.api import load
from statekit.testing import Simulator

HEAD = '<scxml xmlns="http://www.w3.org/2005/07/scxml" version="1.0" initial="s0">\n'
TAIL = '<final id="pass"/><final id="fail"/></scxml>\n'


def _import(tmp_path: Path, body: str) -> tuple[int, str, dict[str, object] | None]:
    source = tmp_path / "chart.scxml"
    source.write_text(HEAD + body + TAIL, encoding="utf-8")
    out = tmp_path / "chart.yaml"
    result = statekit("import-scxml", str(source), "-o", str(out))
    chart = yaml.safe_load(out.read_text("utf-8")) if result.returncode == 0 else None
    return result.returncode, result.stderr, chart


def _sent(content: str, cond: str) -> str:
    return f"""<datamodel><data id="n" expr="41"/></datamodel>
<state id="s0">
  <onentry><send event="e">{content}</send></onentry>
  <transition event="e" cond="{cond}" target="pass"/>
  <transition event="*" target="fail"/>
</state>
"""


@pytest.mark.parametrize(
    ("content", "cond", "declared"),
    [
        ("<content>123</content>", "_event.data == 123", "integer"),
        ("<content>\n  two\n   words  </content>", "_event.data == 'two words'", "string"),
        ('<content expr="n + 1"/>', "_event.data == 42", "integer"),
        ("<content>it's</content>", "_event.data == &quot;it's&quot;", "string"),
    ],
)
def test_content_is_the_field_content_that_event_data_reads(
    content: str, cond: str, declared: str, tmp_path: Path
) -> None:
    code, stderr, chart = _import(tmp_path, _sent(content, cond))
    assert code == 0, stderr
    assert chart is not None and chart["events"] == {"e": {"content": declared}}
    simulator = Simulator(load(tmp_path / "chart.yaml"))
    assert simulator.state.configuration == {"pass"}


def test_content_that_does_not_match_fails_the_condition(tmp_path: Path) -> None:
    code, stderr, _ = _import(tmp_path, _sent("<content>124</content>", "_event.data == 123"))
    assert code == 0, stderr
    assert Simulator(load(tmp_path / "chart.yaml")).state.configuration == {"fail"}


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ("<content><book/></content>", "<send> with XML <content>: an XML (DOM) value"),
        ('<content>{"a": {"b": 1}}</content>', "a JSON object: a record value"),
        ('<param name="p" expr="1"/><content>1</content>', "<content> and <param> or namelist"),
    ],
)
def test_xml_content_a_record_or_content_beside_params_is_refused(
    content: str, message: str, tmp_path: Path
) -> None:
    code, stderr, _ = _import(tmp_path, _sent(content, "true"))
    assert code == 2
    assert "chart.scxml:4:" in stderr and "error[scxml]" in stderr and message in stderr


def test_data_as_a_whole_of_an_event_without_content_is_a_compile_error(tmp_path: Path) -> None:
    body = """<state id="s0">
  <onentry><send event="e"><param name="p" expr="1"/></send></onentry>
  <transition event="e" cond="_event.data == 1" target="pass"/>
</state>
"""
    code, stderr, _ = _import(tmp_path, body)
    assert code == 0, stderr
    result = statekit("lint", str(tmp_path / "chart.yaml"))
    assert result.returncode != 0
    assert "event e has no field 'content'" in result.stdout
