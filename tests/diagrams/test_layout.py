"""Running Graphviz: real SVG parsed as XML, and the timeout, crash and missing-`dot` messages."""

from __future__ import annotations

import os
import stat
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from chart_helpers import dot_program  # noqa: F401  (a fixture)
from diagram_charts import odd, sink

from statekit.diagrams.dot import to_dot
from statekit.diagrams.layout import (
    GraphvizMissing,
    LayoutError,
    dot_executable,
    graphviz_version,
    render,
)
from statekit.diagrams.views import whole_view

needs_dot = pytest.mark.usefixtures("dot_program")
SVG = "{http://www.w3.org/2000/svg}"


def fake_dot(folder: Path, script: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """Put a `dot` shell script first on PATH."""
    path = folder / "dot"
    path.write_text("#!/bin/sh\n" + script + "\n")
    path.chmod(path.stat().st_mode | stat.S_IEXEC)
    monkeypatch.setenv("PATH", f"{folder}{os.pathsep}{os.environ.get('PATH', '')}")


@needs_dot
def test_real_dot_renders_svg_that_parses_as_xml() -> None:
    for diagram in (sink(), odd()):
        svg = render(to_dot(whole_view(diagram)), "svg", timeout=60)
        root = ET.fromstring(svg)
        assert root.tag == f"{SVG}svg"
        texts = {"".join(t.itertext()) for t in root.iter(f"{SVG}text")}
        if diagram.name == "odd-names":
            assert {'q"uote', "café", "<i>", "{x}", 'say"hi"'} <= texts
        else:
            assert {"idle", "work", "par", "left", "right", "H*"} <= texts
        titles = {t.text for t in root.iter(f"{SVG}title")}
        assert any(t and t.startswith("cluster_") for t in titles)


@needs_dot
def test_same_dot_same_svg_bytes() -> None:
    source = to_dot(whole_view(sink()))
    assert render(source, "svg") == render(source, "svg")
    assert render(source, "png")[:8] == b"\x89PNG\r\n\x1a\n"
    assert graphviz_version()[0].isdigit()


def test_missing_dot_says_how_to_install(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PATH", str(tmp_path))
    assert dot_executable() is None
    with pytest.raises(GraphvizMissing) as caught:
        render("digraph { a }", "svg")
    message = str(caught.value)
    assert "apt-get install graphviz" in message and "DOT and Mermaid" in message
    with pytest.raises(GraphvizMissing):
        graphviz_version()


def test_a_slow_dot_is_stopped_at_the_timeout(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    fake_dot(tmp_path, "exec sleep 30", monkeypatch)
    with pytest.raises(LayoutError) as caught:
        render("digraph { a }", "svg", timeout=0.5, what="big.yaml")
    message = str(caught.value)
    assert "did not finish laying out big.yaml within 0.5 s" in message
    assert "--split always" in message and "--timeout" in message


def test_a_crashing_dot_is_reported(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    fake_dot(
        tmp_path,
        "echo 'dot: maze.c:313: chkSgraph: Assertion failed.' >&2; kill -ABRT $$",
        monkeypatch,
    )
    with pytest.raises(LayoutError) as caught:
        render("digraph { a }", "svg", what="big.yaml")
    message = str(caught.value)
    assert "Graphviz dot failed on big.yaml (crashed: dot: maze.c:313" in message
    assert "--split always" in message


def test_unknown_format_is_a_programming_error() -> None:
    with pytest.raises(ValueError, match="unknown image format"):
        render("digraph { a }", "pdf")


def test_graphviz_is_imported_by_one_module_only() -> None:
    package = Path(__file__).resolve().parents[2] / "statekit"
    importers = sorted(
        str(path.relative_to(package))
        for path in package.rglob("*.py")
        if any(
            line.strip().startswith(("import graphviz", "from graphviz"))
            for line in path.read_text(encoding="utf-8").splitlines()
        )
    )
    assert importers == ["diagrams/layout.py"]
