"""`statekit import-scxml` and `statekit export-scxml`: SCXML in and out (statekit.scxml)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import click

from statekit.cli.group import EXIT_FINDINGS, EXIT_USAGE
from statekit.compiler.ir import CompiledChart
from statekit.compiler.pipeline import compile_file
from statekit.lint.formats import format_diagnostics
from statekit.lint.registry import rule_infos
from statekit.scxml import ScxmlError, Translation, chart_of, chart_yaml, read_scxml
from statekit.scxml.export_document import export_scxml
from statekit.scxml.export_family import ChartSet


@click.command("import-scxml")
@click.argument("file", type=click.Path(path_type=Path))
@click.option(
    "-o",
    "--output",
    type=click.Path(dir_okay=False, path_type=Path),
    help="Write the chart here (default: standard output); the charts it invokes go "
    "next to it, as OUT.<invoke id>.yaml.",
)
def import_scxml_command(file: Path, output: Path | None) -> None:
    """Translate the SCXML FILE into a statekit chart; exit 2 with a positioned
    error naming the first SCXML feature statekit cannot express."""
    try:
        translation = chart_of(read_scxml(file), str(file), file.stem)
    except ScxmlError as error:
        click.echo(str(error), err=True)
        raise SystemExit(EXIT_USAGE) from None
    files = dict(_files(translation, output))
    if output is None and len(files) > 1:
        click.echo(
            f"{file}: error[scxml] the document invokes other documents, each a chart of its "
            "own: give -o OUT.yaml to write them next to it",
            err=True,
        )
        raise SystemExit(EXIT_USAGE)
    for _, written in files.items():
        for note in written.notes:
            click.echo(note, err=True)
    if output is None:
        click.echo(chart_yaml(translation), nl=False)
        return
    for path, written in files.items():  # an OSError: main() says what the path is
        path.write_text(chart_yaml(written), encoding="utf-8")


def _files(translation: Translation, output: Path | None) -> Iterator[tuple[Path, Translation]]:
    """The chart at `output` and each chart it invokes at `output.<invoke id>.yaml`."""
    path = output or Path("-")
    yield path, translation
    for invoke_id, child in translation.children:
        yield from _files(
            child, path.with_name(f"{path.name.removesuffix('.yaml')}.{invoke_id}.yaml")
        )


@click.command("export-scxml")
@click.argument("chart", type=click.Path(path_type=Path))
@click.option(
    "-o",
    "--output",
    type=click.Path(dir_okay=False, path_type=Path),
    help="Write the SCXML document here (default: standard output).",
)
@click.option(
    "--host-timers",
    is_flag=True,
    help="Leave timers whose due time is an expression (delay: expr, at:) to the host "
    "that runs the document, instead of refusing them.",
)
@click.option(
    "--chart",
    "given",
    multiple=True,
    type=click.Path(dir_okay=False, path_type=Path),
    help="A chart CHART invokes (repeatable); by default the charts in CHART's folder.",
)
def export_scxml_command(
    chart: Path, output: Path | None, host_timers: bool, given: tuple[Path, ...]
) -> None:
    """Write the statekit CHART as an SCXML document that python-statemachine runs
    (each chart it invokes inline in its <invoke>); exit 1 when a chart does not
    compile, 2 with a positioned error naming the first feature SCXML cannot express
    faithfully."""
    result = compile_file(chart)
    if result.chart is None:
        click.echo(format_diagnostics("text", result.diagnostics, rule_infos()), nl=False, err=True)
        raise SystemExit(EXIT_FINDINGS)
    charts = ChartSet()
    if result.chart.invocations:
        charts = ChartSet.of([*_folder_charts(chart), *_given_charts(given)])
    try:
        exported = export_scxml(result.chart, host_timers=host_timers, charts=charts)
    except ScxmlError as error:
        click.echo(str(error), err=True)
        raise SystemExit(EXIT_USAGE) from None
    _write(exported.text, output)


def _given_charts(files: tuple[Path, ...]) -> Iterator[CompiledChart]:
    """The `--chart` files compiled (one that does not compile: its diagnostics, exit 1)."""
    for file in files:
        result = compile_file(file)
        if result.chart is None:
            rendered = format_diagnostics("text", result.diagnostics, rule_infos())
            click.echo(rendered, nl=False, err=True)
            raise SystemExit(EXIT_FINDINGS)
        yield result.chart


def _folder_charts(chart: Path) -> Iterator[CompiledChart]:
    """The other charts in `chart`'s folder that compile (a YAML file that is no chart,
    or a broken one, is not a chart the export can be given: an invoke of it is refused
    by name)."""
    for file in sorted(chart.resolve().parent.glob("*.y*ml")):
        if file.suffix in (".yaml", ".yml") and file != chart.resolve():
            found = compile_file(file).chart
            if found is not None:
                yield found


def _write(text: str, output: Path | None) -> None:
    if output is None:
        click.echo(text, nl=False)
        return
    output.write_text(text, encoding="utf-8")  # an OSError: main() says what the path is
