"""import-scxml and an `<invoke>` that fails whenever it starts (a `namelist` naming no
`<data>`): SCXML cancels it and raises `error.execution`; the chart has no invocation
and its state's entry ends with `raise: error.execution`, where that is exactly when
SCXML raises it. Elsewhere the `<invoke>` stays refused, at its position."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml
from cli_process import statekit

HEAD = '<scxml xmlns="http://www.w3.org/2005/07/scxml" version="1.0" initial="s0">\n'
CHILD = '<content><scxml version="1.0" initial="f"><final id="f"/></scxml></content>'


def _document(invoke_attrs: str, state_body: str = "", inner: str = "") -> str:
    return (
        HEAD
        + '<datamodel><data id="x" expr="1"/></datamodel>\n'
        + f'<state id="s0">{inner}<onentry><send event="timer" delay="1s"/></onentry>\n'
        + f"<invoke {invoke_attrs}>{CHILD}</invoke>\n"  # line 4
        + f'{state_body}<transition event="error.execution" target="ok"/>\n'
        + '<transition event="done.invoke" target="bad"/></state>\n'
        + '<final id="ok"/><final id="bad"/></scxml>\n'
    )


def _import(tmp_path: Path, document: str) -> tuple[int, str, Path]:
    source = tmp_path / "doc.scxml"
    source.write_text(document, encoding="utf-8")
    out = tmp_path / "doc.yaml"
    result = statekit("import-scxml", str(source), "-o", str(out))
    return result.returncode, result.stderr, out


def test_an_invoke_that_always_fails_is_error_execution_at_the_end_of_its_entry(
    tmp_path: Path,
) -> None:
    code, stderr, out = _import(tmp_path, _document('namelist="x nope"'))
    assert code == 0, stderr
    assert "4:1: note[scxml] <invoke namelist>: 'nope' names no <data>" in stderr
    chart = yaml.safe_load(out.read_text("utf-8"))
    s0 = chart["states"]["s0"]
    assert "invoke" not in s0
    assert s0["entry"][0] == {"send": {"event": "timer", "delay": "1000ms"}}
    assert s0["entry"][-1]["raise"]["event"] == "error.execution"
    assert list(s0["on"]) == ["error.execution"]  # done.invoke: no invocation gives it
    assert statekit("lint", str(out)).returncode in (0, 1)  # it compiles (lint may warn)
    compiled = statekit("compile", str(out))
    assert compiled.returncode == 0, compiled.stderr


def test_an_invoke_that_may_start_is_still_an_invocation(tmp_path: Path) -> None:
    code, stderr, out = _import(tmp_path, _document('namelist="x"'))
    assert code == 0, stderr
    s0 = yaml.safe_load(out.read_text("utf-8"))["states"]["s0"]
    assert [i["id"] for i in s0["invoke"]] == ["s0_invoke0"]
    assert "done.invoke.s0_invoke0" in s0["on"]


# where an entry's `raise` would not come when SCXML's failed start does (after the
# rest of the macrostep entering the state, only if the state is still active)
REFUSED = [
    ("a state with child states", "", '<state id="inner"/>', "in a state with child states"),
    (
        "an eventless transition",
        '<transition cond="x == 2" target="ok"/>',
        "",
        "in a state with an eventless transition",
    ),
    ("an <onentry> that raises", '<onentry><raise event="e"/></onentry>', "", "<onentry> raises"),
]


@pytest.mark.parametrize(
    ("body", "inner", "words"), [r[1:] for r in REFUSED], ids=[r[0] for r in REFUSED]
)
def test_elsewhere_the_invoke_is_refused_at_its_position(
    tmp_path: Path, body: str, inner: str, words: str
) -> None:
    code, stderr, _ = _import(tmp_path, _document('namelist="nope"', body, inner))
    assert code == 2, stderr
    assert "4:1: error[scxml] <invoke namelist>: 'nope' names no <data> (an error)" in stderr
    assert words in stderr


def test_an_always_failing_invoke_with_an_idlocation_is_refused(tmp_path: Path) -> None:
    code, stderr, _ = _import(tmp_path, _document('namelist="nope" idlocation="x"'))
    assert code == 2, stderr
    assert "with an idlocation" in stderr
