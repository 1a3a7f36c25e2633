"""`statekit diff` (what changed between two versions of a chart) and `statekit migrate`
(move stored instances to a newer version of their chart).

`diff OLD NEW` compares two chart files, `diff FILE --rev REV` the file with
its text at a git revision (`git show REV:./FILE`, run in the file's folder).
Exit 0 when behaviour is unchanged or the version was bumped, 1 when behaviour
changed and the version did not (for CI), 2 for usage errors (a chart that
does not compile, a revision git cannot show, two different charts).

`migrate --db URL --chart NEW` migrates every instance of an earlier version
of the chart that maps (`Runner.migrate`), reports each stranded one with its
configuration and why, and touches none of those; run again, it finds nothing
to do. Exit 1 when any instance is stranded or cannot be read; exit 2, with
nothing written, when the store holds the chart's version with another digest
(`chart_versions.refuse_changed_version`).
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import click

from statekit.analysis.diff import ChartDiff, diff_charts
from statekit.cli.diff_text import diff_lines
from statekit.cli.group import EXIT_CLEAN, EXIT_FINDINGS, EXIT_USAGE
from statekit.cli.output import echo_json
from statekit.cli.refusals import runner_refusal
from statekit.compiler.ir import CompiledChart
from statekit.compiler.pipeline import CompileResult, compile_file, compile_source
from statekit.compiler.terminal_text import terminal_text
from statekit.engine.chart import Chart
from statekit.lint.formats import format_diagnostics
from statekit.lint.registry import rule_infos
from statekit.runner.errors import RunnerError
from statekit.runner.migration import MigrationReport
from statekit.runner.runner import Runner
from statekit.runner.store import open_existing_store, open_read_only_store


def _chart_or_exit(result: CompileResult, what: str) -> CompiledChart:
    if result.chart is None:
        click.echo(format_diagnostics("text", result.diagnostics, rule_infos()), nl=False, err=True)
        click.echo(f"statekit diff: {what} does not compile", err=True)
        sys.exit(EXIT_USAGE)
    return result.chart


def revision_problem(rev: str) -> str | None:
    """Why `rev` is no git revision `diff --rev` passes on (None: it may be one).

    A revision never starts with `-` (git would read it as an option), and never holds
    white space, a control character or `:` (which would name another file)."""
    if not rev:
        return "a revision is not empty"
    if rev.startswith("-"):
        return "a revision does not start with '-'"
    if any(c.isspace() or not c.isprintable() or c == ":" for c in rev):
        return "a revision holds no white space, control character or ':'"
    return None


def _at_revision(path: str, rev: str) -> CompileResult:
    """The chart file's text at git revision `rev`, compiled (a usage error when git
    cannot show it)."""
    problem = revision_problem(rev)
    if problem is not None:
        raise click.UsageError(f"--rev {rev!r}: {problem}")
    file = Path(path)
    try:
        done = subprocess.run(  # after --end-of-options, git reads no argument as an option
            ["git", "-C", str(file.parent), "show", "--end-of-options", f"{rev}:./{file.name}"],
            capture_output=True,
            check=False,
        )
    except OSError as exc:
        raise click.UsageError(f"cannot run git: {exc}") from exc
    if done.returncode != 0:
        why = done.stderr.decode("utf-8", "replace").strip() or "git show failed"
        raise click.UsageError(f"{path} at revision {rev!r}: {why}")
    try:
        text = done.stdout.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise click.UsageError(f"{path} at revision {rev!r} is not UTF-8 text") from exc
    return compile_source(text, f"{rev}:{path}")


@click.command("diff")
@click.argument("old", type=click.Path(exists=True, dir_okay=False))
@click.argument("new", type=click.Path(exists=True, dir_okay=False), required=False)
@click.option("--rev", help="Compare OLD's text at this git revision (old) with OLD (new).")
@click.option("--format", "output_format", type=click.Choice(["text", "json"]), default="text")
def diff_command(old: str, new: str | None, rev: str | None, output_format: str) -> None:
    """The behavioural differences between two versions of a chart: OLD NEW, or one file
    against a git revision (--rev). Exit 1 when behaviour changed and the version did
    not."""
    if (new is None) == (rev is None):
        raise click.UsageError("give two chart files, or one chart file and --rev REV")
    if rev is not None:
        before = _chart_or_exit(_at_revision(old, rev), f"{old} at revision {rev!r}")
        after = _chart_or_exit(compile_file(old), old)
    else:
        assert new is not None
        before = _chart_or_exit(compile_file(old), old)
        after = _chart_or_exit(compile_file(new), new)
    if before.name != after.name:
        raise click.UsageError(
            f"{before.name!r} and {after.name!r} are different charts, not two versions of one"
        )
    found = diff_charts(before, after)
    _print_diff(found, output_format)
    sys.exit(found.exit_code)


def _print_diff(found: ChartDiff, output_format: str) -> None:
    if output_format == "json":
        echo_json(found.to_data())
    else:
        click.echo("\n".join(map(terminal_text, diff_lines(found))))
    if found.exit_code:
        click.echo(
            f"chart {found.name!r} changed behaviour but not its version "
            f"({found.old_version}): bump `version:`",
            err=True,
        )


@click.command("migrate")
@click.option("--db", "url", required=True, help="Store URL: sqlite:///path.db or postgresql://…")
@click.option(
    "--chart",
    "chart_file",
    required=True,
    type=click.Path(exists=True, dir_okay=False),
    help="The newer chart version to migrate instances to.",
)
@click.option("--dry-run", is_flag=True, help="Report what would be migrated; write nothing.")
@click.option(
    "--instance",
    "instances",
    multiple=True,
    help="Migrate only this instance (repeatable; default: every instance of the chart).",
)
@click.option("--format", "output_format", type=click.Choice(["text", "json"]), default="text")
def migrate_command(
    url: str, chart_file: str, dry_run: bool, instances: tuple[str, ...], output_format: str
) -> None:
    """Migrate the stored instances of earlier versions of the chart to the version in
    --chart; report every stranded instance (its configuration and why) and leave it
    as it is. Idempotent; exit 1 when any instance is stranded or cannot be read."""
    result = compile_file(chart_file)
    if result.chart is None:
        click.echo(format_diagnostics("text", result.diagnostics, rule_infos()), nl=False, err=True)
        sys.exit(EXIT_FINDINGS)
    chart = Chart(result.chart, source=result.source)
    try:  # a dry run only reads; neither creates a store (a typo makes no empty one)
        store = open_read_only_store(url) if dry_run else open_existing_store(url)
        runner = Runner(chart, store)
        names = instances or tuple(
            i.instance_id for i in runner.store.instance_charts() if i.chart_name == chart.name
        )
    except RunnerError as exc:
        raise runner_refusal(exc) from exc
    counts: dict[str, int] = {}
    for instance_id in names:
        try:
            report = runner.migrate(instance_id, dry_run=dry_run)
        except (RunnerError, ValueError) as exc:
            counts["ERROR"] = counts.get("ERROR", 0) + 1
            _print_error(instance_id, str(exc), output_format)
            continue
        counts[report.status] = counts.get(report.status, 0) + 1
        _print_report(report, output_format)
    summary = ", ".join(f"{n} {status.lower().replace('_', ' ')}" for status, n in counts.items())
    click.echo(f"{len(names)} instance(s){': ' + summary if summary else ''}", err=True)
    failed = counts.get("STRANDED", 0) + counts.get("ERROR", 0)
    sys.exit(EXIT_FINDINGS if failed else EXIT_CLEAN)


def _print_report(report: MigrationReport, output_format: str) -> None:
    if output_format == "json":
        echo_json(report.to_data())
        return
    before = "{" + ", ".join(report.configuration) + "}"
    after = "{" + ", ".join(report.mapped_configuration) + "}"
    where = f"v{report.from_version} → v{report.to_version}"
    if report.status == "STRANDED":
        click.echo(
            terminal_text(f"{report.instance_id}: STRANDED in {before} ({where}): {report.reason}")
        )
    elif report.status == "CURRENT":
        click.echo(f"{report.instance_id}: CURRENT (version {report.to_version})")
    else:
        at = f" at sequence {report.sequence}" if report.sequence is not None else ""
        click.echo(
            terminal_text(f"{report.instance_id}: {report.status} {where}{at}: {before} → {after}")
        )


def _print_error(instance_id: str, message: str, output_format: str) -> None:
    if output_format == "json":
        data = {"instance": instance_id, "status": "ERROR", "reason": message}
        echo_json(data)
    else:
        click.echo(terminal_text(f"{instance_id}: ERROR {message}"))
