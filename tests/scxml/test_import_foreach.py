"""import-scxml and lists: a `<data>` of a list literal is a list field, and `<foreach>`
is statekit's `foreach` whose body first gives SCXML's `item`/`index` `<data>` the
element and its position (declaring them when no `<data>` does)."""

from __future__ import annotations

from pathlib import Path
from xml.sax.saxutils import escape

import pytest
from test_import_content import _import

from statekit.api import load
from statekit.testing import Simulator


def _ends_in(tmp_path: Path, body: str) -> tuple[frozenset[str], dict[str, object]]:
    code, stderr, chart = _import(tmp_path, body)
    assert code == 0, stderr
    assert chart is not None
    simulator = Simulator(load(tmp_path / "chart.yaml"))
    return simulator.state.configuration, dict(simulator.state.context)


def test_foreach_sums_a_list_and_leaves_item_and_index_at_the_last(tmp_path: Path) -> None:
    body = """<datamodel><data id="total" expr="0"/><data id="xs">[4, 5, 6]</data>
<data id="x"/></datamodel>
<state id="s0">
  <onentry>
    <foreach array="xs" item="x" index="i"><assign location="total" expr="total + x * i"/></foreach>
  </onentry>
  <transition cond="total == 17 &amp;&amp; x == 6 &amp;&amp; i == 2" target="pass"/>
  <transition target="fail"/>
</state>
"""
    configuration, context = _ends_in(tmp_path, body)
    assert configuration == {"pass"}
    assert context["xs"] == [4, 5, 6]
    _, _, chart = _import(tmp_path, body)
    assert chart is not None and isinstance(chart["context"], dict)
    assert chart["context"]["xs"] == {"type": "list", "items": "integer", "default": [4, 5, 6]}


@pytest.mark.parametrize(
    ("array", "count", "after", "end"),
    [("[1, 2]", 1, 0, "s1"), ("[7]", 1, 0, "s1"), ("[3] + []", 0, 1, "s2")],
)
def test_a_foreach_whose_body_always_fails_runs_its_first_item_then_raises(
    array: str, count: int, after: int, end: str, tmp_path: Path
) -> None:
    """SCXML runs the body up to the failing element once, raises error.execution and
    stops the block around the loop; over an empty array nothing fails."""
    empty = '<assign location="xs" expr="[]"/>' if "+" in array else ""
    array = array.split(" +")[0]
    body = f"""<datamodel><data id="xs" expr="{array}"/><data id="x"/><data id="n" expr="0"/>
<data id="after" expr="0"/></datamodel>
<state id="s0">
  <onentry>{empty}<foreach array="xs" item="x" index="i"><assign location="n" expr="n + 1"/>
  <assign location="nope" expr="1"/><assign location="n" expr="n + 10"/></foreach>
  <assign location="after" expr="1"/><raise event="next"/></onentry>
  <transition event="error.execution" target="s1"/><transition event="next" target="s2"/>
</state><state id="s1"/><state id="s2"/>
"""
    configuration, context = _ends_in(tmp_path, body)
    assert configuration == {end}
    assert (context["n"], context["after"]) == (count, after)
    if count:
        assert (context["x"], context["i"]) == (int(array[1]), 0)


@pytest.mark.parametrize(
    ("foreach", "reason"),
    [
        ('item="\'continue\'" array="xs"', "<foreach item='continue'>: not a variable name"),
        ('item="x" index="1i" array="xs"', "<foreach index=1i>: not a variable name"),
        ('item="x" array="seven"', "<foreach array=seven>: integer, not an array"),
    ],
)
def test_a_foreach_that_always_fails_raises_error_execution(
    foreach: str, reason: str, tmp_path: Path
) -> None:
    body = f"""<datamodel><data id="xs" expr="[1, 2]"/><data id="seven" expr="7"/>
<data id="n" expr="0"/></datamodel>
<state id="s0">
  <onentry><foreach {foreach}><assign location="n" expr="n + 1"/></foreach>
  <raise event="next"/></onentry>
  <transition event="error.execution" cond="_event.data.reason == &quot;{escape(reason)}&quot;"
   target="s1"/><transition event="*" target="s2"/>
</state><state id="s1"/><state id="s2"/>
"""
    configuration, context = _ends_in(tmp_path, body)
    assert configuration == {"s1"}
    assert context["n"] == 0


def test_a_failing_element_inside_foreach_inside_if_is_refused(tmp_path: Path) -> None:
    body = """<datamodel><data id="xs" expr="[1, 2]"/><data id="x"/></datamodel>
<state id="s0">
  <onentry><if cond="true"><foreach array="xs" item="x"><assign location="nope" expr="1"/>
  </foreach></if></onentry>
</state>
"""
    code, stderr, _ = _import(tmp_path, body)
    assert code == 2
    assert "chart.scxml:4:" in stderr and "inside <foreach>: not expressible" in stderr
