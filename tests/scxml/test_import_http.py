"""import-scxml (the real CLI) and `<send type="...#BasicHTTPEventProcessor">`: a send to
this session's own location is an `emit: {type: basichttp}` whose payload is the form
fields, its event declares `raw`, and the chart runs over real HTTP (`HttpLoop`);
what is not expressible is refused by name at its line."""

from __future__ import annotations

from pathlib import Path

import pytest
from cli_process import statekit
from test_import_content import _import

from statekit.api import load
from statekit.testing import Simulator
from statekit.testing.http_loop import HttpLoop

HTTP = 'type="http://www.w3.org/TR/scxml/#BasicHTTPEventProcessor"'
HERE = "targetexpr=\"_ioprocessors['basichttp']['location']\""


def _document(send: str, cond: str) -> str:
    return f"""<datamodel><data id="n" expr="41"/></datamodel>
<state id="s0">
  <onentry><send event="timeout" delay="2s"/>{send}</onentry>
  <transition event="got.it" cond="{cond}" target="pass"/>
  <transition event="*" target="fail"/>
</state>
"""


def test_an_http_send_to_itself_is_an_emit_and_comes_back_over_http(tmp_path: Path) -> None:
    send = f'<send event="got.it" {HTTP} {HERE} namelist="n"><param name="p" expr="n + 1"/></send>'
    cond = "_event.data.p == 42 &amp;&amp; _event.raw.search('n=41&amp;p=42') !== -1"
    code, stderr, chart = _import(tmp_path, _document(send, cond))
    assert code == 0, stderr
    assert chart is not None
    entry = chart["states"]["s0"]["entry"]  # type: ignore[index]
    assert entry[1] == {
        "emit": {
            "type": "basichttp",
            "payload": {"_scxmleventname": "'got__it'", "n": "ctx.n", "p": "ctx.n + 1"},
        }
    }
    assert chart["events"]["got__it"] == {"n": "integer", "p": "integer", "raw": "string"}  # type: ignore[index]
    simulator = Simulator(load(tmp_path / "chart.yaml"))
    with HttpLoop(simulator) as loop:
        loop.advance(60_000)
    assert simulator.state.configuration == {"pass"}


def test_an_http_send_with_no_target_raises_error_communication(tmp_path: Path) -> None:
    document = f"""<state id="s0">
  <onentry><send event="other"/><send event="got.it" {HTTP}/></onentry>
  <transition event="error.communication" target="pass"/>
  <transition event="*" target="fail"/>
</state>
"""
    code, stderr, chart = _import(tmp_path, document)
    assert code == 0, stderr
    assert chart is not None
    assert chart["states"]["s0"]["entry"][1] == {"raise": "error__communication"}  # type: ignore[index]
    simulator = Simulator(load(tmp_path / "chart.yaml"))
    simulator.advance(60_000)
    assert simulator.state.configuration == {"pass"}


@pytest.mark.parametrize(
    ("send", "words"),
    [
        (f'<send event="got.it" {HTTP} target="http://example.com/x"/>', "another location"),
        (f'<send event="got.it" {HTTP} {HERE} delay="1s"/>', "<send type=basichttp> with delay"),
        (f"<send eventexpr=\"'got.it'\" {HTTP} {HERE}/>", "<send type=basichttp> with eventexpr"),
        (f'<send event="got.it" {HTTP} {HERE}/><send event="x"/>', "an undelayed <send> after"),
    ],
)
def test_an_http_send_statekit_cannot_express_is_refused_by_name(
    send: str, words: str, tmp_path: Path
) -> None:
    code, stderr, _ = _import(tmp_path, _document(send, "true"))
    assert code == 2 and "chart.scxml:" in stderr and words in stderr, stderr


@pytest.mark.parametrize(
    ("cond", "written", "reached"),
    [
        (
            "_event.raw.search(/n=4[0-9]$/) !== -1",
            "(matches(_event.data.raw, 'n=4[0-9]$'))",
            "pass",
        ),
        (
            "_event.raw.search(/n=5[0-9]$/) === -1",
            "(not matches(_event.data.raw, 'n=5[0-9]$'))",
            "pass",
        ),
        (
            "_event.raw.search(/n=5[0-9]$/) !== -1",
            "(matches(_event.data.raw, 'n=5[0-9]$'))",
            "fail",
        ),
        ("_event.raw.search(/POST/) !== -1", "( 'POST' in _event.data.raw )", "pass"),
    ],
)
def test_a_search_of_the_raw_request_is_matches_or_a_substring_test(
    cond: str, written: str, reached: str, tmp_path: Path
) -> None:
    send = f'<send event="got.it" {HTTP} {HERE} namelist="n"/>'
    code, stderr, chart = _import(tmp_path, _document(send, cond))
    assert code == 0, stderr
    assert chart is not None
    assert chart["states"]["s0"]["on"]["got__it"][0]["if"] == written  # type: ignore[index]
    simulator = Simulator(load(tmp_path / "chart.yaml"))
    with HttpLoop(simulator) as loop:
        loop.advance(60_000)
    assert simulator.state.configuration == {reached}


def test_a_search_whose_pattern_re2_refuses_is_the_compilers_error(tmp_path: Path) -> None:
    send = f'<send event="got.it" {HTTP} {HERE}/>'
    code, stderr, _ = _import(tmp_path, _document(send, "_event.raw.search(/(?=a)b/) !== -1"))
    assert code == 0, stderr  # the import translates; the compiler checks the pattern
    linted = statekit("lint", str(tmp_path / "chart.yaml"))
    assert linted.returncode == 1
    assert "error[expression-syntax]" in linted.stdout + linted.stderr
    said = "not a regular expression RE2 accepts: invalid perl operator: (?="
    assert said in linted.stdout + linted.stderr
