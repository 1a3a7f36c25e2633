"""import-scxml and the structure statekit's keys do not say one for one: an initial of
several states, of a history or with content (a transient state), a history's default
with content, an internal transition to a descendant (written on each child),
`done.state.<id>` on another state than `<id>`, `In()` of a history."""

from __future__ import annotations

from pathlib import Path

import pytest
from cli_process import statekit

from statekit.api import load
from statekit.testing import Simulator

HEAD = '<scxml xmlns="http://www.w3.org/2005/07/scxml" version="1.0" initial="s0">\n'
TAIL = '<final id="pass"/><final id="fail"/></scxml>\n'


def _run(tmp_path: Path, body: str, *events: str) -> tuple[Simulator, str]:
    source = tmp_path / "chart.scxml"
    source.write_text(HEAD + body + TAIL, encoding="utf-8")
    out = tmp_path / "chart.yaml"
    result = statekit("import-scxml", str(source), "-o", str(out))
    assert result.returncode == 0, result.stderr
    simulator = Simulator(load(out))
    for event in events:
        simulator.send(event)
    return simulator, result.stderr


def _refused(tmp_path: Path, body: str) -> str:
    source = tmp_path / "chart.scxml"
    source.write_text(HEAD + body + TAIL, encoding="utf-8")
    result = statekit("import-scxml", str(source))
    assert result.returncode == 2
    return result.stderr


def test_an_initial_of_several_states_enters_them_all(tmp_path: Path) -> None:
    body = """<state id="s0" initial="a2 b2">
  <parallel id="p">
    <state id="a"><state id="a1"/><state id="a2"/></state>
    <state id="b"><state id="b1"/><state id="b2"/></state>
  </parallel>
</state>
"""
    simulator, stderr = _run(tmp_path, body)
    assert {"s0.p.a.a2", "s0.p.b.b2"} <= simulator.state.configuration
    assert "note[scxml] the initial is the transient state 's0__initial'" in stderr


def test_initial_content_runs_after_the_parents_entry_before_the_childs(
    tmp_path: Path,
) -> None:
    body = """<datamodel><data id="log" expr="''"/></datamodel>
<state id="s0">
  <onentry><assign location="log" expr="log + 'p'"/></onentry>
  <initial><transition target="c"><assign location="log" expr="log + 'i'"/></transition></initial>
  <state id="c">
    <onentry><assign location="log" expr="log + 'c'"/></onentry>
    <transition cond="log == 'pic'" target="pass"/>
  </state>
</state>
"""
    simulator, _ = _run(tmp_path, body)
    assert simulator.state.configuration == {"pass"}


def test_a_history_as_the_initial_and_its_default_content(tmp_path: Path) -> None:
    body = """<datamodel><data id="n" expr="0"/></datamodel>
<state id="s0">
  <initial><transition target="h"/></initial>
  <history id="h" type="shallow">
    <transition target="b"><assign location="n" expr="n + 1"/></transition>
  </history>
  <state id="a"><transition event="next" target="b"/></state>
  <state id="b"><transition event="next" target="a"/></state>
  <transition event="out" target="s1"/>
</state>
<state id="s1">
  <transition event="back" target="h"/>
  <transition event="check" cond="n == 1 &amp;&amp; !In('h')" target="pass"/>
</state>
"""
    simulator, _ = _run(tmp_path, body, "next", "out", "back")
    assert "s0.a" in simulator.state.configuration  # restored, the default not taken again
    simulator.send("out")
    simulator.send("check")
    assert simulator.state.configuration == {"pass"}


def test_an_internal_transition_does_not_leave_its_source(tmp_path: Path) -> None:
    body = """<datamodel><data id="left" expr="0"/></datamodel>
<state id="s0" initial="a">
  <onexit><assign location="left" expr="left + 1"/></onexit>
  <transition event="go" type="internal" target="b"/>
  <transition event="check" cond="left == 0" target="pass"/>
  <state id="a"/>
  <state id="b"/>
</state>
"""
    simulator, _ = _run(tmp_path, body, "go")
    assert "s0.b" in simulator.state.configuration
    simulator.send("check")
    assert simulator.state.configuration == {"pass"}


def test_a_childs_own_transition_keeps_priority_over_the_internal_one(tmp_path: Path) -> None:
    body = """<state id="s0" initial="a">
  <transition event="go" type="internal" target="b"/>
  <state id="a"><transition event="go" target="pass"/></state>
  <state id="b"/>
</state>
"""
    simulator, _ = _run(tmp_path, body, "go")
    assert simulator.state.configuration == {"pass"}


@pytest.mark.parametrize(
    ("body", "said"),
    [
        (
            '<state id="s0"><transition event="go" target="fail"/>'
            '<transition event="go" type="internal" target="a"/><state id="a"/></state>',
            "an internal transition after another on the same event",
        ),
        (
            '<state id="s0"><transition event="go" type="internal" target="a"/>'
            '<state id="a"/><final id="f"/></state>',
            "an internal transition to a descendant of a state with a <final>",
        ),
        (
            '<state id="s0"><transition event="done.state.a" target="fail"/>'
            '<state id="a"/></state>',
            "event 'done.state.a': no compound or parallel state has that id",
        ),
    ],
)
def test_what_would_change_the_meaning_is_refused(body: str, said: str, tmp_path: Path) -> None:
    assert said in _refused(tmp_path, body)


def test_done_of_a_descendant_on_an_ancestor(tmp_path: Path) -> None:
    body = """<state id="s0" initial="c">
  <transition event="done.state.c" target="pass"/>
  <state id="c"><state id="c1"><transition event="end" target="cf"/></state>
    <final id="cf"/></state>
</state>
"""
    simulator, _ = _run(tmp_path, body, "end")
    assert simulator.state.configuration == {"pass"}


def test_done_of_a_descendant_on_an_ancestor_to_a_target_inside_it(tmp_path: Path) -> None:
    body = """<datamodel><data id="rounds" expr="0"/></datamodel>
<state id="s0" initial="c">
  <transition event="done.state.c" cond="rounds == 0" target="c">
    <assign location="rounds" expr="rounds + 1"/>
  </transition>
  <transition event="done.state.c" target="pass"/>
  <state id="c"><state id="c1"><transition event="end" target="cf"/></state>
    <final id="cf"/></state>
</state>
"""
    simulator, _ = _run(tmp_path, body, "end")
    assert "s0.c.c1" in simulator.state.configuration  # c entered again, at its initial
    simulator.send("end")
    assert simulator.state.configuration == {"pass"}


def test_done_of_a_state_handled_after_it_was_left(tmp_path: Path) -> None:
    """The event raised before the done event leaves `c`; `s1` takes `done.state.c`."""
    body = """<state id="s0" initial="c">
  <transition event="left" target="s1"/>
  <transition event="done.state.c" target="fail"/>
  <state id="c"><state id="c1"><transition event="end" target="cf"/></state>
    <final id="cf"><onentry><raise event="left"/></onentry></final></state>
</state>
<state id="s1"><transition event="done.state.c" target="pass"/></state>
"""
    simulator, _ = _run(tmp_path, body, "end")
    assert simulator.state.configuration == {"pass"}
