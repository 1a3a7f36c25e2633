"""`statekit lint`, `statekit compile`, `statekit schema`, `statekit rules`."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import click

from statekit.analysis.explorer import DEFAULT_MAX_CONFIGURATIONS, DEFAULT_MAX_MEMORY
from statekit.analysis.options import ExplorationOptions
from statekit.cli.group import EXIT_CLEAN, EXIT_FINDINGS, EXIT_USAGE
from statekit.cli.progress import skip_final_collection, terminal_progress
from statekit.compiler.diagnostics import Severity
from statekit.compiler.pipeline import compile_file
from statekit.compiler.schema.document import schema_text
from statekit.compiler.serialize import chart_to_json
from statekit.lint.config import ConfigError, find_pyproject, load_project_config
from statekit.lint.formats import FORMATS, format_diagnostics
from statekit.lint.lint_files import UsageError, lint_paths
from statekit.lint.registry import RULES, rule_infos


@click.command()
@click.argument("paths", nargs=-1, required=True)
@click.option(
    "--format",
    "output_format",
    type=click.Choice(sorted(FORMATS)),
    default="text",
    show_default=True,
    help="Output format.",
)
@click.option(
    "--config",
    "config_path",
    type=click.Path(dir_okay=False, path_type=Path),
    help="pyproject.toml to read [tool.statekit.lint] from (default: the nearest one).",
)
@click.option(
    "--max-configurations",
    type=click.IntRange(min=1),
    default=DEFAULT_MAX_CONFIGURATIONS,
    show_default=True,
    help="Bound on the abstract states the analysis rules explore per chart.",
)
@click.option(
    "--max-memory",
    "max_memory_mib",
    type=click.IntRange(min=1),
    default=DEFAULT_MAX_MEMORY >> 20,
    show_default=True,
    help="Bound on the memory (MiB) an exploration may grow the process by, per chart.",
)
def lint(
    paths: tuple[str, ...],
    output_format: str,
    config_path: Path | None,
    max_configurations: int,
    max_memory_mib: int,
) -> None:
    """Lint chart files and folders (*.yaml, *.yml)."""
    try:
        config = load_project_config(config_path or find_pyproject(Path.cwd()))
        options = ExplorationOptions(
            max_configurations=max_configurations,
            max_memory=max_memory_mib << 20,
            progress=terminal_progress,
        )
        report = lint_paths(paths, config, options)
        skip_final_collection()
    except (ConfigError, UsageError) as exc:
        raise click.UsageError(str(exc)) from exc
    text = format_diagnostics(output_format, report.diagnostics, rule_infos())
    click.echo(text, nl=False)
    if output_format == "text":
        errors, warnings = report.count(Severity.ERROR), report.count(Severity.WARNING)
        click.echo(
            f"{len(report.files)} file(s): {errors} error(s), {warnings} warning(s)", err=True
        )
    if report.internal_errors:
        sys.exit(EXIT_USAGE)
    sys.exit(EXIT_FINDINGS if report.has_errors else EXIT_CLEAN)


@click.command("compile")
@click.argument("file", type=click.Path(exists=True, dir_okay=False))
@click.option(
    "-o",
    "--output",
    type=click.Path(dir_okay=False, path_type=Path),
    help="Write the IR here instead of standard output.",
)
@click.option("--no-positions", is_flag=True, help="Leave out source positions and descriptions.")
def compile_command(file: str, output: Path | None, no_positions: bool) -> None:
    """Compile FILE and write its IR as JSON (stable, sorted)."""
    result = compile_file(file)
    if result.chart is None:
        click.echo(format_diagnostics("text", result.diagnostics, rule_infos()), nl=False, err=True)
        sys.exit(EXIT_FINDINGS)
    data = chart_to_json(result.chart, positions=not no_positions)
    text = json.dumps(data, sort_keys=True, indent=2, ensure_ascii=False) + "\n"
    if output is None:
        click.echo(text, nl=False)
    else:
        output.write_text(text, encoding="utf-8")


@click.command()
def schema() -> None:
    """Print the JSON Schema of the DSL (for editors and yaml-language-server)."""
    click.echo(schema_text(), nl=False)


@click.command()
@click.argument("slug", required=False)
def rules(slug: str | None) -> None:
    """List the lint rules, or print one rule's documentation."""
    if slug is None:
        for rule in RULES.values():
            click.echo(
                f"{rule.info.slug:24} {rule.info.default_severity.value:8} {rule.info.summary}"
            )
        return
    chosen = RULES.get(slug)
    if chosen is None:
        raise click.UsageError(f"unknown rule '{slug}' (see `statekit rules`)")
    click.echo(chosen.info.doc)
