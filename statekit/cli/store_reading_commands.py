"""`statekit verify` and `statekit outbox`: the commands that read what a store holds.

Both open the store read-only (`open_cli_reader`: nothing is created, upgraded or
written) and take `--db` once for a store or several times for a shard set
(`shard_options`): they read every shard, and `verify` also checks that each
instance is in the shard its ID routes to.
"""

from __future__ import annotations

import sys
import time
from typing import Any

import click

from statekit.cli.chart_paths import chart_files
from statekit.cli.group import EXIT_CLEAN, EXIT_FINDINGS
from statekit.cli.output import echo_json, echo_text
from statekit.cli.refusals import runner_refusal
from statekit.cli.runner_commands import compiled_chart, open_cli_reader
from statekit.cli.shard_options import db_option, open_cli_shards
from statekit.engine.chart import Chart
from statekit.runner.chart_versions import chart_sets, refuse_changed_version
from statekit.runner.errors import (
    ChartVersionError,
    RunnerError,
    StoreFailure,
    StoreUnavailableError,
)
from statekit.runner.family_verify import with_family
from statekit.runner.json_text import parse_json
from statekit.runner.store import open_read_only_store
from statekit.runner.store.base import Store
from statekit.runner.store.rows import OutboxRow
from statekit.runner.store_checks import verify_store
from statekit.runner.verify import verify


@click.command("verify")
@db_option
@click.option(
    "--chart",
    "charts",
    multiple=True,
    type=click.Path(exists=True),
    help="A chart file or a folder of charts (repeatable); charts whose source the store "
    "kept are found there.",
)
@click.option("--format", "output_format", type=click.Choice(["text", "json"]), default="text")
def verify_command(urls: tuple[str, ...], charts: tuple[str, ...], output_format: str) -> None:
    """Replay every instance's history and compare it with everything stored (exit 1 if
    any differs or cannot be read or replayed); a damaged database is read as far as
    it can be. Given a shard set, every shard, and that each instance is in its own."""
    given = [compiled_chart(path) for path in chart_files(charts)]
    try:
        if len(urls) == 1:
            stores = [open_read_only_store(urls[0], check_integrity=False)]
            misrouted: list[list[str]] = [[]]
        else:
            shards = open_cli_shards(urls, read_only=True, check_integrity=False)
            stores = list(shards.stores)
            misrouted = [shards.misrouted_in(i) for i in range(shards.count)]
    except StoreUnavailableError as exc:  # no server to read: nothing was checked
        raise click.UsageError(str(exc)) from exc
    except StoreFailure as exc:  # too damaged to open at all: a finding, not a usage error
        store_url = urls[0] if len(urls) == 1 else list(urls)
        _report(output_format, {"store": store_url, "ok": False, "error": f"cannot be read: {exc}"})
        click.echo("the store cannot be read", err=True)
        sys.exit(EXIT_FINDINGS)
    except RunnerError as exc:
        raise click.UsageError(str(exc)) from exc
    instances = differing = whole = 0
    for url, store, out_of_place in zip(urls, stores, misrouted, strict=True):
        counted, differ, store_differs = _verify_store(
            url, store, given, output_format, out_of_place
        )
        instances, differing, whole = instances + counted, differing + differ, whole + store_differs
    if len(urls) == 1:
        where, as_whole = "", "; the store as a whole differs" if whole else ""
    else:
        where, as_whole = f" in {len(urls)} shards", f"; {whole} shard(s) differ as a whole"
        as_whole = as_whole if whole else ""
    click.echo(f"{instances} instance(s){where}, {differing} with differences{as_whole}", err=True)
    sys.exit(EXIT_FINDINGS if differing or whole else EXIT_CLEAN)


def _verify_store(
    url: str, store: Store, given: list[Chart], output_format: str, misrouted: list[str]
) -> tuple[int, int, bool]:
    """Verify one store (`misrouted`: the shard set's instances stored out of place, reported
    with it as differences of the store as a whole): how many instances it holds, how
    many of them differ, and whether the store as a whole does."""
    try:  # a chart given for a stored version must be that version's (a usage error)
        refuse_changed_version(store, given)
    except ChartVersionError as exc:
        store.close()
        raise runner_refusal(exc) from exc
    failed = 0
    try:
        sets = chart_sets(store, given)
        problems = [*verify_store(store, given), *misrouted]
        instances = store.instance_charts()
    except RunnerError as exc:
        _report(output_format, {"store": url, "ok": False, "error": f"cannot be read: {exc}"})
        click.echo("the store cannot be read", err=True)
        sys.exit(EXIT_FINDINGS)
    if problems:
        _report(output_format, {"store": url, "ok": False, "differences": problems})
    for instance in instances:
        instance_id = instance.instance_id
        chart_set = sets.get(instance.chart_name)
        if chart_set is None:
            failed += 1
            problem = f"chart {instance.chart_name!r} is not available: pass it with --chart"
            _report(output_format, {"instance": instance_id, "ok": False, "error": problem})
            continue
        try:
            data = with_family(verify(store, chart_set, instance_id), store, sets.get).to_data()
        except RunnerError as exc:
            data = {"instance": instance_id, "ok": False, "error": f"cannot be read: {exc}"}
        failed += not data["ok"]
        _report(output_format, data)
    return len(instances), failed, bool(problems)


def _report(output_format: str, data: dict[str, Any]) -> None:
    if output_format == "json":
        echo_json(data)
        return
    start = data.get("checked_from")
    pruned = (
        f"; checked from the snapshot at #{start}, the events before it were pruned"
        if start
        else ""
    )
    if data["ok"]:
        echo_text(
            f"{data['instance']}: ok (version {data['version']}, {data['events']} events{pruned})"
        )
        return
    echo_text(f"{data['instance']}: DIFFERS{pruned}" if "instance" in data else "store: DIFFERS")
    problems = [data.get("error"), *data.get("differences", [])]
    for line in [*problems, *data.get("snapshot_problems", [])]:
        if line:
            echo_text(f"  {line}")


@click.command("outbox")
@db_option
@click.option(
    "--status",
    "statuses",
    multiple=True,
    type=click.Choice(["pending", "dead", "delivered"]),
    help="Which messages (repeatable; default: pending and dead).",
)
@click.option("--format", "output_format", type=click.Choice(["text", "json"]), default="text")
def outbox_command(urls: tuple[str, ...], statuses: tuple[str, ...], output_format: str) -> None:
    """List outbox messages not yet delivered (pending) and given up on (dead); of every
    shard, in the set's order, each line saying which (`shard`, from 1), for a shard set."""
    if len(urls) == 1:
        stores = [open_cli_reader(urls[0])]
    else:
        stores = list(open_cli_shards(urls, read_only=True).stores)
    rows: list[tuple[int | None, OutboxRow]] = []
    for index, store in enumerate(stores):
        try:
            found = store.outbox(list(statuses) or ["pending", "dead"])
        except RunnerError as exc:
            raise click.UsageError(f"the outbox cannot be read: {exc}") from exc
        finally:
            store.close()
        rows.extend((index + 1 if len(stores) > 1 else None, r) for r in found)
    now = time.time()
    for shard, r in rows:
        data: dict[str, Any] = {} if shard is None else {"shard": shard}
        data |= {
            "id": r.id,
            "instance": r.instance_id,
            "message_id": r.message_id,
            "type": r.type,
            "status": r.status,
            "attempts": r.attempts,
            "next_attempt_in": round(max(0.0, r.next_attempt_at - now), 3),
            "last_error": r.last_error,
            "payload": None,
        }
        try:
            data["payload"] = parse_json(r.payload)
        except ValueError as exc:  # a damaged row is listed, not the end of the listing
            data["payload_error"] = f"the stored payload is not valid JSON: {exc}"
        if output_format == "json":
            echo_json(data)
            continue
        retry = (
            f" retry in {data['next_attempt_in']}s" if r.status == "pending" and r.attempts else ""
        )
        error = f" last error: {r.last_error}" if r.last_error else ""
        if "payload_error" in data:
            error += f" ({data['payload_error']})"
        where = "" if shard is None else f" shard={shard}"
        echo_text(
            f"{r.status:8} {r.instance_id} {r.message_id} {r.type} "
            f"attempts={r.attempts}{retry}{error}{where}"
        )
    statuses_found = [r.status for _, r in rows]
    counts = {s: statuses_found.count(s) for s in sorted(set(statuses_found))}
    summary = ", ".join(f"{n} {s}" for s, n in counts.items()) or "nothing"
    click.echo(f"{summary} in the outbox", err=True)
