"""import-scxml and the datamodel: `<data>` without a value typed by what is written to
it, constant `<data>` expressions, `_name`, `cond` on one `<data>`, and `<send>`'s
event, id and delay computed from constants."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml
from cli_process import statekit

from statekit.api import load
from statekit.testing import Simulator

HEAD = '<scxml xmlns="http://www.w3.org/2005/07/scxml" version="1.0" initial="s0" name="machine">\n'
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


def test_data_without_a_value_takes_the_type_of_what_is_assigned(tmp_path: Path) -> None:
    body = """<datamodel><data id="n"/><data id="m"/></datamodel>
<state id="s0">
  <transition cond="n" target="fail"/>
  <transition target="s1"><assign location="m" expr="n"/><assign location="n" expr="2"/>
  </transition>
</state>
<state id="s1"><transition cond="n == 2 &amp;&amp; m == null" target="pass"/></state>
"""
    assert _ends_in(tmp_path, body) == {"pass"}
    _, _, chart = _import(tmp_path, body)
    assert chart is not None
    assert chart["context"] == {
        "n": {"type": "integer", "nullable": True, "default": None},
        "m": {"type": "integer", "nullable": True, "default": None},
    }


def test_writes_of_two_types_are_refused_at_the_later_one(tmp_path: Path) -> None:
    body = """<datamodel><data id="v"/></datamodel>
<state id="s0">
  <onentry><assign location="v" expr="1"/></onentry>
  <transition target="pass"><assign location="v" expr="'one'"/></transition>
</state>
"""
    code, stderr, _ = _import(tmp_path, body)
    assert code == 2
    assert (
        "chart.scxml:5:29: error[scxml] <data id='v'> with no value is written a string here "
        "and a integer at line 4, column 12: one type is needed" in stderr
    )


def test_an_integer_and_a_number_make_a_number(tmp_path: Path) -> None:
    body = """<datamodel><data id="v"/></datamodel>
<state id="s0">
  <onentry><assign location="v" expr="1"/><assign location="v" expr="0.5"/></onentry>
  <transition cond="v == 0.5" target="pass"/>
</state>
"""
    assert _ends_in(tmp_path, body) == {"pass"}


CONSTANTS = [
    ('<data id="a" expr="2"/><data id="b" expr="a * 3 + 1"/>', "b == 7"),
    ('<data id="a" expr="\'x\'"/><data id="b" expr="a + \'y\'"/>', "b == 'xy'"),
    ('<data id="a" expr="_name"/>', "a == 'machine'"),
    ('<data id="a" expr="1 &lt; 2"/>', "a"),
]


@pytest.mark.parametrize(("data", "cond"), CONSTANTS)
def test_data_computed_from_constants_gets_its_value(data: str, cond: str, tmp_path: Path) -> None:
    body = f"""<datamodel>{data}</datamodel>
<state id="s0"><transition cond="{cond}" target="pass"/><transition target="fail"/></state>
"""
    assert _ends_in(tmp_path, body) == {"pass"}


@pytest.mark.parametrize(
    ("value", "cond_is_true"),
    [("0", False), ("3", True), ("''", False), ("'x'", True), ("false", False), ("true", True)],
)
def test_a_cond_of_one_data_is_its_value_as_a_boolean(
    value: str, cond_is_true: bool, tmp_path: Path
) -> None:
    body = f"""<datamodel><data id="v" expr="{value}"/></datamodel>
<state id="s0"><transition cond="v" target="pass"/><transition target="fail"/></state>
"""
    assert _ends_in(tmp_path, body) == ({"pass"} if cond_is_true else {"fail"})


def test_send_event_id_and_delay_from_constants(tmp_path: Path) -> None:
    body = """<datamodel>
  <data id="name" expr="'late'"/><data id="wait" expr="'1.5s'"/><data id="tag" expr="'t1'"/>
</datamodel>
<state id="s0">
  <onentry>
    <send eventexpr="name" delayexpr="wait" id="t1"/>
    <send event="early" delayexpr="'.5s'"/>
  </onentry>
  <transition event="early" target="s1"/>
  <transition event="late" target="fail"/>
</state>
<state id="s1">
  <onentry><cancel sendidexpr="tag"/><send event="done" delay="2s"/></onentry>
  <transition event="late" target="fail"/>
  <transition event="done" target="pass"/>
</state>
"""
    assert _ends_in(tmp_path, body) == {"pass"}
    _, _, chart = _import(tmp_path, body)
    assert chart is not None
    entry = chart["states"]["s0"]["entry"]  # type: ignore[index]
    assert entry[0] == {"send": {"event": "late", "delay": "1500ms", "id": "t1"}}
    assert entry[1] == {"send": {"event": "early", "delay": "500ms"}}


def test_a_data_given_only_constants_sends_by_its_value(tmp_path: Path) -> None:
    body = """<datamodel><data id="e" expr="'a'"/><data id="d" expr="'2s'"/></datamodel>
<state id="s0">
  <onentry><assign location="e" expr="'b'"/><assign location="d" expr="'1s'"/>
    <send eventexpr="e"/><send event="late" delayexpr="d"/><send event="later" delay="1500ms"/>
  </onentry>
  <transition event="a" target="fail"/><transition event="b" target="s1"/>
</state>
<state id="s1"><transition event="late" target="s2"/><transition event="later" target="fail"/>
</state>
<state id="s2"><transition event="later" target="pass"/></state>
"""
    assert _ends_in(tmp_path, body) == {"pass"}
    _, _, chart = _import(tmp_path, body)
    assert chart is not None
    entry = chart["states"]["s0"]["entry"]  # type: ignore[index]
    assert entry[2] == {
        "if": {
            "cond": "ctx.e == 'a'",
            "then": [{"send": {"event": "a"}}],
            "elif": [{"cond": "ctx.e == 'b'", "then": [{"send": {"event": "b"}}]}],
        }
    }


def test_a_data_given_a_computed_value_is_no_constant_for_a_send(tmp_path: Path) -> None:
    body = """<datamodel><data id="e" expr="'a'"/></datamodel>
<state id="s0">
  <transition event="a" target="s1"><assign location="e" expr="_event.name"/></transition>
</state>
<state id="s1"><onentry><send eventexpr="e"/></onentry></state>
"""
    code, stderr, _ = _import(tmp_path, body)
    assert code == 2
    assert "chart.scxml:6:25: error[scxml] <send eventexpr='e'>: not a constant" in stderr


def test_idlocation_stores_the_sends_id(tmp_path: Path) -> None:
    body = """<datamodel><data id="sid"/></datamodel>
<state id="s0">
  <onentry><send event="e" delay="1s" idlocation="sid"/></onentry>
  <transition cond="sid" target="s1"/>
</state>
<state id="s1">
  <onentry><cancel sendidexpr="'send_4_12'"/><send event="f" delay="2s"/></onentry>
  <transition event="e" target="fail"/><transition event="f" target="pass"/>
</state>
"""
    assert _ends_in(tmp_path, body) == {"pass"}


def test_if_elseif_else_runs_the_first_branch_that_holds(tmp_path: Path) -> None:
    body = """<datamodel><data id="n" expr="2"/><data id="out" expr="''"/></datamodel>
<state id="s0">
  <onentry>
    <if cond="n == 1"><assign location="out" expr="'one'"/>
    <elseif cond="n == 2"/><assign location="out" expr="'two'"/><raise event="checked"/>
    <else/><assign location="out" expr="'many'"/>
    </if>
  </onentry>
  <transition event="checked" cond="out == 'two'" target="pass"/>
  <transition event="checked" target="fail"/>
</state>
"""
    assert _ends_in(tmp_path, body) == {"pass"}


def test_event_name_type_and_data_are_read_by_the_transition(tmp_path: Path) -> None:
    body = """<datamodel><data id="seen"/></datamodel>
<state id="s0">
  <onentry><raise event="a.b"/></onentry>
  <transition event="a" cond="_event.name == 'a.b' &amp;&amp; _event.type == 'internal'"
      target="s1"><assign location="seen" expr="_event.name"/>
  </transition>
  <transition event="a" target="fail"/>
</state>
<state id="s1">
  <onentry><raise event="c"/></onentry>
  <transition event="c" cond="!_event.origin" target="pass"/>
  <transition event="c" target="fail"/>
</state>
"""
    assert _ends_in(tmp_path, body) == {"pass"}
    _, _, chart = _import(tmp_path, body)
    assert chart is not None
    seen = chart["context"]["seen"]  # type: ignore[index]
    assert seen == {"type": "string", "nullable": True, "default": None}


def test_send_params_and_namelist_are_the_events_payload(tmp_path: Path) -> None:
    body = """<datamodel><data id="n" expr="3"/><data id="got"/></datamodel>
<state id="s0">
  <onentry>
    <send event="e" namelist="n"><param name="label" expr="'x'"/></send>
    <send event="e"><param name="n" expr="4"/></send>
  </onentry>
  <transition event="e" cond="_event.data.n == 3 &amp;&amp; _event.data.label == 'x'" target="s1"/>
  <transition event="e" target="fail"/>
</state>
<state id="s1">
  <transition event="e" target="pass"><assign location="got" expr="_event.data.get('n')"/>
  </transition>
</state>
"""
    assert _ends_in(tmp_path, body) == {"pass"}
    _, _, chart = _import(tmp_path, body)
    assert chart is not None
    assert chart["events"] == {  # label is not in every send: optional
        "e": {"n": "integer", "label": {"type": "string", "nullable": True, "default": None}}
    }
    assert chart["context"]["got"] == {  # type: ignore[index]
        "type": "integer",
        "nullable": True,
        "default": None,
    }


def test_one_data_field_of_two_types_is_refused(tmp_path: Path) -> None:
    body = """<state id="s0">
  <onentry><send event="e"><param name="v" expr="1"/></send>
    <send event="e"><param name="v" expr="'one'"/></send></onentry>
</state>
"""
    code, stderr, _ = _import(tmp_path, body)
    assert code == 2
    assert "<send event='e'>: its data 'v' is a string here and a integer" in stderr


def test_an_evaluation_error_raises_error_execution(tmp_path: Path) -> None:
    body = """<datamodel><data id="n" expr="0.5"/></datamodel>
<state id="s0">
  <onentry><assign location="n" expr="1 / (n - 0.5)"/></onentry>
  <transition event="error" target="s1"/>
</state>
<state id="s1"><transition cond="n == 0.5" target="pass"/><transition target="fail"/></state>
"""
    assert _ends_in(tmp_path, body) == {"pass"}
    _, _, chart = _import(tmp_path, body)
    assert chart is not None
    assert chart["on_evaluation_error"] == "raise"


@pytest.mark.parametrize(
    ("cond", "holds"),
    [("v is None", True), ("v is not None", False)],
)
def test_python_null_tests_are_statekits(cond: str, holds: bool, tmp_path: Path) -> None:
    body = f"""<datamodel><data id="v"/></datamodel>
<state id="s0"><transition cond="{cond}" target="pass"/><transition target="fail"/></state>
"""
    assert _ends_in(tmp_path, body) == ({"pass"} if holds else {"fail"})


def test_is_other_than_a_null_test_is_refused_by_name(tmp_path: Path) -> None:
    body = """<datamodel><data id="w" expr="3"/></datamodel>
<state id="s0"><transition cond="w is 3" target="pass"/><transition target="fail"/></state>
"""
    code, stderr, _ = _import(tmp_path, body)
    assert code == 2 and "chart.scxml:3:" in stderr and "'is' other than 'is None'" in stderr
