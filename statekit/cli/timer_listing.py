"""`statekit timers`: the armed timers of a store, with the chart of each one's instance,
then the parked ones (`loop_parking.parked_timers`); `--chart` (files or folders) and
`--instance` keep those of some charts or instances."""

from __future__ import annotations

import datetime
import sys
from typing import Any

import click

from statekit.cli.chart_paths import chart_files
from statekit.cli.output import echo_text
from statekit.cli.runner_commands import compiled_chart, open_cli_reader, write_line
from statekit.runner.errors import RunnerError
from statekit.runner.loop_parking import parked_timers
from statekit.runner.runner import wall_clock_ms
from statekit.runner.store.rows import InstanceChart
from statekit.runner.timers import row_data


@click.command("timers")
@click.option("--db", "url", required=True, help="Store URL: sqlite:///path.db or postgresql://…")
@click.option(
    "--chart",
    "chart_paths",
    multiple=True,
    type=click.Path(exists=True),
    help="Only the timers of this chart's instances (a file or a folder of charts; repeatable).",
)
@click.option(
    "--instance", "instances", multiple=True, help="Only this instance's timers (repeatable)."
)
@click.option("--format", "output_format", type=click.Choice(["text", "json"]), default="text")
def timers_command(
    url: str, chart_paths: tuple[str, ...], instances: tuple[str, ...], output_format: str
) -> None:
    """List the armed timers: instance, its chart, timer, due time and how long until it
    is due (a paused timer: `paused, 7s left`); then the parked ones (consumed for a
    reason that will not change: an eventless loop the worker parked, a key over the
    bound) with the reason (--chart, --instance: only those of these charts' or
    instances' instances)."""
    names = {compiled_chart(path).name for path in chart_files(chart_paths)}
    store = open_cli_reader(url)
    try:
        with store.read():
            if instances:
                rows = [row for i in dict.fromkeys(instances) for row in store.timers(i)]
            else:
                rows = store.timers()
            charts = {c.instance_id: c for c in store.instance_charts()}
            parked = parked_timers(store)
        now_ms = wall_clock_ms()
    except RunnerError as exc:
        raise click.UsageError(f"the timers cannot be read: {exc}") from exc
    finally:
        store.close()
    if names:
        rows = [row for row in rows if _chart_name(charts.get(row.instance_id)) in names]
        parked = [p for p in parked if _chart_name(charts.get(p.instance_id)) in names]
    if instances:
        parked = [p for p in parked if p.instance_id in instances]
    for row in rows:
        chart = charts.get(row.instance_id)
        data = {**_chart_data(chart), **row_data(row, now_ms)}
        if output_format == "json":
            write_line(sys.stdout, data)
            continue
        if "paused_ms" in data:
            left = _in(data["paused_ms"]).removeprefix("in ").removeprefix("overdue by ")
            when = f"paused, {left} left" if data["paused_ms"] >= 0 else f"paused, {left} overdue"
            echo_text(f"{data['instance']}  {_chart_text(chart)}  {data['timer']}  {when}")
            continue
        echo_text(
            f"{data['instance']}  {_chart_text(chart)}  {data['timer']}  "
            f"due {_when(data['due_ms'])}  "
            f"{_in(data['in_ms'])}"
        )
    for each in parked:
        chart = charts.get(each.instance_id)
        if output_format == "json":
            write_line(sys.stdout, {**_chart_data(chart), **each.to_data()})
            continue
        echo_text(
            f"{each.instance_id}  {_chart_text(chart)}  {each.timer_id}  "
            f"parked {each.reason}: {each.message}"
        )
    if output_format == "text":
        more = f", {len(parked)} parked" if parked else ""
        click.echo(f"{len(rows)} timer(s) armed{more}", err=True)


def _chart_name(chart: InstanceChart | None) -> str | None:
    return chart.chart_name if chart is not None else None


def _chart_data(chart: InstanceChart | None) -> dict[str, object]:
    """The JSON fields naming an instance's chart: its name and version (null: no instance)."""
    if chart is None:
        return {"chart": None, "chart_version": None}
    return {"chart": chart.chart_name, "chart_version": chart.chart_version}


def _chart_text(chart: InstanceChart | None) -> str:
    """`ticket v2`: the chart an instance runs on, versions told apart."""
    return f"{chart.chart_name} v{chart.chart_version}" if chart is not None else "None"


def _when(due_ms: Any) -> str:
    """A due time as ISO 8601 UTC (as stored when it is not a time)."""
    if not isinstance(due_ms, int):
        return repr(due_ms)
    try:
        moment = datetime.datetime.fromtimestamp(due_ms / 1000, tz=datetime.UTC)
    except (OverflowError, OSError, ValueError):
        return f"{due_ms} ms"
    return moment.isoformat(timespec="milliseconds").replace("+00:00", "Z")


def _in(in_ms: Any) -> str:
    """How long until due, in words (`in 4m 10s`, `overdue by 3s`)."""
    if not isinstance(in_ms, int):
        return ""
    seconds = abs(in_ms) // 1000
    parts = [(seconds // 86400, "d"), (seconds // 3600 % 24, "h"), (seconds // 60 % 60, "m")]
    text = " ".join(f"{n}{u}" for n, u in parts if n) or ""
    text = f"{text} {seconds % 60}s".strip() if seconds % 60 or not text else text
    return f"in {text}" if in_ms >= 0 else f"overdue by {text}"
