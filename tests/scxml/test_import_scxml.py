"""statekit import-scxml: hand-written SCXML → a chart that compiles and runs the
same; a positioned refusal for each feature statekit cannot express; hostile XML."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

import pytest
from cli_process import statekit

from statekit.api import load
from statekit.testing import Simulator

HEAD = '<scxml xmlns="http://www.w3.org/2005/07/scxml" version="1.0" initial="s0">\n'

ORDER = (
    HEAD
    + """<datamodel><data id="n" expr="0"/></datamodel>
<state id="s0" initial="s01">
  <onentry><raise event="go.now"/><log expr="'x'"/></onentry>
  <transition event="go" cond="n == 0 &amp;&amp; In('s01')" target="s1">
    <assign location="n" expr="n + 1"/>
  </transition>
  <state id="s01"/>
</state>
<parallel id="s1">
  <state id="a"><state id="a1"><transition target="a2"/></state><final id="a2"/></state>
  <state id="b"><final id="b1"/></state>
  <transition event="done.state.s1" cond="n === 1" target="pass"/>
</parallel>
<final id="pass"/>
</scxml>
"""
)


def _write(tmp_path: Path, text: str | bytes) -> Path:
    path = tmp_path / "chart.scxml"
    path.write_bytes(text.encode() if isinstance(text, str) else text)
    return path


def test_a_chart_is_imported_compiles_and_reaches_the_same_state(tmp_path: Path) -> None:
    source = _write(tmp_path, ORDER)
    result = statekit("import-scxml", str(source), "-o", str(tmp_path / "chart.yaml"))
    assert result.returncode == 0, result.stderr
    assert "chart.scxml:4:35: note[scxml] <log> dropped" in result.stderr
    simulator = Simulator(load(tmp_path / "chart.yaml"))
    assert simulator.state.configuration == frozenset({"pass"})
    assert simulator.state.context["n"] == 1


def test_the_chart_goes_to_standard_output(tmp_path: Path) -> None:
    text = (
        HEAD
        + '<state id="s0"><transition event="a.b" target="s1"/></state><final id="s1"/></scxml>'
    )
    result = statekit("import-scxml", str(_write(tmp_path, text)))
    assert result.returncode == 0, result.stderr
    assert "a__b: {}" in result.stdout
    (tmp_path / "out.yaml").write_text(result.stdout)
    simulator = Simulator(load(tmp_path / "out.yaml"))
    assert simulator.send("a__b").state.configuration == frozenset({"s1"})


REFUSED = [
    ('<invoke src="x.scxml"/>', "<invoke> src 'x.scxml': no such file next to this one"),
    ('<invoke autoforward="1"/>', "<invoke autoforward='1'>: neither 'true' nor 'false'"),
    ('<onentry><send event="e" target="#_parent"/></onentry>', "another target"),
    ("<transition cond=\"_event == 'x'\"/>", "the system variable _event's value as a whole"),
    ('<onentry><foreach array="a" item="i"/></onentry>', "<foreach"),
    ('<onentry><if cond="true"><else/><else/></if></onentry>', "<else> after <else>"),
    ("<onentry><script>x</script></onentry>", "<script"),
    ('<transition event="error.communication" target="s0"/>', "raises only error.execution"),
    ('<transition cond="Math.max(1, 2) > 1"/>', "member access (Math."),
    ('<transition cond="foo(1)"/>', "a call (foo(...)"),
    ('<transition cond="1 = 1"/>', "the operator '='"),
    ('<transition cond="!n == 1"/>', "'!' before a comparison"),
    ("<onentry><raise/></onentry>", "<raise> is not expressible"),
    ('<history id="h"><transition/></history><state id="a"/>', "default transition without"),
    ('<transition event="a.b"/><transition event="a__b"/>', "would be named 'a__b', as another"),
    (
        '<transition event="e"/><transition event="e" type="internal" target="s01"/>'
        '<state id="s01"/>',
        "an internal transition after another on the same event",
    ),
    ('<onentry><send event="e" delayexpr="\'soon\'"/></onentry>', "the delay 'soon': not a"),
]


@pytest.mark.parametrize(("body", "named"), REFUSED)
def test_each_refused_feature_is_named_at_its_element(
    body: str, named: str, tmp_path: Path
) -> None:
    text = HEAD + f'<state id="s0">\n  {body}\n</state>\n</scxml>\n'
    result = statekit("import-scxml", str(_write(tmp_path, text)))
    assert result.returncode == 2
    assert result.stdout == ""
    assert result.stderr.startswith(f"{tmp_path / 'chart.scxml'}:3:"), result.stderr
    assert named in result.stderr
    assert "Traceback" not in result.stderr


def test_data_nothing_types_is_refused_at_the_data(tmp_path: Path) -> None:
    text = (
        HEAD
        + '<datamodel>\n<data id="v"/>\n</datamodel><state id="s0">'
        + '<onentry><assign location="v" expr="v"/></onentry></state></scxml>'
    )
    result = statekit("import-scxml", str(_write(tmp_path, text)))
    assert result.returncode == 2
    assert ":3:1: error[scxml] <data id='v'> with no value: nothing assigned" in result.stderr


def test_data_nothing_writes_is_a_null_string(tmp_path: Path) -> None:
    text = (
        HEAD
        + '<datamodel><data id="v"/></datamodel><state id="s0">'
        + '<transition cond="v == null" target="s1"/></state><final id="s1"/></scxml>'
    )
    result = statekit("import-scxml", str(_write(tmp_path, text)), "-o", str(tmp_path / "c.yaml"))
    assert result.returncode == 0, result.stderr
    assert Simulator(load(tmp_path / "c.yaml")).state.configuration == frozenset({"s1"})


LAUGHS = (
    '<?xml version="1.0"?>\n<!DOCTYPE scxml [<!ENTITY a "aaaaaaaaaa">'
    '<!ENTITY b "&a;&a;&a;&a;&a;&a;&a;&a;&a;&a;">]>\n'
    + HEAD
    + '<state id="s0"><onentry><raise event="&b;"/></onentry></state></scxml>'
)
HOSTILE: list[tuple[str, bytes, str]] = [
    ("billion laughs", LAUGHS.encode(), "chart.scxml:2:17: error[scxml] a <!DOCTYPE>"),
    (
        "external entity",
        b'<?xml version="1.0"?>\n<!DOCTYPE x SYSTEM "file:///etc/passwd">\n<scxml/>',
        "chart.scxml:2:40: error[scxml] a <!DOCTYPE> is not accepted",
    ),
    (
        "deep nesting",
        (HEAD + '<state id="d">' * 100).encode(),
        "nested deeper than 64 levels",
    ),
    (
        "huge attribute",
        (HEAD + f'<state id="{"x" * 70_000}"/></scxml>').encode(),
        "attribute 'id' is 70000 characters long",
    ),
    ("not UTF-8", (HEAD + '<state id="caf\xe9"/></scxml>').encode("latin-1"), "not well-formed"),
    ("truncated", HEAD.encode()[:40], "not well-formed XML"),
    ("not scxml", b"<html/>", ":1:1: error[scxml] the root element is not <scxml>"),
    ("empty", b"", ":1:1: error[scxml] not well-formed XML: no element found"),
]


@pytest.mark.parametrize(("name", "data", "said"), HOSTILE, ids=[h[0] for h in HOSTILE])
def test_hostile_xml_is_refused_with_a_position(
    name: str, data: bytes, said: str, tmp_path: Path
) -> None:
    result = statekit("import-scxml", str(_write(tmp_path, data)))
    assert result.returncode == 2, name
    assert said in result.stderr, result.stderr
    assert "Traceback" not in result.stderr


def _fifo(folder: Path) -> Path:
    os.mkfifo(folder / "pipe.scxml")
    return folder / "pipe.scxml"


def _folder(folder: Path) -> Path:
    (folder / "dir.scxml").mkdir()
    return folder / "dir.scxml"


def _sparse(folder: Path) -> Path:
    with (folder / "big.scxml").open("wb") as handle:
        handle.truncate(8 << 30)  # 8 GiB, almost none of it on disk
    return folder / "big.scxml"


def _broken_link(folder: Path) -> Path:
    (folder / "link.scxml").symlink_to(folder / "gone.scxml")
    return folder / "link.scxml"


PATHS: dict[str, tuple[Callable[[Path], Path], str]] = {
    "missing": (lambda folder: folder / "none.scxml", "no such file or folder"),
    "fifo": (_fifo, "a FIFO (named pipe), not a regular file"),
    "character device": (lambda folder: Path("/dev/zero"), "a character device, not a regular"),
    "folder": (_folder, "a folder, not a regular file"),
    "sparse 8 GiB": (_sparse, f"the file has {(4 << 20) + 1} bytes or more, over the limit"),
    "broken link": (_broken_link, "a broken symbolic link"),
}


@pytest.mark.parametrize("kind", sorted(PATHS))
def test_a_path_that_is_no_readable_file_is_said_without_opening_it(
    kind: str, tmp_path: Path
) -> None:
    make, words = PATHS[kind]
    path = make(tmp_path)
    result = statekit("import-scxml", str(path))
    assert result.returncode == 2
    assert result.stderr.startswith(f"{path}:1:1: error[scxml] {words}"), result.stderr


def test_the_docs_page_shows_what_the_example_imports_to() -> None:
    root = Path(__file__).resolve().parents[2]
    page = (root / "docs/scxml.md").read_text("utf-8")
    shown = page.split("<!-- sample: file ping.yaml -->\n```yaml\n", 1)[1].split("```", 1)[0]
    result = statekit("import-scxml", "examples/ping.scxml", cwd=root)
    assert result.returncode == 0
    assert result.stdout == shown
