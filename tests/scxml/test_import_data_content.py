"""import-scxml and values given as content: a `<data>`'s inline text or `src` file
(JSON's scalars and lists, else a space-normalized string; XML and JSON objects
refused, a `src` only beside the document), a `<send>`'s JSON `<content>` as the
payload's fields, `x instanceof Array` decided by the declared type."""

from __future__ import annotations

from pathlib import Path

import pytest
from cli_process import statekit

from statekit.api import load
from statekit.testing import Simulator

HEAD = '<scxml xmlns="http://www.w3.org/2005/07/scxml" version="1.0" initial="s0" name="m">\n'
TAIL = '<final id="pass"/><final id="fail"/></scxml>\n'


def _import(folder: Path, body: str) -> tuple[int, str]:
    source = folder / "chart.scxml"
    source.write_text(HEAD + body + TAIL, encoding="utf-8")
    result = statekit("import-scxml", str(source), "-o", str(folder / "chart.yaml"))
    return result.returncode, result.stderr


def _ends_in(folder: Path, body: str) -> frozenset[str]:
    code, stderr = _import(folder, body)
    assert code == 0, stderr
    simulator = Simulator(load(folder / "chart.yaml"))
    simulator.advance(60_000)
    return simulator.state.configuration


def _test(data: str, cond: str) -> str:
    return f"""<datamodel>{data}</datamodel>
<state id="s0"><transition cond="{cond}" target="pass"/><transition target="fail"/></state>
"""


@pytest.mark.parametrize(
    ("content", "cond"),
    [
        ("[1, 2,\n 3]", "v == [1, 2, 3]"),
        ('["a", "b"]', "v == ['a', 'b']"),
        ("  42 ", "v == 42"),
        ("2.5", "v == 2.5"),
        ("true", "v == true"),
        ('"quoted"', "v == 'quoted'"),
        ("\n   this  is\n\ta string  \n", "v == 'this is a string'"),
        ("NaN", "v == 'NaN'"),
        ("", "v == null"),
    ],
)
def test_inline_content_and_a_src_file_give_the_same_value(
    content: str, cond: str, tmp_path: Path
) -> None:
    assert _ends_in(tmp_path, _test(f'<data id="v">{content}</data>', cond)) == {"pass"}
    (tmp_path / "values").mkdir()
    (tmp_path / "values" / "v.txt").write_text(content, encoding="utf-8")
    assert _ends_in(tmp_path, _test('<data id="v" src="file:values/v.txt"/>', cond)) == {"pass"}


@pytest.mark.parametrize(("value", "end"), [("[1]", "pass"), ("7", "fail"), ("'[1]'", "fail")])
def test_instanceof_array_is_decided_by_the_declared_type(
    value: str, end: str, tmp_path: Path
) -> None:
    body = _test(f'<data id="v" expr="{value}"/>', "v instanceof Array")
    assert _ends_in(tmp_path, body) == {end}


@pytest.mark.parametrize(
    ("data", "message"),
    [
        ('<data id="v"><books><book/></books></data>', "with XML content: an XML (DOM) value"),
        ('<data id="v">&lt;root/&gt;</data>', "with XML content: an XML (DOM) value"),
        ('<data id="v">{"a": 1}</data>', "<data> with a JSON object: a record value"),
        ('<data id="v">1e999</data>', "the JSON number inf: it is not a finite number"),
        ('<data id="v">[9223372036854775808]</data>', "it is outside the integer range"),
        (f'<data id="v">{"[" * 10_000}</data>', "its JSON is nested too deeply"),
        ('<data id="v" src="file:missing.txt"/>', "<data src='file:missing.txt'>: cannot be read"),
        ('<data id="v" src="file:../outside.txt"/>', "a file outside the document's folder"),
        ('<data id="v" src="/etc/hostname"/>', "a file outside the document's folder"),
        ('<data id="v" src="http://example.com/v"/>', "only a file beside the document"),
    ],
)
def test_content_without_a_statekit_value_is_refused_at_its_element(
    data: str, message: str, tmp_path: Path
) -> None:
    folder = tmp_path / "doc"
    folder.mkdir()
    (tmp_path / "outside.txt").write_text("1", encoding="utf-8")
    code, stderr = _import(folder, _test(data, "true"))
    assert code != 0
    assert "chart.scxml:2:12: error[scxml] <data" in stderr and message in stderr, stderr
    assert "Traceback" not in stderr


def test_json_content_sends_an_objects_members_as_the_payloads_fields(tmp_path: Path) -> None:
    body = """<state id="s0">
<onentry><send event="foo"><content>{"name": "bar", "size": 27, "tags": ["a"]}</content></send>
<send event="bar"><content>[1, 2]</content></send></onentry>
<transition event="foo" cond="_event.data['name'] == 'bar' and _event.data.size == 27
 and _event.data['tags'] == ['a']" target="s1"/>
<transition event="*" target="fail"/></state>
<state id="s1"><transition event="bar" cond="_event.data == [1, 2]" target="pass"/>
<transition event="*" target="fail"/></state>
"""
    assert _ends_in(tmp_path, body) == {"pass"}


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ("<books/>", "<send> with XML <content>: an XML (DOM) value"),
        ('{"a": {"b": 1}}', "<content> with a JSON object: a record value"),
        ('{"a b": 1}', "'a b' is no field name"),
        ('{"a": null}', "'a' is null (no type)"),
        ("[1, 2", "<content> that is not JSON"),
    ],
)
def test_content_that_is_no_payload_is_refused_at_its_element(
    content: str, message: str, tmp_path: Path
) -> None:
    body = f"""<state id="s0"><onentry><send event="foo"><content>{content}</content></send>
</onentry><transition event="foo" target="pass"/></state>
"""
    code, stderr = _import(tmp_path, body)
    assert code != 0
    assert message in stderr, stderr
    assert "chart.scxml:2:" in stderr and "Traceback" not in stderr
