"""`statekit lint`, `statekit compile`, `statekit schema`, `statekit rules`."""

from __future__ import annotations

import sys
from pathlib import Path

import click
from click.shell_completion import CompletionItem

from statekit.analysis.explorer import DEFAULT_MAX_CONFIGURATIONS, DEFAULT_MAX_MEMORY
from statekit.analysis.options import ExplorationOptions
from statekit.cli.group import EXIT_CLEAN, EXIT_FINDINGS, EXIT_USAGE
from statekit.cli.output import json_text
from statekit.cli.progress import skip_final_collection, terminal_progress
from statekit.compiler.diagnostics import Diagnostic, Severity
from statekit.compiler.pipeline import compile_file
from statekit.compiler.schema.document import schema_text
from statekit.compiler.serialize import chart_to_json
from statekit.compiler.source.limits import DEFAULT_LIMITS
from statekit.lint.config import ConfigError, find_pyproject, load_project_config
from statekit.lint.format_common import STDIN_NAME
from statekit.lint.formats import FORMATS, format_diagnostics, help_markdown
from statekit.lint.lint_files import (
    LintReport,
    UsageError,
    find_repository_root,
    lint_paths,
    lint_source,
)
from statekit.lint.registry import RULES, rule_infos

STDIN = "-"


def _complete_rules(
    ctx: click.Context, param: click.Parameter, incomplete: str
) -> list[CompletionItem]:
    """Rule names for `--select`/`--ignore`, after any comma-separated ones already typed."""
    done, _, partial = incomplete.rpartition(",")
    prefix = f"{done}," if done else ""
    return [
        CompletionItem(prefix + slug, help=rule.info.summary)
        for slug, rule in sorted(RULES.items())
        if slug.startswith(partial)
    ]


def _rule_list(values: tuple[str, ...]) -> list[str]:
    """`--select a,b --select c` → [a, b, c]."""
    return [name.strip() for value in values for name in value.split(",") if name.strip()]


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
    "-o",
    "--output-file",
    type=click.Path(dir_okay=False, writable=True, path_type=Path),
    help="Write the findings here instead of standard output.",
)
@click.option(
    "-q", "--quiet", is_flag=True, help="Print the findings and nothing else (no summary)."
)
@click.option(
    "--select",
    multiple=True,
    metavar="RULES",
    shell_complete=_complete_rules,
    help="Report only these chart rules (comma-separated, repeatable); compile errors always.",
)
@click.option(
    "--ignore",
    multiple=True,
    metavar="RULES",
    shell_complete=_complete_rules,
    help="Also ignore these rules (comma-separated, repeatable).",
)
@click.option(
    "--exclude",
    multiple=True,
    metavar="PATTERN",
    help="Skip paths matching this gitignore pattern in folder walks (repeatable).",
)
@click.option(
    "--stdin-filename",
    metavar="NAME",
    help="The file name of the chart read from standard input (`-`), for positions and config.",
)
@click.option(
    "--base-dir",
    type=click.Path(file_okay=False, path_type=Path),
    help="Folder that SARIF and GitHub paths are relative to (default: the git top level).",
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
    output_file: Path | None,
    quiet: bool,
    select: tuple[str, ...],
    ignore: tuple[str, ...],
    exclude: tuple[str, ...],
    stdin_filename: str | None,
    base_dir: Path | None,
    config_path: Path | None,
    max_configurations: int,
    max_memory_mib: int,
) -> None:
    """Lint chart files and folders; `-` reads one chart from standard input.

    Folder walks skip what .gitignore files, .git/info/exclude and `exclude`
    name, and lint only YAML files whose first document has a `statechart` key.
    A file named explicitly is always linted.
    """
    read_stdin = STDIN in paths
    if stdin_filename is not None and not read_stdin:
        raise click.UsageError("--stdin-filename names the chart read from `-`: add `-` to PATHS")
    named = [p for p in paths if p != STDIN]
    stdin_name = stdin_filename or STDIN_NAME
    try:
        if config_path is None:
            start = Path(stdin_name).parent if read_stdin and stdin_filename else Path(".")
            config_path = find_pyproject(start.absolute())
        config = load_project_config(config_path).with_command_line(
            select=_rule_list(select), ignore=_rule_list(ignore), exclude=exclude
        )
        options = ExplorationOptions(
            max_configurations=max_configurations,
            max_memory=max_memory_mib << 20,
            progress=terminal_progress,
        )
        report = lint_paths(named, config, options) if named else LintReport((), ())
        source = b""
        if read_stdin:
            source = sys.stdin.buffer.read(DEFAULT_LIMITS.max_bytes + 1)
            linted = lint_source(
                source, stdin_name, config, options, neighbours=stdin_filename is not None
            )
            report = _merged(report, linted)
        skip_final_collection()
    except (ConfigError, UsageError) as exc:
        raise click.UsageError(str(exc)) from exc
    base = base_dir or find_repository_root(Path.cwd()) or Path.cwd()
    sources = None
    if output_format == "sarif":  # the flagged lines' hashes (code scanning's fingerprints)
        sources = _sources(report.diagnostics, {stdin_name: source} if read_stdin else {})
    text = format_diagnostics(
        output_format, report.diagnostics, rule_infos(), base_dir=base.absolute(), sources=sources
    )
    if output_file is None:
        click.echo(text, nl=False)
    else:
        try:
            output_file.write_text(text, encoding="utf-8")
        except OSError as exc:
            raise click.UsageError(f"{output_file}: cannot write: {exc.strerror or exc}") from exc
    if not quiet:
        for folder in report.empty_folders:
            click.echo(
                f"warning: {folder}: no charts in this folder "
                "(YAML files whose first document has a `statechart` key)",
                err=True,
            )
        click.echo(_summary(report), err=True)
    if report.internal_errors:
        sys.exit(EXIT_USAGE)
    sys.exit(EXIT_FINDINGS if report.has_errors else EXIT_CLEAN)


def _sources(diagnostics: tuple[Diagnostic, ...], given: dict[str, bytes]) -> dict[str, str]:
    """The text of each file with a finding (as read: undecodable bytes replaced), from
    `given` or from disk; a file that cannot be read now, is not a regular file or is over
    the size limit is left out."""
    texts: dict[str, str] = {}
    for file in sorted({d.span.file for d in diagnostics}):
        data = given.get(file)
        if data is None:
            try:  # regular files within the size limit only (never wait on a FIFO)
                path = Path(file)
                if not path.is_file() or path.stat().st_size > DEFAULT_LIMITS.max_bytes:
                    continue
                data = path.read_bytes()
            except (OSError, ValueError):
                continue
        texts[file] = data.decode("utf-8", errors="replace")
    return texts


def _merged(first: LintReport, second: LintReport) -> LintReport:
    return LintReport(
        first.files + second.files,
        tuple(sorted(first.diagnostics + second.diagnostics, key=Diagnostic.sort_key)),
        first.internal_errors + second.internal_errors,
        first.skipped + second.skipped,
        first.empty_folders + second.empty_folders,
    )


def _summary(report: LintReport) -> str:
    errors, warnings = report.count(Severity.ERROR), report.count(Severity.WARNING)
    line = f"{len(report.files)} file(s): {errors} error(s), {warnings} warning(s)"
    if report.skipped:
        line += f"; {report.skipped} YAML file(s) skipped (not charts)"
    return line


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
    text = json_text(data, sort_keys=True, indent=2) + "\n"
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
@click.option(
    "--markdown",
    is_flag=True,
    help="Print every rule's documentation as Markdown (docs/rules.md is this output).",
)
def rules(slug: str | None, markdown: bool) -> None:
    """List the lint rules, or print one rule's documentation."""
    if markdown:
        click.echo(rules_markdown(), nl=False)
        return
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


def rules_markdown() -> str:
    """docs/rules.md: one section per rule (its heading is the rule's SARIF `helpUri`)."""
    parts = [
        "# Lint rules\n\n"
        "Written by `statekit rules --markdown > docs/rules.md`; a test checks that this file\n"
        "matches. Each heading is the `helpUri` of its rule in SARIF output.\n"
    ]
    for slug, rule in sorted(RULES.items()):
        _, _, body = help_markdown(rule.info).partition("\n")
        parts.append(
            f"## {slug}\n\n"
            f"{rule.info.summary[:1].upper()}{rule.info.summary[1:]}\n\n"
            f"Stage: {rule.stage}; default severity: {rule.info.default_severity.value}.\n"
            f"{body.rstrip()}\n"
        )
    return "\n".join(parts)
