"""`statekit render` (diagrams of chart files) and `statekit docs` (a Markdown page per chart).

What a docs site holds and how `docs --check` compares it is
`statekit.diagrams.site`; this module reads the files, lints them for the
pages' lint sections and reports.
"""

from __future__ import annotations

import sys
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

import click

from statekit.analysis.answer_groups import answer_groups
from statekit.analysis.explain import explain
from statekit.analysis.options import ExplorationOptions, explore_with
from statekit.analysis.races import races_of
from statekit.cli.group import EXIT_CLEAN, EXIT_FINDINGS, EXIT_USAGE
from statekit.compiler.ir import CompiledChart, StateKind
from statekit.compiler.pipeline import compile_file
from statekit.diagrams.dot import WRAP
from statekit.diagrams.layout import (
    DEFAULT_TIMEOUT,
    INSTALL_HINT,
    LayoutError,
    dot_executable,
    render,
)
from statekit.diagrams.markdown import AnswerTable
from statekit.diagrams.model import EffectDetail, extract
from statekit.diagrams.outputs import Drawing, drawings
from statekit.diagrams.policies import InvariantCheck
from statekit.diagrams.site import (
    SiteChart,
    compare_site,
    plan_site,
    write_if_changed,
    write_site,
)
from statekit.diagrams.views import Split
from statekit.lint.config import ConfigError, find_pyproject, load_project_config
from statekit.lint.formats import format_diagnostics
from statekit.lint.lint_files import UsageError, collect_files, lint_file
from statekit.lint.registry import rule_infos

FORMAT_SUFFIX = {"svg": "svg", "png": "png", "dot": "dot", "mermaid": "mmd"}


@dataclass
class _ExitStatus:
    """The exit code a command ends with; problems are reported as they happen."""

    exit_code: int = EXIT_CLEAN

    def fail(self, code: int, message: str) -> None:
        click.echo(message, err=True)
        self.exit_code = max(self.exit_code, code)


def _compile(path: Path, status: _ExitStatus) -> CompiledChart | None:
    result = compile_file(path)
    if result.chart is None:
        text = format_diagnostics("text", result.diagnostics, rule_infos())
        status.fail(EXIT_FINDINGS, text.rstrip("\n") + f"\n{path}: cannot be drawn (errors above)")
    return result.chart


def _charts(paths: Iterable[str]) -> list[Path]:
    try:
        files = collect_files(paths)
    except UsageError as exc:
        raise click.UsageError(str(exc)) from exc
    stems = [f.stem for f in files]
    clashes = sorted({s for s in stems if stems.count(s) > 1})
    if clashes:
        raise click.UsageError(
            f"several charts would be written as {', '.join(clashes)}: "
            "their file names (without folder) must differ"
        )
    if not files:
        raise click.UsageError("no chart files (*.yaml, *.yml) found")
    return files


split_option = click.option(
    "--split",
    type=click.Choice([s.value for s in Split]),
    default=Split.AUTO.value,
    show_default=True,
    help="An overview plus one drawing per composite state (auto: when one drawing "
    "would be wider than a page or crowded with edges, and above 100 states or 300 "
    "transitions).",
)
effects_option = click.option(
    "--effects",
    type=click.Choice([e.value for e in EffectDetail]),
    default=EffectDetail.SHORT.value,
    show_default=True,
    help="Effects on the diagrams' labels: none, short (summarised: `assign 2; emit "
    "Sent`) or full (every effect with the fields it assigns).",
)
timeout_option = click.option(
    "--timeout",
    type=click.FloatRange(min=0.1),
    default=DEFAULT_TIMEOUT,
    show_default=True,
    help="Seconds Graphviz dot may take per drawing before it is stopped.",
)


@click.command("render")
@click.argument("files", nargs=-1, required=True)
@click.option(
    "-o",
    "--output",
    type=click.Path(file_okay=False, path_type=Path),
    help="Folder to write into (created if needed). DOT and Mermaid go to standard "
    "output without it.",
)
@click.option(
    "--format",
    "formats",
    type=click.Choice(sorted(FORMAT_SUFFIX)),
    multiple=True,
    help="Output format; repeat for several (default: svg).",
)
@split_option
@effects_option
@timeout_option
@click.option(
    "--classifications/--no-classifications",
    default=True,
    show_default=True,
    help="Draw the already/reject table below the chart.",
)
@click.option(
    "--wrap",
    type=click.IntRange(min=10),
    default=WRAP,
    show_default=True,
    help="Wrap edge labels at this many characters.",
)
def render_command(
    files: tuple[str, ...],
    output: Path | None,
    formats: tuple[str, ...],
    split: str,
    effects: str,
    timeout: float,
    classifications: bool,
    wrap: int,
) -> None:
    """Draw charts as SVG, PNG, Graphviz DOT or Mermaid (stateDiagram-v2)."""
    chosen = list(dict.fromkeys(formats or ("svg",)))
    charts = _charts(files)
    images = [f for f in chosen if f in ("svg", "png")]
    if output is None and images:
        raise click.UsageError("SVG and PNG need an output folder (-o DIR)")
    status = _ExitStatus()
    plans = []
    for path in charts:
        chart = _compile(path, status)
        if chart is not None:
            diagram = extract(chart)
            plans.append(
                (
                    path,
                    drawings(
                        diagram,
                        path.stem,
                        split=Split(split),
                        wrap=wrap,
                        classifications=classifications,
                        effects=EffectDetail(effects),
                    ),
                )
            )
    if output is None:
        for _, plan in plans:
            for drawing in plan:
                for fmt in chosen:
                    click.echo(drawing.dot if fmt == "dot" else drawing.mermaid, nl=False)
        sys.exit(status.exit_code)
    output.mkdir(parents=True, exist_ok=True)
    for _, plan in plans:
        for drawing in plan:
            if "dot" in chosen:
                _write(output / f"{drawing.stem}.dot", drawing.dot)
            if "mermaid" in chosen:
                _write(output / f"{drawing.stem}.mmd", drawing.mermaid)
    if images and plans:
        if dot_executable() is None:
            status.fail(EXIT_USAGE, f"statekit: cannot write SVG or PNG: {INSTALL_HINT}")
        else:
            _render_images(plans, images, output, timeout, status)
    sys.exit(status.exit_code)


def _write(path: Path, data: str | bytes) -> None:
    """Write a file unless it already holds `data`, saying so on stderr as `docs` does."""
    if write_if_changed(path, data):
        click.echo(f"wrote {path}", err=True)


def _render_images(
    plans: list[tuple[Path, tuple[Drawing, ...]]],
    formats: list[str],
    output: Path,
    timeout: float,
    status: _ExitStatus,
) -> None:
    for path, plan in plans:
        for drawing in plan:
            for fmt in formats:
                what = f"{path} ({drawing.view.title})"
                try:
                    _write(
                        output / f"{drawing.stem}.{fmt}",
                        render(drawing.dot, fmt, timeout=timeout, what=what),
                    )
                except LayoutError as exc:
                    status.fail(EXIT_USAGE, f"statekit: {exc}")


# -- docs ------------------------------------------------------------------


def _analysed(
    chart: CompiledChart,
) -> tuple[AnswerTable | None, tuple[InvariantCheck, ...], tuple[tuple[str, str], ...]]:
    """What `statekit explain` establishes, for the page: for a chart with orthogonal
    regions how each event is answered across them (the grouped table of `explain
    --table`; None for a chart without regions, whose classification table already gives
    every answer), each invariant's status as `explain` proves it, and the convergent
    pairs of events of `statekit races` (their orders end alike everywhere)."""
    exploration = explore_with(chart, ExplorationOptions())
    explanation = explain(exploration)
    checks = tuple(InvariantCheck(i.name, i.status, i.detail) for i in explanation.invariants)
    convergent = tuple(r.events for r in races_of(exploration).convergent)
    if not any(s.kind is StateKind.PARALLEL for s in chart.states):
        return None, checks, convergent
    rows = tuple(group.cells() for group in answer_groups(explanation))
    return AnswerTable(rows, explanation.complete), checks, convergent


@click.command("docs")
@click.argument("paths", nargs=-1, required=True)
@click.option(
    "-o",
    "--output",
    type=click.Path(file_okay=False, path_type=Path),
    required=True,
    help="Folder of the generated pages (created if needed).",
)
@click.option(
    "--check",
    is_flag=True,
    help="Write nothing; exit 1 and name the files that differ from what the charts give "
    "(Markdown and DOT compared; SVG and PNG images only checked to exist).",
)
@click.option(
    "--force", is_flag=True, help="Re-render every image, even when its DOT is unchanged."
)
@split_option
@effects_option
@timeout_option
def docs_command(
    paths: tuple[str, ...],
    output: Path,
    check: bool,
    force: bool,
    split: str,
    effects: str,
    timeout: float,
) -> None:
    """Write a Markdown page per chart (diagram, tables, lint summary) and an index."""
    try:
        config = load_project_config(find_pyproject(Path.cwd()))
    except ConfigError as exc:
        raise click.UsageError(str(exc)) from exc
    status = _ExitStatus()
    charts = []
    for path in _charts(paths):
        chart = _compile(path, status)
        if chart is None:  # its diagnostics are printed
            continue
        answers, invariants, convergent = _analysed(chart)
        findings = tuple(lint_file(path, config))
        charts.append(SiteChart(path, chart, findings, answers, invariants, convergent))
    plan = plan_site(charts, output, split=Split(split), effects=EffectDetail(effects))
    command = f"statekit docs {' '.join(paths)} -o {output}"
    if check:
        differences = compare_site(output, plan)
        for difference in differences:
            click.echo(str(difference))
        if differences:
            status.fail(
                EXIT_FINDINGS,
                f"{len(differences)} generated file(s) differ from the charts; run `{command}`",
            )
        else:
            click.echo(f"{output}: up to date ({plan.file_count} files)", err=True)
        sys.exit(status.exit_code)
    done = write_site(
        output, plan, force=force, timeout=timeout, can_render=dot_executable() is not None
    )
    for path in done.removed:
        click.echo(f"removed {path}", err=True)
    for path in done.written:
        click.echo(f"wrote {path}", err=True)
    if done.pending_images:
        status.fail(
            EXIT_USAGE, f"statekit: the SVG and PNG images were not written: {INSTALL_HINT}"
        )
    for failure in done.failures:
        status.fail(EXIT_USAGE, f"statekit: {failure}")
    sys.exit(status.exit_code)
