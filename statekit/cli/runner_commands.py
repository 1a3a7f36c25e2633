"""`statekit run` (apply JSON lines of events), `statekit verify`, `statekit outbox`.

`run` is how shell scripts and other languages use the durable runner: one
JSON object per input line, `{instance, event_id, type, payload,
expected_version?, sequence?}`, one JSON outcome per output line (flushed as
it is written). A line that cannot be applied (not JSON, a missing field, a
chart that does not fit the stored instance) gets an `"status": "ERROR"` line
and the run goes on; the exit code is then 1.
"""

from __future__ import annotations

import json
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from typing import IO, Any

import click

from statekit.cli.group import EXIT_CLEAN, EXIT_FINDINGS
from statekit.compiler.pipeline import CompileResult, compile_file
from statekit.engine.chart import Chart, StartError
from statekit.lint.formats import format_diagnostics
from statekit.lint.registry import rule_infos
from statekit.runner.chart_versions import chart_sets
from statekit.runner.errors import RunnerError, UnknownInstanceError
from statekit.runner.outcome import Outcome
from statekit.runner.runner import Runner, make_command
from statekit.runner.store import open_store
from statekit.runner.store.base import Store
from statekit.runner.transaction import Command
from statekit.runner.verify import verify

FIELDS = {"instance", "event_id", "type", "payload", "expected_version", "sequence"}


def _compiled(path: str) -> CompileResult:
    """The chart file compiled; its diagnostics and exit 1 when it has errors."""
    result = compile_file(path)
    if result.chart is None:
        click.echo(format_diagnostics("text", result.diagnostics, rule_infos()), nl=False, err=True)
        sys.exit(EXIT_FINDINGS)
    return result


def _chart(result: CompileResult) -> Chart:
    assert result.chart is not None  # `_compiled` exits otherwise
    return Chart(result.chart, source=result.source)


def _store(url: str) -> Store:
    try:
        return open_store(url)
    except RunnerError as exc:
        raise click.UsageError(str(exc)) from exc


@dataclass(frozen=True, slots=True)
class _Line:
    """One parsed input line: the instance it is for and its command."""

    instance: str
    command: Command


@dataclass(frozen=True, slots=True)
class _Group:
    """Consecutive parsed lines of one instance, the first of them at line `first`."""

    first: int
    instance: str
    commands: tuple[Command, ...]


@dataclass(frozen=True, slots=True)
class _BadLine:
    """An input line that is not a command, and why."""

    number: int
    error: str


def _command(text: str) -> _Line:
    """Parse one input line (ValueError with what is wrong)."""
    try:
        data = json.loads(text)
    except ValueError as exc:
        raise ValueError(f"not JSON: {exc}") from exc
    if not isinstance(data, dict):
        raise ValueError("a line is a JSON object")
    unknown = sorted(set(data) - FIELDS)
    if unknown:
        raise ValueError(f"unknown field(s) {unknown}; a line has {sorted(FIELDS)}")
    for key in ("instance", "event_id", "type"):
        if not isinstance(data.get(key), str) or not data[key]:
            raise ValueError(f"{key!r} must be a non-empty string")
    payload = data.get("payload")
    if payload is None:
        payload = {}
    elif not isinstance(payload, dict):
        raise ValueError("'payload' must be a JSON object")
    numbers = {}
    for key in ("expected_version", "sequence"):
        value = data.get(key)
        if value is not None and (not isinstance(value, int) or isinstance(value, bool)):
            raise ValueError(f"{key!r} must be an integer")
        numbers[key] = value
    command = make_command(
        data["event_id"],
        data["type"],
        payload,
        expected_version=numbers["expected_version"],
        sequence=numbers["sequence"],
    )  # the runner's own checks (a reserved event ID, a sequence below 1): a bad line
    return _Line(instance=data["instance"], command=command)


def _groups(lines: IO[str], batch: int) -> Iterator[_Group | _BadLine]:
    """Consecutive parsed lines of one instance (at most `batch`), or one bad line."""
    group: list[Command] = []
    current = ""
    first = 0
    for number, text in enumerate(lines, 1):
        if not text.strip():
            continue
        try:
            line = _command(text)
        except ValueError as exc:
            if group:
                yield _Group(first=first, instance=current, commands=tuple(group))
                group = []
            yield _BadLine(number=number, error=str(exc))
            continue
        if group and (line.instance != current or len(group) >= batch):
            yield _Group(first=first, instance=current, commands=tuple(group))
            group = []
        if not group:
            first, current = number, line.instance
        group.append(line.command)
    if group:
        yield _Group(first=first, instance=current, commands=tuple(group))


@click.command("run")
@click.argument("file", type=click.Path(exists=True, dir_okay=False))
@click.option("--db", "url", required=True, help="Store URL: sqlite:///path.db or postgresql://…")
@click.option(
    "--input",
    "source",
    type=click.File("r", encoding="utf-8"),
    default="-",
    show_default=True,
    help="JSON lines to read (- for standard input).",
)
@click.option(
    "--batch",
    type=click.IntRange(1),
    default=1,
    show_default=True,
    help="Apply up to N consecutive lines of one instance in one transaction (imports).",
)
@click.option("--no-create", is_flag=True, help="Unknown instances are errors (default: create).")
def run_command(file: str, url: str, source: IO[str], batch: int, no_create: bool) -> None:
    """Apply events read as JSON lines to instances of the chart FILE; one outcome per line."""
    compiled = _compiled(file)
    runner = Runner(_chart(compiled), _store(url))
    errors = 0
    out = sys.stdout
    for group in _groups(source, batch):
        if isinstance(group, _BadLine):
            errors += 1
            bad = {"line": group.number, "status": "ERROR", "error": group.error}
            out.write(json.dumps(bad) + "\n")
            out.flush()
            continue
        instance = group.instance
        outcomes: list[Outcome] | str
        try:
            outcomes = _apply(runner, instance, group.commands, create=not no_create)
        except (RunnerError, StartError) as exc:
            outcomes = str(exc)
        for offset, command in enumerate(group.commands):
            if isinstance(outcomes, str):
                errors += 1
                line = {
                    "line": group.first + offset,
                    "instance": instance,
                    "event_id": command.event_id,
                    "status": "ERROR",
                    "error": outcomes,
                }
            else:
                line = outcomes[offset].to_data(instance)
            out.write(json.dumps(line, ensure_ascii=False) + "\n")
        out.flush()
    sys.exit(EXIT_FINDINGS if errors else EXIT_CLEAN)


def _apply(
    runner: Runner, instance: str, group: tuple[Command, ...], *, create: bool
) -> list[Outcome]:
    try:
        if len(group) == 1:
            c = group[0]
            outcome = runner.apply(
                instance,
                c.event_id,
                c.type,
                c.payload,
                expected_version=c.expected_version,
                sequence=c.sequence,
            )
            return [outcome]
        return runner.apply_batch(instance, group)
    except UnknownInstanceError:
        if not create:
            raise
    runner.create(instance, exist_ok=True)
    return _apply(runner, instance, group, create=False)


@click.command("verify")
@click.option("--db", "url", required=True, help="Store URL: sqlite:///path.db or postgresql://…")
@click.option(
    "--chart",
    "charts",
    multiple=True,
    type=click.Path(exists=True, dir_okay=False),
    help="A chart file (repeatable); charts whose source the store kept are found there.",
)
@click.option("--format", "output_format", type=click.Choice(["text", "json"]), default="text")
def verify_command(url: str, charts: tuple[str, ...], output_format: str) -> None:
    """Replay every instance's history and compare it with the stored state (exit 1 if
    any differs or cannot be replayed)."""
    store = _store(url)
    sets = chart_sets(store, [_chart(_compiled(path)) for path in charts])
    instances = store.instance_charts()
    failed = 0
    for instance in instances:
        instance_id = instance.instance_id
        chart_set = sets.get(instance.chart_name)
        if chart_set is None:
            failed += 1
            problem = f"chart {instance.chart_name!r} is not available: pass it with --chart"
            _report(output_format, {"instance": instance_id, "ok": False, "error": problem})
            continue
        try:
            data = verify(store, chart_set, instance_id).to_data()
        except RunnerError as exc:
            data = {"instance": instance_id, "ok": False, "error": str(exc)}
        failed += not data["ok"]
        _report(output_format, data)
    click.echo(f"{len(instances)} instance(s), {failed} with differences", err=True)
    sys.exit(EXIT_FINDINGS if failed else EXIT_CLEAN)


def _report(output_format: str, data: dict[str, Any]) -> None:
    if output_format == "json":
        click.echo(json.dumps(data, ensure_ascii=False))
        return
    if data["ok"]:
        click.echo(f"{data['instance']}: ok (version {data['version']}, {data['events']} events)")
        return
    click.echo(f"{data['instance']}: DIFFERS")
    problems = [data.get("error"), *data.get("differences", [])]
    for line in [*problems, *data.get("snapshot_problems", [])]:
        if line:
            click.echo(f"  {line}")


@click.command("outbox")
@click.option("--db", "url", required=True, help="Store URL: sqlite:///path.db or postgresql://…")
@click.option(
    "--status",
    "statuses",
    multiple=True,
    type=click.Choice(["pending", "dead", "delivered"]),
    help="Which messages (repeatable; default: pending and dead).",
)
@click.option("--format", "output_format", type=click.Choice(["text", "json"]), default="text")
def outbox_command(url: str, statuses: tuple[str, ...], output_format: str) -> None:
    """List outbox messages not yet delivered (pending) and given up on (dead)."""
    store = _store(url)
    rows = store.outbox(list(statuses) or ["pending", "dead"])
    now = time.time()
    for r in rows:
        data = {
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
            data["payload"] = json.loads(r.payload)
        except ValueError as exc:  # a damaged row is listed, not the end of the listing
            data["payload_error"] = f"the stored payload is not valid JSON: {exc}"
        if output_format == "json":
            click.echo(json.dumps(data, ensure_ascii=False))
            continue
        retry = (
            f" retry in {data['next_attempt_in']}s" if r.status == "pending" and r.attempts else ""
        )
        error = f" last error: {r.last_error}" if r.last_error else ""
        if "payload_error" in data:
            error += f" ({data['payload_error']})"
        click.echo(
            f"{r.status:8} {r.instance_id} {r.message_id} {r.type} "
            f"attempts={r.attempts}{retry}{error}"
        )
    counts = {s: sum(r.status == s for r in rows) for s in sorted({r.status for r in rows})}
    summary = ", ".join(f"{n} {s}" for s, n in counts.items()) or "nothing"
    click.echo(f"{summary} in the outbox", err=True)
