"""`statekit prune`: remove what the store no longer needs, in short batches.

A cron-able command (docs/retention.md): delivered outbox messages older than
`--delivered-before` (7 days unless told), inbox rows older than the dedupe
window `--inbox-before` (only when given), audited rejections older than
`--rejections-before` (only when given) and, with `--events-before-snapshot`,
the payload and evidence of the events before each clean instance's newest
snapshot (`statekit.runner.retention`). `--dry-run` counts what would go and
changes nothing. Exit 0 when done, 1 when an instance was left unthinned
because `verify` finds it damaged (everything else was still pruned), 2 on a
usage error (a duration out of form, a store that cannot be opened). Several `--db`
are a shard set (`shard_options`): each shard is pruned in turn, with a report each.
"""

from __future__ import annotations

import sys

import click

from statekit.cli.chart_paths import chart_files
from statekit.cli.group import EXIT_CLEAN, EXIT_FINDINGS
from statekit.cli.output import echo_json, echo_text
from statekit.cli.refusals import runner_refusal
from statekit.cli.runner_commands import compiled_chart
from statekit.cli.shard_options import db_option, open_cli_shards
from statekit.runner.chart_versions import refuse_changed_version
from statekit.runner.errors import RunnerError
from statekit.runner.retention import (
    DEFAULT_BATCH,
    MAX_BATCH,
    PruneReport,
    RetentionPolicy,
    parse_age,
    prune,
)
from statekit.runner.store import open_existing_store, open_read_only_store
from statekit.runner.store.base import Store

NEVER = "never"
"""The `--delivered-before` value that keeps every delivered message."""


def _age(value: str | None, option: str) -> float | None:
    """Seconds of a duration option (None: not given, or `never`), or a usage error."""
    if value is None or value.strip().lower() == NEVER:
        return None
    try:
        return parse_age(value, option)
    except RunnerError as exc:
        raise click.BadParameter(str(exc).split(": ", 1)[1], param_hint=option) from exc


@click.command("prune")
@db_option
@click.option(
    "--delivered-before",
    "delivered",
    default="7d",
    show_default=True,
    metavar="AGE",
    help="Remove outbox messages delivered longer ago than AGE (7d, 12h, 30m, 1d12h; "
    "'never' keeps them all).",
)
@click.option(
    "--inbox-before",
    "inbox",
    metavar="WINDOW",
    help="Remove inbox rows processed longer ago than WINDOW, the consumers' dedupe window: "
    "a message redelivered later than that is processed again. Kept when not given.",
)
@click.option(
    "--rejections-before",
    "rejections",
    metavar="AGE",
    help="Remove audited rejections recorded longer ago than AGE. Kept when not given.",
)
@click.option(
    "--events-before-snapshot",
    is_flag=True,
    help="Thin the events before each clean instance's newest snapshot (their IDs, "
    "sequences, keys and payload hashes stay; payloads and evidence go).",
)
@click.option(
    "--chart",
    "charts",
    multiple=True,
    type=click.Path(exists=True),
    help="A chart file or a folder of charts (repeatable) for --events-before-snapshot's "
    "check; charts whose source the store kept are found there.",
)
@click.option(
    "--batch",
    type=click.IntRange(1, MAX_BATCH),
    default=DEFAULT_BATCH,
    show_default=True,
    help="Rows per transaction.",
)
@click.option("--dry-run", is_flag=True, help="Count what would go; change nothing.")
@click.option("--format", "output_format", type=click.Choice(["text", "json"]), default="text")
def prune_command(
    urls: tuple[str, ...],
    delivered: str,
    inbox: str | None,
    rejections: str | None,
    events_before_snapshot: bool,
    charts: tuple[str, ...],
    batch: int,
    dry_run: bool,
    output_format: str,
) -> None:
    """Remove delivered outbox messages, old inbox rows and rejections and (opted in)
    events before a snapshot, in short batches; exit 1 when an instance was skipped
    because verify finds it damaged."""
    policy = RetentionPolicy(
        delivered_age=_age(delivered, "--delivered-before"),
        inbox_age=_age(inbox, "--inbox-before"),
        rejections_age=_age(rejections, "--rejections-before"),
        events_before_snapshot=events_before_snapshot,
        batch=batch,
        dry_run=dry_run,
    )
    given = [compiled_chart(path) for path in chart_files(charts)]
    stores = _opened(urls, dry_run=dry_run)
    reports: list[tuple[int | None, PruneReport]] = []
    try:
        for index, store in enumerate(stores):
            refuse_changed_version(store, given)
            reports.append((index + 1 if len(stores) > 1 else None, prune(store, policy, given)))
    except RunnerError as exc:
        raise runner_refusal(exc) from exc
    finally:
        for store in stores:
            store.close()
    for shard, report in reports:
        _show(report, output_format, shard, len(stores))
    sys.exit(EXIT_FINDINGS if any(report.damaged for _, report in reports) else EXIT_CLEAN)


def _opened(urls: tuple[str, ...], *, dry_run: bool) -> list[Store]:
    """The store at each URL, never created (read-only for a dry run); several URLs are a
    shard set, checked as one (`shard_options`: given otherwise, a usage error)."""
    for url in urls:  # a missing store is refused before anything is opened to write
        try:
            (open_read_only_store if dry_run else open_existing_store)(url).close()
        except RunnerError as exc:
            raise click.UsageError(str(exc)) from exc
    if len(urls) > 1:
        return list(open_cli_shards(urls, read_only=dry_run).stores)
    try:
        return [open_read_only_store(urls[0]) if dry_run else open_existing_store(urls[0])]
    except RunnerError as exc:
        raise click.UsageError(str(exc)) from exc


def _show(report: PruneReport, output_format: str, shard: int | None, count: int) -> None:
    """One store's report (of shard `shard` of a set of `count`, counted from 1 as
    `statekit outbox` and the shard set's messages count: a `"shard"` field, a
    `shard N of COUNT: ` prefix)."""
    if output_format == "json":
        echo_json(report.to_data() if shard is None else {"shard": shard, **report.to_data()})
        return
    verb = "would remove" if report.dry_run else "removed"
    where = "" if shard is None else f"shard {shard} of {count}: "
    click.echo(
        f"{where}{verb}: {report.outbox_messages} delivered message(s), {report.inbox_rows} inbox "
        f"row(s), {report.rejections} rejection(s); "
        f"{'would thin' if report.dry_run else 'thinned'} {report.events_thinned} event(s)"
    )
    for instance_id, through in report.instances_thinned:
        echo_text(f"  {instance_id}: events through #{through} (its newest snapshot)")
    for skipped in report.skipped:
        echo_text(f"  {instance_id_text(skipped.instance_id)}: skipped: {skipped.reason}")
    if not report.dry_run:
        click.echo(
            f"{report.batches} batch(es), the longest {report.longest_batch_seconds * 1000:.1f} ms",
            err=True,
        )


def instance_id_text(instance_id: str) -> str:
    """An instance ID as the text report shows it (quoted when it has spaces or controls)."""
    plain = instance_id.isprintable() and " " not in instance_id
    return instance_id if plain else repr(instance_id)
