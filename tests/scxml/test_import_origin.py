"""import-scxml of what SCXML's processors give a document: a `<send>` whose `targetexpr`
is `_event.origin` (or a `<data>` given it) is a send to that address, which statekit
resolves when it runs (the sender itself here: an instance alone); `_ioprocessors` as a
whole is `instance.processors`, a record that is set, equal to itself and never assigned.
What the translation cannot say is refused at the element."""

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


def _ends_in(tmp_path: Path, body: str) -> frozenset[str]:
    code, stderr, _ = _import(tmp_path, body)
    assert code == 0, stderr
    simulator = Simulator(load(tmp_path / "chart.yaml"))
    simulator.advance(60_000)
    return simulator.state.configuration


ANSWER = """<datamodel><data id="asker"/></datamodel>
<state id="s0">
  <onentry><send event="ask"/></onentry>
  <transition event="ask" target="s1">
    <assign location="asker" expr="_event.origin"/>
    <send event="answer" targetexpr="TARGET"/>
  </transition>
  <transition event="*" target="fail"/>
</state>
<state id="s1">
  <transition event="answer" target="pass"/>
  <transition event="*" target="fail"/>
</state>
"""


@pytest.mark.parametrize("target", ["_event.origin", "asker"])
def test_a_send_to_the_origin_reaches_the_sender(tmp_path: Path, target: str) -> None:
    assert _ends_in(tmp_path, ANSWER.replace("TARGET", target)) == {"pass"}
    _, _, chart = _import(tmp_path, ANSWER.replace("TARGET", target))
    assert chart is not None
    ask = chart["states"]["s0"]["on"]["ask"][0]  # type: ignore[index]
    written = "_event.origin" if target == "_event.origin" else "ctx.asker"
    assert {"send": {"event": "answer", "to": {"address": written}}} in ask["do"]


@pytest.mark.parametrize(
    ("attributes", "named"),
    [
        ('typeexpr="_event.name"', "typeexpr"),
        ('delay="1s"', "a delay or an id"),
        ('id="later"', "a delay or an id"),
    ],
)
def test_what_a_send_to_the_origin_cannot_say_is_refused(
    tmp_path: Path, attributes: str, named: str
) -> None:
    body = ANSWER.replace('targetexpr="TARGET"', f'targetexpr="_event.origin" {attributes}')
    code, stderr, _ = _import(tmp_path, body)
    assert code != 0 and named in stderr and "chart.scxml:7:" in stderr, stderr


PROCESSORS = """<datamodel><data id="p" expr="_ioprocessors"/><data id="q"/></datamodel>
<state id="s0">
  <transition cond="p" target="s1"/>
  <transition target="fail"/>
</state>
<state id="s1">
  <onentry><assign location="_ioprocessors" expr="'x'"/></onentry>
  <transition event="error.execution" target="s2"/>
  <transition event="*" target="fail"/>
</state>
<state id="s2">
  <onentry><assign location="q" expr="_ioprocessors"/></onentry>
  <transition cond="p == q &amp;&amp; q['scxml']['location'] == LOCATION" target="pass"/>
  <transition target="fail"/>
</state>
"""


def test_ioprocessors_is_a_read_only_record(tmp_path: Path) -> None:
    body = PROCESSORS.replace(" &amp;&amp; q['scxml']['location'] == LOCATION", "")
    assert _ends_in(tmp_path, body) == {"pass"}
    _, _, chart = _import(tmp_path, body)
    assert chart is not None
    context = chart["context"]
    location = {"type": "record", "fields": {"location": {"type": "string", "default": ""}}}
    record = {"type": "record", "fields": {"scxml": location}, "nullable": True, "default": None}
    assert context == {"p": record, "q": record}
    assert chart["states"]["s0"]["always"][0]["if"] == "ctx.p is not None"  # type: ignore[index]


def test_member_access_on_ioprocessors_is_refused_at_the_element(tmp_path: Path) -> None:
    body = PROCESSORS.replace('expr="_ioprocessors"/><data id="q"/>', 'expr="_ioprocessors.x"/>')
    code, stderr, _ = _import(tmp_path, body)
    assert code != 0 and "_ioprocessors" in stderr and "chart.scxml:2:" in stderr, stderr
