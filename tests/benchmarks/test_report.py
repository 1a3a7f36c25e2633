"""bench/README.md is rendered from recorded rows, never edited by hand; every bench
module reports through `bench.record` (or is listed as printing only). The benchmarks
themselves are not run here."""

from __future__ import annotations

import ast
import importlib
import json
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:  # `bench` is a folder of scripts at the root, not installed
    sys.path.insert(0, str(ROOT))

bench = importlib.import_module("bench")
report = importlib.import_module("bench.report")
run_all = importlib.import_module("bench.run_all")

DASH, TIMES = bench.EN_DASH, bench.TIMES

TEMPLATE = """# Benchmarks

<!-- bench:machine -->

## Headline

<!-- bench:headline -->

## Engine (`engine_core`)

Prose kept by hand.

<!-- bench:table engine_core -->

## Memory (`explore_scaling memory`)

<!-- bench:table explore_scaling memory -->

## Printing only (`peers`)

<!-- bench:table peers -->

## Not run (`scale_out`)

<!-- bench:table scale_out -->
"""


def write_run(out: Path, name: str, arguments: list[str], printed: str = "", code: int = 0) -> None:
    path = out / "run" / f"{'_'.join([name, *arguments])}.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    run = {
        "name": name,
        "mode": " ".join(arguments),
        "arguments": [*arguments, "--rounds", "2"],
        "date": "2026-12-05 00:10 UTC",
        "load_before": [1.5, 1.25, 1.0],
        "load_after": [2.75, 1.5, 1.0],
        "wall_s": 12.5,
        "returncode": code,
        "printed": printed,
    }
    path.write_text(json.dumps(run))


@pytest.fixture
def sample_run(tmp_path: Path) -> Path:
    """build/bench/ as a run leaves it: rows of two modules, a printing one, the machine."""
    ratio = bench.Spread.of([2.47, 2.27, 2.93])
    bench.record(
        "engine_core",
        [
            bench.Row(
                what="flat chart, general path",
                statekit=bench.Spread.of([689e3, 594e3, 733e3]).text("ev/s"),
                limit="hand reducer " + bench.Spread.of([1.71e6, 1.6e6, 1.8e6]).text("ev/s"),
                ratio=ratio.text(bench.TIMES, digits=2),
                aim="at most 3" + bench.TIMES,
                met=ratio.median <= 3,
                headline=True,
            ),
            bench.Row(what="task chart | evidence", statekit="60 k ev/s"),
        ],
        tmp_path,
    )
    bench.record(
        "explore_scaling",
        [bench.Row(what="3 x 40", statekit="66 MB", aim="300 MB", met=False, table="memory")],
        tmp_path,
    )
    write_run(tmp_path, "engine_core", [])
    write_run(tmp_path, "explore_scaling", ["memory"], code=1)
    write_run(tmp_path, "peers", [], printed="statekit  636 k ev/s\n```odd```\n")
    machine = {"date": "2026-12-05 00:00 UTC", "revision": "abc1234", "cpu": "Some CPU"}
    (tmp_path / "machine.json").write_text(json.dumps({**machine, "load": [0.5, 0.25, 0.0]}))
    return tmp_path


def test_rows_become_the_tables_at_their_markers(sample_run: Path) -> None:
    readme = report.render(TEMPLATE, report.load_results(sample_run))
    engine = readme.split("<!-- bench:table engine_core -->")[1].split("<!-- /bench -->")[0]
    assert f"| flat chart, general path | 689 k ev/s (594 k{DASH}733 k) |" in engine
    # the ratio's "2." escaped, so that no Markdown reads it as a list item
    assert f"| 2\\.47{TIMES} (2.27{DASH}2.93) | at most 3{TIMES} | yes |" in engine
    assert "task chart \\| evidence" in engine  # a pipe cannot break the table
    assert "load average 1.50 / 1.25 / 1.00 → 2.75 / 1.50 / 1.00; 12.5 s wall" in engine
    memory = readme.split("<!-- bench:table explore_scaling memory -->")[1].split("## ")[0]
    assert "| 3 x 40 | 66 MB |  |  | 300 MB | **no** |" in memory
    assert "exited with status 1" in memory
    assert "`python -m bench.explore_scaling memory --rounds 2`" in memory
    assert "3 x 40" not in engine


def test_headline_rows_are_gathered_with_their_module(sample_run: Path) -> None:
    readme = report.render(TEMPLATE, report.load_results(sample_run))
    headline = readme.split("<!-- bench:headline -->")[1].split("<!-- /bench -->")[0]
    assert "flat chart, general path" in headline
    assert "| `engine_core` |" in headline
    assert "task chart" not in headline
    machine = readme.split("<!-- bench:machine -->")[1].split("<!-- /bench -->")[0]
    assert "2026-12-05 00:00 UTC" in machine and "`abc1234`" in machine
    assert "0.50 / 0.25 / 0.00" in machine


def test_a_module_without_rows_is_quoted_or_said_missing(sample_run: Path) -> None:
    readme = report.render(TEMPLATE, report.load_results(sample_run))
    peers = readme.split("<!-- bench:table peers -->")[1].split("<!-- /bench -->")[0]
    assert "````text\nstatekit  636 k ev/s\n```odd```\n````" in peers
    assert "`python -m bench.scale_out` was not measured in this run" in readme


def test_the_template_comes_back_from_the_rendered_readme(sample_run: Path) -> None:
    readme = report.render(TEMPLATE, report.load_results(sample_run))
    assert report.template_of(readme) == TEMPLATE
    assert report.template_of(readme.replace("Prose kept", "Prose edited")) != TEMPLATE


def test_bench_readme_is_the_template_rendered() -> None:
    """Nothing in bench/README.md outside its generated tables was edited by hand."""
    readme = (ROOT / "bench" / "README.md").read_text(encoding="utf-8")
    template = (ROOT / "bench" / "README.template.md").read_text(encoding="utf-8")
    assert report.template_of(readme) == template


def test_the_repository_readme_quotes_the_headline_rows(sample_run: Path) -> None:
    results = report.load_results(sample_run)
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert readme.count(report.QUOTE_BEGIN) == 1 and readme.count(report.QUOTE_END) == 1
    quoted = report.quote_headline(readme, results)
    assert f"| flat chart, general path | 689 k ev/s (594 k{DASH}733 k) |" in quoted
    assert report.quote_headline(quoted, results) == quoted
    bench_readme = (ROOT / "bench" / "README.md").read_text(encoding="utf-8")
    committed = bench_readme.split("<!-- bench:headline -->\n")[1].split("\n<!-- /bench -->")[0]
    assert f"{report.QUOTE_BEGIN}\n{committed}\n{report.QUOTE_END}" in readme


def test_a_row_cannot_be_met_without_an_aim() -> None:
    with pytest.raises(ValueError, match="without an aim"):
        bench.Row(what="x", statekit="1", met=True)


def records_rows(source: str) -> bool:
    """Whether a module imports `record` from `bench` and calls it."""
    tree = ast.parse(source)
    imported = any(
        isinstance(node, ast.ImportFrom)
        and node.module == "bench"
        and any(alias.name == "record" for alias in node.names)
        for node in ast.walk(tree)
    )
    called = any(
        isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "record"
        for node in ast.walk(tree)
    )
    return imported and called


@pytest.mark.parametrize("name", run_all.bench_modules())
def test_every_bench_module_runs_from_main_and_records_rows(name: str) -> None:
    module = importlib.import_module(f"bench.{name}")
    assert callable(getattr(module, "main", None)), f"bench/{name}.py has no main()"
    source = (ROOT / "bench" / f"{name}.py").read_text(encoding="utf-8")
    if name in run_all.PRINTED_ONLY:
        assert not records_rows(source), f"{name} records rows: drop it from PRINTED_ONLY"
    else:
        assert records_rows(source), f"{name} neither records rows nor is in PRINTED_ONLY"
    template = (ROOT / "bench" / "README.template.md").read_text(encoding="utf-8")
    for arguments in run_all.ARGUMENTS.get(name, [[]]):
        marker = " ".join(["<!-- bench:table", name, *arguments, "-->"])
        assert f"\n{marker}\n" in template, f"no {marker} in bench/README.template.md"


def test_printed_only_names_existing_modules() -> None:
    modules = set(run_all.bench_modules())
    assert not run_all.PRINTED_ONLY - modules
    assert not set(run_all.ARGUMENTS) - modules
