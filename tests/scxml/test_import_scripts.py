"""import-scxml and `<script>`: a body of assignments is `assign` effects (a top-level
script's at the start), anything else is refused at its statement; `binding="late"`
binds a state's `<data>` on its first entry; a `<data>` that is always null takes the
type of what the document compares it with."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from cli_process import statekit

from statekit.api import load
from statekit.scxml import ScxmlError, chart_of, chart_yaml, read_scxml
from statekit.testing import Simulator

HEAD = '<scxml xmlns="http://www.w3.org/2005/07/scxml" version="1.0" initial="s0"{binding}>\n'
TAIL = '<final id="pass"/><final id="fail"/></scxml>\n'


def _chart(tmp_path: Path, body: str, binding: str = "") -> dict[str, Any]:
    source = tmp_path / "chart.scxml"
    source.write_text(HEAD.format(binding=binding) + body + TAIL, encoding="utf-8")
    translation = chart_of(read_scxml(source), str(source), "chart")
    (tmp_path / "chart.yaml").write_text(chart_yaml(translation), encoding="utf-8")
    return translation.chart


def _simulator(tmp_path: Path, body: str, binding: str = "") -> Simulator:
    _chart(tmp_path, body, binding)
    return Simulator(load(tmp_path / "chart.yaml"))


def _refusal(tmp_path: Path, body: str, binding: str = "") -> ScxmlError:
    with pytest.raises(ScxmlError) as caught:
        _chart(tmp_path, body, binding)
    return caught.value


DATA = '<datamodel><data id="n" expr="12"/><data id="x" expr="1.5"/></datamodel>\n'

ASSIGNMENTS = [
    ("n = 7", [{"n": "7"}], 7),
    ("n += 2", [{"n": "ctx.n + 2"}], 14),
    ("n -= 2 - 1", [{"n": "ctx.n - (2 - 1)"}], 11),
    ("n -= 2", [{"n": "ctx.n - 2"}], 10),
    ("n *= 2", [{"n": "ctx.n * 2"}], 24),
    ("n //= 5", [{"n": "ctx.n // 5"}], 2),
    ("n %= 5", [{"n": "ctx.n % 5"}], 2),
    ("x /= 2", [{"x": "ctx.x / 2"}], 12),
    ("n = n + 1; n = n * 2", [{"n": "ctx.n + 1"}, {"n": "ctx.n * 2"}], 26),
    ("\n      n = 1\n      n += n * 3\n    ", [{"n": "1"}, {"n": "ctx.n + ctx.n * 3"}], 4),
    ("n = (1 +\n  2)", [{"n": "1 + 2"}], 3),
    ("", [], 12),
]


@pytest.mark.parametrize(("script", "assigns", "n"), ASSIGNMENTS)
def test_a_script_of_assignments_is_assign_effects_in_order(
    script: str, assigns: list[dict[str, str]], n: int, tmp_path: Path
) -> None:
    body = f'{DATA}<state id="s0"><onentry><script>{script}</script></onentry></state>\n'
    chart = _chart(tmp_path, body)
    assert chart["states"]["s0"].get("entry", []) == [{"assign": a} for a in assigns]
    context = Simulator(load(tmp_path / "chart.yaml")).state.context
    assert context["n"] == n


REFUSED = [
    ("print(n)", 3, 33, "<script> `print(n)`: a call is not translated"),
    ("import os", 3, 33, "<script> `import os`: an import is not translated"),
    ("def f():\n    return 1", 3, 33, "<script> `def f():...`: a function definition"),
    ("class A:\n    bar = 0", 3, 33, "<script> `class A:...`: a class definition"),
    ("if n:\n    n = 1", 3, 33, "<script> `if n:...`: an if statement is not translated"),
    ("for i in []:\n    n = i", 3, 33, "<script> `for i in []:...`: a loop is not translated"),
    ("n.x = 1", 3, 33, "<script> `n.x = 1`: an assignment to a part of a value"),
    ("n = x = 1", 3, 33, "<script> `n = x = 1`: an assignment to several targets"),
    ("n **= 2", 3, 33, "<script> `n **= 2`: an assignment with another operator"),
    ("n", 3, 33, "<script> `n`: an expression statement is not translated"),
    ("\n  n = 1\n  n = 2\n  import os\n", 6, 3, "<script> `import os`: an import"),
    ("n = 1; import os", 3, 40, "<script> `import os`: an import"),
    ("var y = 1;", 3, 37, "<script>: not Python statements (invalid syntax)"),
    ("_event = 1", 3, 33, "<script> `_event = 1`: _event is read-only here"),
    ("n = foo(1)", 3, 33, "<script expr='foo(1)'>: a call (foo(...) is not expressible"),
]


@pytest.mark.parametrize(("script", "line", "column", "message"), REFUSED)
def test_a_script_other_than_assignments_is_refused_at_its_statement(
    script: str, line: int, column: int, message: str, tmp_path: Path
) -> None:
    body = f'<state id="s0"><onentry><script>{script}</script></onentry></state>\n'
    error = _refusal(tmp_path, DATA + body)
    assert (error.line, error.column) == (line, column)
    assert error.message.startswith(message), error.message


def test_a_script_from_a_file_is_refused_at_the_element(tmp_path: Path) -> None:
    error = _refusal(tmp_path, '<script src="setup.py"/>\n<state id="s0"/>\n')
    assert (error.line, error.column) == (2, 1)
    assert "<script src='setup.py'>: a script from a file is not translated" in error.message


def test_a_script_stands_where_it_is_in_transitions_ifs_and_loops(tmp_path: Path) -> None:
    body = """<datamodel><data id="total" expr="0"/><data id="xs" expr="[1, 2, 3]"/></datamodel>
<state id="s0">
  <onentry>
    <foreach array="xs" item="item"><script>total += item</script></foreach>
    <if cond="total == 6"><script>total *= 10</script><else/><script>total = -1</script></if>
  </onentry>
  <transition cond="total == 60" target="s1"><script>total = total + 1</script></transition>
  <transition target="fail"/>
</state>
<state id="s1"><transition cond="total == 61" target="pass"/><transition target="fail"/></state>
"""
    assert _simulator(tmp_path, body).state.configuration == {"pass"}


def test_a_script_may_not_assign_the_item_its_loop_reads(tmp_path: Path) -> None:
    body = """<datamodel><data id="xs" expr="[1, 2]"/><data id="item" expr="0"/></datamodel>
<state id="s0"><onentry>
  <foreach array="xs" item="item"><script>item = 1</script></foreach>
</onentry></state>
"""
    error = _refusal(tmp_path, body)
    assert (error.line, error.column) == (4, 43)
    assert "item is read-only here" in error.message


def test_a_name_a_nested_script_assigns_is_declared_null_until_it_runs(tmp_path: Path) -> None:
    body = """<state id="s0">
  <transition cond="made == null" target="s1"/><transition target="fail"/>
</state>
<state id="s1"><onentry><script>made = 3</script></onentry>
  <transition cond="made == 3" target="pass"/><transition target="fail"/>
</state>
"""
    chart = _chart(tmp_path, body)
    assert chart["context"]["made"] == {"type": "integer", "nullable": True, "default": None}
    assert Simulator(load(tmp_path / "chart.yaml")).state.configuration == {"pass"}


def test_a_top_level_script_declares_its_names_with_their_values(tmp_path: Path) -> None:
    body = '<script>Var1 = 1\nlabel = "a" + "b"</script>\n<state id="s0"/>\n'
    chart = _chart(tmp_path, body)
    assert chart["context"] == {
        "Var1": {"type": "integer", "default": 1},
        "label": {"type": "string", "default": "ab"},
    }
    assert chart["initial"] == "s0"  # nothing to assign at the start


def test_a_top_level_script_reassigns_at_the_start_after_the_data(tmp_path: Path) -> None:
    body = """<datamodel><data id="n" expr="1"/><data id="m" expr="n + 1"/></datamodel>
<script>
  n = 5
  k = n * 2
  k += 1
</script>
<state id="s0">
  <transition cond="n == 5 and m == 2 and k == 11" target="pass"/><transition target="fail"/>
</state>
"""
    chart = _chart(tmp_path, body)
    assert chart["initial"] == "scxml__start"
    assert chart["states"]["scxml__start"]["always"][0]["do"] == [
        {"assign": {"n": "5"}},
        {"assign": {"k": "ctx.n * 2"}},
        {"assign": {"k": "ctx.k + 1"}},
    ]
    simulator = Simulator(load(tmp_path / "chart.yaml"))
    assert simulator.state.configuration == {"pass"}
    assert (simulator.state.context["n"], simulator.state.context["k"]) == (5, 11)


def test_a_top_level_script_that_fails_raises_error_execution_and_stops(tmp_path: Path) -> None:
    body = """<script>
  k += 1
  later = 1
</script>
<state id="s0"><transition event="error.execution" target="pass"/></state>
"""
    chart = _chart(tmp_path, body)
    assert "later" not in chart.get("context", {})  # the rest of the script does not run
    simulator = Simulator(load(tmp_path / "chart.yaml"))
    simulator.advance(1000)
    assert simulator.state.configuration == {"pass"}


LATE = """<datamodel><data id="base" expr="10"/><data id="seen"/></datamodel>
<state id="s0"><transition event="go" target="s1"/></state>
<state id="s1">
  <datamodel><data id="v" expr="base"/></datamodel>
  <onentry><assign location="seen" expr="v"/></onentry>
  <transition event="back" target="s0"><assign location="v" expr="5"/></transition>
</state>
"""


def test_late_binding_gives_a_value_on_the_first_entry_only(tmp_path: Path) -> None:
    simulator = _simulator(tmp_path, LATE, ' binding="late"')
    context = simulator.state.context
    assert (context["v"], context["seen"]) == (None, None)  # unbound before s1 is entered
    simulator.send("go")
    assert (simulator.state.context["v"], simulator.state.context["seen"]) == (10, 10)
    simulator.send("back")
    simulator.send("go")  # entered again: not bound again
    assert (simulator.state.context["v"], simulator.state.context["seen"]) == (5, 5)


def test_early_binding_gives_the_value_at_the_start(tmp_path: Path) -> None:
    simulator = _simulator(tmp_path, LATE, ' binding="early"')
    assert simulator.state.context["v"] == 10
    simulator.send("go")
    assert simulator.state.context["seen"] == 10


def test_the_late_binding_flag_takes_a_name_no_data_has(tmp_path: Path) -> None:
    body = LATE.replace('<data id="seen"/>', '<data id="seen"/><data id="s1__bound" expr="1"/>')
    chart = _chart(tmp_path, body, ' binding="late"')
    assert chart["context"]["s1__bound"] == {"type": "integer", "default": 1}
    assert chart["context"]["s1__bound_"] == {"type": "boolean", "default": False}
    entry = chart["states"]["s1"]["entry"]
    assert entry[0] == {
        "if": {
            "cond": "ctx.s1__bound_ == false",
            "then": [{"assign": {"s1__bound_": "true"}}, {"assign": {"v": "ctx.base"}}],
        }
    }


def test_a_binding_other_than_early_or_late_is_refused(tmp_path: Path) -> None:
    error = _refusal(tmp_path, '<state id="s0"/>\n', ' binding="lazy"')
    assert (error.line, error.column) == (1, 1)
    assert error.message == "binding='lazy': SCXML has only 'early' and 'late'"


ALWAYS_NULL = [  # the <data> v, the cond, v's type, whether the cond holds (null == null)
    ('<data id="v"/>', "v == 1", "integer", False),
    ('<data id="v"/>', "2.5 != v", "number", True),
    ('<data id="v"/>', "v == 'a'", "string", False),
    ('<data id="v"/>', "v == null", "string", True),
    ('<data id="v"/><data id="w"/>', "w == 3 || v == w", "integer", True),
    ('<data id="v"/><data id="w"/>', "w == v &amp;&amp; v == true", "boolean", False),
]


@pytest.mark.parametrize(("data", "cond", "kind", "holds"), ALWAYS_NULL)
def test_an_always_null_data_is_typed_as_what_it_is_compared_with(
    data: str, cond: str, kind: str, holds: bool, tmp_path: Path
) -> None:
    body = f"""<datamodel>{data}</datamodel>
<state id="s0"><transition cond="{cond}" target="s1"/><transition target="pass"/></state>
<state id="s1"/>
"""
    chart = _chart(tmp_path, body)
    assert chart["context"]["v"] == {"type": kind, "nullable": True, "default": None}
    expected = {"s1"} if holds else {"pass"}
    assert Simulator(load(tmp_path / "chart.yaml")).state.configuration == expected


def test_import_scxml_names_the_statement_a_script_cannot_be(tmp_path: Path) -> None:
    source = tmp_path / "setup.scxml"
    body = '<script>\n  ready = 1\n  load_config()\n</script>\n<state id="s0"/>\n'
    source.write_text(HEAD.format(binding="") + body + TAIL, encoding="utf-8")
    result = statekit("import-scxml", str(source), "-o", str(tmp_path / "setup.yaml"))
    assert result.returncode == 2
    assert (
        f"{source}:4:3: error[scxml] <script> `load_config()`: a call is not translated; "
        "a <script> is translated when it is only assignments to names" in result.stderr
    )
    assert not (tmp_path / "setup.yaml").exists()
