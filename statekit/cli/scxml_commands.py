"""`statekit import-scxml`: an SCXML file as a statekit YAML chart (statekit.scxml)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import click

from statekit.cli.group import EXIT_USAGE
from statekit.scxml import ScxmlError, Translation, chart_of, chart_yaml, read_scxml


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
