"""`statekit render` and `statekit docs` as a user runs them: files, messages, exit codes."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from chart_helpers import dot_program  # noqa: F401  (a fixture)
from cli_process import statekit as run_statekit

ROOT = Path(__file__).resolve().parents[2]
MACHINES = ROOT / "machines"
needs_dot = pytest.mark.usefixtures("dot_program")

SMALL = """\
statechart: small
events: {GO: {}, BACK: {}}
initial: a
states:
  a: {on: {GO: b}}
  b: {on: {BACK: a}}
"""


def statekit(
    *args: str, cwd: Path = ROOT, path: str | None = None
) -> subprocess.CompletedProcess[str]:
    """`cli_process.statekit`, with another PATH when given."""
    env = dict(os.environ)
    if path is not None:
        env["PATH"] = path
    return run_statekit(*args, cwd=cwd, env=env)


@pytest.fixture
def charts(tmp_path: Path) -> Path:
    """A copy of the reference machines plus a small chart, in `tmp/charts`."""
    folder = tmp_path / "charts"
    shutil.copytree(MACHINES, folder, ignore=shutil.ignore_patterns("*.md"))
    (folder / "small.yaml").write_text(SMALL)
    return folder


def test_render_dot_and_mermaid_to_standard_output(charts: Path) -> None:
    done = statekit("render", str(charts / "small.yaml"), "--format", "dot")
    assert done.returncode == 0, done.stderr
    assert 'digraph "small" {' in done.stdout and "<B>GO</B>" in done.stdout
    done = statekit("render", str(charts / "small.yaml"), "--format", "mermaid")
    assert done.stdout.startswith("stateDiagram-v2\n") and "s1 --> s2 : GO" in done.stdout


def test_render_needs_an_output_folder_for_images(charts: Path) -> None:
    done = statekit("render", str(charts / "small.yaml"))
    assert done.returncode == 2
    assert "SVG and PNG need an output folder (-o DIR)" in done.stderr


@needs_dot
def test_render_svg_and_png(charts: Path, tmp_path: Path) -> None:
    out = tmp_path / "out"
    done = statekit(
        "render", str(charts / "task.yaml"), str(charts / "small.yaml"), "-o", str(out),
        "--format", "svg", "--format", "png", "--format", "mermaid",
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    names = ["small.mmd", "small.png", "small.svg", "task.mmd", "task.png", "task.svg"]
    assert sorted(p.name for p in out.iterdir()) == names
    root = ET.parse(out / "task.svg").getroot()
    assert root.tag.endswith("svg")
    assert (out / "task.png").read_bytes()[:4] == b"\x89PNG"
    # each file written is named, as `docs` names them; nothing when nothing changed
    assert sorted(done.stderr.splitlines()) == [f"wrote {out / name}" for name in names]
    again = statekit(
        "render", str(charts / "task.yaml"), str(charts / "small.yaml"), "-o", str(out),
        "--format", "svg", "--format", "png", "--format", "mermaid",
    )  # fmt: skip
    assert again.returncode == 0 and again.stderr == ""


def test_without_graphviz_dot_and_mermaid_work_and_images_fail_clearly(
    charts: Path, tmp_path: Path
) -> None:
    out = tmp_path / "out"
    empty = tmp_path / "empty-path"
    empty.mkdir()
    done = statekit(
        "render", str(charts / "small.yaml"), "-o", str(out), "--format", "dot",
        "--format", "mermaid", "--format", "svg", path=str(empty),
    )  # fmt: skip
    assert done.returncode == 2
    assert sorted(p.name for p in out.iterdir()) == ["small.dot", "small.mmd"]
    assert done.stderr.count("apt-get install graphviz") == 1
    assert "DOT and Mermaid output work without it" in done.stderr
    assert "Traceback" not in done.stderr


def test_a_chart_with_errors_is_reported_and_the_others_drawn(charts: Path, tmp_path: Path) -> None:
    (charts / "broken.yaml").write_text("statechart: broken\ninitial: nowhere\nstates: {a: {}}\n")
    out = tmp_path / "out"
    done = statekit("render", str(charts), "-o", str(out), "--format", "dot")
    assert done.returncode == 1
    assert "broken.yaml: cannot be drawn" in done.stderr
    assert (out / "small.dot").is_file() and not (out / "broken.dot").exists()


@needs_dot
def test_docs_then_check(charts: Path, tmp_path: Path) -> None:
    out = tmp_path / "docs"
    done = statekit("docs", str(charts), "-o", str(out))
    assert done.returncode == 0, done.stderr
    names = sorted(p.name for p in out.iterdir())
    assert names == sorted(
        ["README.md"]
        + [f"{m}.{ext}" for m in ("media_player", "payment", "small", "task")
           for ext in ("md", "dot", "svg", "png")]
    )  # fmt: skip
    page = (out / "task.md").read_text()
    assert "[![task statechart](task.png)](task.svg)" in page and "```mermaid" in page
    assert "[task.yaml](../charts/task.yaml)" in page
    # what the Mermaid view leaves out or redirects is said above its block
    mermaid = page[page.index("### Mermaid") : page.index("```mermaid")]
    assert "left out" in mermaid and "`(from STATE)`" in mermaid and "`(parallel)`" in mermaid
    index = (out / "README.md").read_text()
    assert "| [payment](payment.md) |" in index

    again = statekit("docs", str(charts), "-o", str(out))
    assert again.returncode == 0 and "wrote" not in again.stderr  # nothing changed

    check = statekit("docs", str(charts), "-o", str(out), "--check")
    assert check.returncode == 0, check.stdout + check.stderr
    assert check.stdout == ""


def test_check_names_stale_missing_and_extra_files(charts: Path, tmp_path: Path) -> None:
    out = tmp_path / "docs"
    empty = tmp_path / "empty-path"
    empty.mkdir()
    # without Graphviz: the text files are written, the images are not (exit 2)
    done = statekit("docs", str(charts), "-o", str(out), path=str(empty))
    assert done.returncode == 2 and "apt-get install graphviz" in done.stderr
    for stem in ("media_player", "payment", "small", "task"):
        (out / f"{stem}.svg").write_text("<svg/>")  # stands for the rendered images
        (out / f"{stem}.png").write_bytes(b"\x89PNG")

    check = statekit("docs", str(charts), "-o", str(out), "--check", path=str(empty))
    assert check.returncode == 0, check.stdout + check.stderr  # the check needs no Graphviz

    task = charts / "task.yaml"
    task.write_text(task.read_text().replace("Waiting for a worker.", "Waiting for workers."))
    (charts / "small.yaml").unlink()
    (out / "payment.svg").unlink()
    check = statekit("docs", str(charts), "-o", str(out), "--check", path=str(empty))
    assert check.returncode == 1
    lines = check.stdout.splitlines()
    assert f"stale: {out / 'task.md'}" in lines
    assert f"stale: {out / 'README.md'}" in lines
    assert f"missing: {out / 'payment.svg'}" in lines
    assert f"extra: {out / 'small.md'}" in lines and f"extra: {out / 'small.dot'}" in lines
    assert f"stale: {out / 'task.dot'}" not in lines  # descriptions are not drawn
    assert f"run `statekit docs {charts} -o {out}`" in check.stderr


def test_docs_of_a_broken_chart_exit_1(charts: Path, tmp_path: Path) -> None:
    (charts / "broken.yaml").write_text("statechart: broken\ninitial: nowhere\nstates: {a: {}}\n")
    done = statekit("docs", str(charts), "-o", str(tmp_path / "docs"), "--check")
    assert done.returncode == 1
    assert "broken.yaml: cannot be drawn (errors above)" in done.stderr


def test_committed_docs_of_the_reference_machines_are_up_to_date() -> None:
    done = statekit("docs", "machines/", "-o", "docs/machines", "--check")
    assert done.returncode == 0, done.stdout + done.stderr


def test_output_does_not_depend_on_the_process(charts: Path) -> None:
    outputs = set()
    for seed in ("1", "2", "3"):
        env = dict(os.environ, PYTHONHASHSEED=seed)
        done = subprocess.run(
            [sys.executable, "-m", "statekit.cli", "render", str(charts), "--format", "dot",
             "--format", "mermaid", "--split", "always"],
            capture_output=True, text=True, check=True, env=env, cwd=ROOT,
        )  # fmt: skip
        outputs.add(done.stdout)
    assert len(outputs) == 1
