"""import-scxml and lists: a `<data>` of a list literal is a list field, and `<foreach>`
is statekit's `foreach` whose body first gives SCXML's `item`/`index` `<data>` the
element and its position (declaring them when no `<data>` does)."""

from __future__ import annotations

from pathlib import Path

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


def test_a_failing_element_inside_foreach_is_refused(tmp_path: Path) -> None:
    body = """<datamodel><data id="xs" expr="[1, 2]"/><data id="x"/></datamodel>
<state id="s0">
  <onentry><foreach array="xs" item="x"><assign location="nope" expr="1"/></foreach></onentry>
</state>
"""
    code, stderr, _ = _import(tmp_path, body)
    assert code == 2
    assert "chart.scxml:4:" in stderr and "inside <foreach>: not expressible" in stderr
