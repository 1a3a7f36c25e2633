"""import-scxml and text in conditions: string methods and `re.search` as statekit's
`starts_with`, `ends_with` and `matches`; `|` between two conditions as `or`, with
ECMAScript's precedence, and any other `|` refused by name; the id SCXML generates for
an `<invoke>` without `id`, in SCXML's form `<state id>.<platform id>`."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml
from cli_process import statekit
from test_import_content import _import

from statekit.api import load
from statekit.testing import FamilySimulator, Simulator

DATA = """<datamodel>
  <data id="ref" expr="'INV-2024'"/><data id="prefix" expr="'INV-'"/>
  <data id="a" expr="1"/><data id="b" expr="2"/><data id="flag" expr="true"/>
</datamodel>
"""


def _decided(cond: str) -> str:
    return f"""{DATA}<state id="s0">
  <transition cond="{cond}" target="pass"/>
  <transition target="fail"/>
</state>
"""


def _reached(tmp_path: Path, document: str) -> str:
    code, stderr, _ = _import(tmp_path, document)
    assert code == 0, stderr
    simulator = Simulator(load(tmp_path / "chart.yaml"))
    (reached,) = simulator.state.configuration
    return reached


@pytest.mark.parametrize(
    ("cond", "reached"),
    [
        ("ref.startswith(prefix)", "pass"),
        ("ref.startswith('CR-')", "fail"),
        ("ref.endswith('2024')", "pass"),
        ("ref.startsWith('INV') &amp;&amp; !ref.endsWith('5')", "pass"),
        ("'INV-2024'.endsWith('-2024')", "pass"),
        ("ref.startswith(prefix + '2')", "pass"),  # the argument is any expression
        ("re.search('^INV-[0-9]+$', ref)", "pass"),
        ("re.search('^INV-[0-9]+$', ref) is not None", "pass"),
        ("re.search('^CR-', ref) is None", "pass"),
        ("re.search('^CR-', ref) is not None", "fail"),
    ],
)
def test_a_string_method_or_search_decides_as_python_would(
    cond: str, reached: str, tmp_path: Path
) -> None:
    assert _reached(tmp_path, _decided(cond)) == reached


def test_a_string_method_is_written_as_statekits_function(tmp_path: Path) -> None:
    code, stderr, chart = _import(tmp_path, _decided("ref.startswith(prefix)"))
    assert code == 0, stderr
    guard = chart["states"]["s0"]["always"][0]["if"]  # type: ignore[index]
    assert guard.replace(" ", "") == "starts_with(ctx.ref,ctx.prefix)"


@pytest.mark.parametrize(
    ("cond", "reached"),
    [
        ("a == 0 | b != 2", "fail"),
        ("a == 1 | b == 0", "pass"),
        ("a == 0 | b == 0 | flag", "pass"),  # a boolean <data>
        ("a &gt; 5 | b &lt; 3", "pass"),
        ("(a == 1) | false", "pass"),
        ("!flag | In('s0')", "pass"),
        # `|` binds tighter than `&amp;&amp;` in ECMAScript: a == 0 &amp;&amp; (b == 0 | b == 2)
        ("a == 0 &amp;&amp; b == 0 | b == 2", "fail"),
        ("b == 2 | a == 0 &amp;&amp; a == 0", "fail"),
        ("a == 0 | b == 0 || flag", "pass"),
    ],
)
def test_a_bar_between_two_conditions_is_or_with_ecmascripts_precedence(
    cond: str, reached: str, tmp_path: Path
) -> None:
    assert _reached(tmp_path, _decided(cond)) == reached


@pytest.mark.parametrize(
    ("body", "said"),
    [
        ('<transition cond="a | b" target="pass"/>', "not both conditions (a bitwise or)"),
        ('<transition cond="a == 1 | 2" target="pass"/>', "not both conditions (a bitwise or)"),
        ('<transition cond="ref | flag" target="pass"/>', "not both conditions (a bitwise or)"),
        ('<onentry><assign location="a" expr="b | 1"/></onentry>', "'|' outside an ECMAScript"),
        ('<transition cond="ref.upper() == \'X\'" target="pass"/>', "member access (ref...."),
    ],
)
def test_any_other_bar_is_refused_naming_it(body: str, said: str, tmp_path: Path) -> None:
    code, stderr, _ = _import(tmp_path, f'{DATA}<state id="s0">{body}</state>\n')
    assert code == 2
    assert said in stderr, stderr
    assert "chart.scxml:6:" in stderr and "Traceback" not in stderr


def test_a_bar_in_the_python_datamodel_is_refused(tmp_path: Path) -> None:
    # Python reads `a == 0 | b != 2` as the chained comparison `a == (0 | b) != 2`
    document = _decided("a == 0 | b != 2")
    source = tmp_path / "python.scxml"
    source.write_text(
        '<scxml xmlns="http://www.w3.org/2005/07/scxml" version="1.0" initial="s0"'
        f' datamodel="python">\n{document}<final id="pass"/><final id="fail"/></scxml>\n',
        encoding="utf-8",
    )
    result = statekit("import-scxml", str(source))
    assert result.returncode == 2
    assert "the operator '|' outside an ECMAScript condition" in result.stderr, result.stderr


FAMILY = """<?xml version="1.0"?>
<scxml xmlns="http://www.w3.org/2005/07/scxml" version="1.0" initial="s0">
<datamodel><data id="stored"/><data id="received"/></datamodel>
<state id="s0">
  <invoke idlocation="stored">
    <content>
      <scxml version="1.0" initial="c0">
        <final id="c0"><onentry><send target="#_parent" event="hello"/></onentry></final>
      </scxml>
    </content>
  </invoke>
  <transition event="hello" target="s1"><assign location="received" expr="_event.invokeid"/>
  </transition>
</state>
<state id="s1">
  <transition cond="stored == received &amp;&amp; stored.startswith('s0.')" target="pass"/>
  <transition target="fail"/>
</state>
<final id="pass"/><final id="fail"/>
</scxml>
"""


def test_a_generated_invoke_id_has_scxmls_form_where_the_document_reads_it(
    tmp_path: Path,
) -> None:
    (tmp_path / "family.scxml").write_text(FAMILY, encoding="utf-8")
    out = tmp_path / "family.yaml"
    result = statekit("import-scxml", str(tmp_path / "family.scxml"), "-o", str(out))
    assert result.returncode == 0, result.stderr
    parent = yaml.safe_load(out.read_text("utf-8"))
    (invoked,) = parent["states"]["s0"]["invoke"]
    assert invoked["id"] == "s0_invoke0"  # statekit's name: no '.'
    assert {"assign": {"stored": "'s0.invoke0'"}} in parent["states"]["s0"]["entry"]
    family = FamilySimulator([load(out), load(tmp_path / "family.s0_invoke0.yaml")])
    family.start("family", "f-1")
    family.advance(60_000)
    assert family.member("f-1").state.configuration == {"pass"}
