"""import-scxml and `<invoke>`: the invoked document is a chart of its own, written
next to the parent's (`OUT.<invoke id>.yaml`); `<param>`/`namelist` are its `input`;
`#_parent` and `#_<invoke id>` are `send: {to: ...}`; what statekit does not do
(`autoforward`, a delayed send to another instance) is refused."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml
from cli_process import statekit

from statekit.api import load

HEAD = '<scxml xmlns="http://www.w3.org/2005/07/scxml" version="1.0" initial="s0">\n'
PARENT = (
    HEAD
    + """<datamodel><data id="amount" expr="5"/></datamodel>
<state id="s0">
  <invoke id="pay" namelist="amount">
    <param name="currency" expr="'EUR'"/>
    <param name="unknown" expr="1"/>
    <content>
      <scxml version="1.0" initial="c0">
        <datamodel><data id="amount" expr="0"/><data id="currency"/></datamodel>
        <state id="c0">
          <transition cond="amount &gt; 0" target="cf"><send target="#_parent" event="paid"/>
          </transition>
        </state>
        <final id="cf"/>
      </scxml>
    </content>
  </invoke>
  <invoke id="ship" src="ship.scxml"/>
  <transition event="paid" target="s1"><send target="#_ship" event="go"/></transition>
  <transition event="done.invoke.pay" target="s1"/>
</state>
<final id="s1"/>
</scxml>
"""
)
SHIP = HEAD + '<state id="s0"><transition event="go" target="f"/></state><final id="f"/></scxml>'


def test_each_invoked_document_is_written_as_a_chart_next_to_the_parent(tmp_path: Path) -> None:
    (tmp_path / "order.scxml").write_text(PARENT, encoding="utf-8")
    (tmp_path / "ship.scxml").write_text(SHIP, encoding="utf-8")
    out = tmp_path / "order.yaml"
    result = statekit("import-scxml", str(tmp_path / "order.scxml"), "-o", str(out))
    assert result.returncode == 0, result.stderr
    assert "note[scxml] <param name='unknown'> dropped" in result.stderr
    parent = yaml.safe_load(out.read_text("utf-8"))
    assert parent["states"]["s0"]["invoke"] == [
        {
            "id": "pay",
            "chart": "order-pay",
            "input": {"amount": "ctx.amount", "currency": "'EUR'"},
        },
        {"id": "ship", "chart": "order-ship"},
    ]
    assert parent["states"]["s0"]["on"]["paid"] == [
        {"to": "s1", "do": [{"send": {"event": "go", "to": "ship"}}]}
    ]
    assert parent["states"]["s0"]["on"]["done.invoke.pay"] == [{"to": "s1"}]
    pay = yaml.safe_load((tmp_path / "order.pay.yaml").read_text("utf-8"))
    assert pay["statechart"] == "order-pay"
    assert pay["context"]["currency"] == {"type": "string", "nullable": True, "default": None}
    assert pay["states"]["c0"]["always"][0]["do"] == [{"send": {"event": "paid", "to": "parent"}}]
    ship = yaml.safe_load((tmp_path / "order.ship.yaml").read_text("utf-8"))
    assert ship["statechart"] == "order-ship"
    for name in ("order.yaml", "order.pay.yaml", "order.ship.yaml"):
        load(tmp_path / name)  # each compiles


def test_without_an_output_file_a_family_is_refused(tmp_path: Path) -> None:
    (tmp_path / "order.scxml").write_text(PARENT, encoding="utf-8")
    (tmp_path / "ship.scxml").write_text(SHIP, encoding="utf-8")
    result = statekit("import-scxml", str(tmp_path / "order.scxml"))
    assert result.returncode == 2
    assert result.stdout == ""
    assert "give -o OUT.yaml to write them next to it" in result.stderr


@pytest.mark.parametrize(
    ("invoke", "said"),
    [
        ('<invoke src="ship.scxml" autoforward="yes"/>', "neither 'true' nor 'false'"),
        ('<invoke src="ship.scxml" type="foo"/>', "of the type 'foo': only SCXML documents"),
        ('<invoke src="ship.scxml"><content/></invoke>', "needs one of src, srcexpr or"),
        ('<invoke id="a" src="ship.scxml"/><invoke id="a" src="ship.scxml"/>', "second <invoke>"),
        ('<onentry><send target="#_parent" event="e"/></onentry>', "another target"),
    ],
)
def test_what_statekit_does_not_do_is_refused_at_the_element(
    invoke: str, said: str, tmp_path: Path
) -> None:
    (tmp_path / "ship.scxml").write_text(SHIP, encoding="utf-8")
    (tmp_path / "p.scxml").write_text(HEAD + f'<state id="s0">{invoke}</state></scxml>')
    result = statekit("import-scxml", str(tmp_path / "p.scxml"), "-o", str(tmp_path / "p.yaml"))
    assert result.returncode == 2
    assert said in result.stderr, result.stderr
    assert "Traceback" not in result.stderr
