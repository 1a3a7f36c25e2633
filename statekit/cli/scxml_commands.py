"""`statekit import-scxml`: an SCXML file as a statekit YAML chart (statekit.scxml)."""

from __future__ import annotations

from pathlib import Path

import click

from statekit.cli.group import EXIT_USAGE
from statekit.scxml import ScxmlError, chart_of, chart_yaml, read_scxml


@click.command("import-scxml")
@click.argument("file", type=click.Path(path_type=Path))
@click.option(
    "-o",
    "--output",
    type=click.Path(dir_okay=False, path_type=Path),
    help="Write the chart here (default: standard output).",
)
def import_scxml_command(file: Path, output: Path | None) -> None:
    """Translate the SCXML FILE into a statekit chart; exit 2 with a positioned
    error naming the first SCXML feature statekit cannot express."""
    try:
        translation = chart_of(read_scxml(file), str(file), file.stem)
    except ScxmlError as error:
        click.echo(str(error), err=True)
        raise SystemExit(EXIT_USAGE) from None
    for note in translation.notes:
        click.echo(note, err=True)
    text = chart_yaml(translation)
    if output is None:
        click.echo(text, nl=False)
        return
    output.write_text(text, encoding="utf-8")  # an OSError: main() says what the path is
