"""`statekit run` (apply JSON lines of events), and what the commands that use a store share
(`compiled_chart`, `open_cli_store`, `open_cli_reader`, `write_line`).

`run` is how shell scripts and other languages use the durable runner: one
JSON object per input line, `{instance, event_id, type, payload,
expected_version?, sequence?}`, one JSON outcome per output line, written and
flushed before the next line is read (a batch ends when no more input is
ready, so a client may wait for each answer). A line that cannot be applied
(not UTF-8, not JSON or beyond its bounds, a missing field, a chart that does
not fit the stored instance) gets an `"status": "ERROR"` line and the run goes
on; the exit code is then 1. A full or damaged store stops the run as a usage
error that says how many lines were applied. A lost connection to PostgreSQL is
healed by the runner (`runner.retrying`): each line still gets its real answer, the
ones whose commit landed unseen too; a server away for longer than the URL's
`retry_for` stops the run the same way (exit 2), naming the last line answered:
every line before it was answered, none after it.

`run` takes `--db` once for a store or several times for a shard set
(`shard_options`): it routes each line to its instance's shard (a batch is one
transaction per shard; the lines of a shard whose store fails are answered with
ERROR and the others applied). `verify` and `outbox` are in
`store_reading_commands`.
"""

from __future__ import annotations

import io
import os
import select
import sys
from dataclasses import dataclass
from typing import IO, Any

import click

from statekit.cli.group import EXIT_CLEAN, EXIT_FINDINGS
from statekit.cli.output import json_text
from statekit.cli.refusals import runner_refusal
from statekit.cli.shard_options import db_option, open_cli_shards, refuse_lone_shard
from statekit.compiler.pipeline import CompileResult, compile_file
from statekit.engine.chart import Chart, StartError
from statekit.runner.command_checks import check_instance_id, make_command
from statekit.runner.errors import (
    RunnerError,
    StoreFailure,
    StoreUnavailableError,
)
from statekit.runner.json_text import parse_json
from statekit.runner.outcome import Outcome
from statekit.runner.runner import Runner
from statekit.runner.sharding import ShardedRunner
from statekit.runner.store import open_read_only_store, open_store
from statekit.runner.store.base import Store
from statekit.runner.transaction import Command

FIELDS = {"instance", "event_id", "type", "payload", "expected_version", "sequence"}


def _compiled(path: str) -> CompileResult:
    """The chart file compiled; its diagnostics and exit 1 when it has errors."""
    result = compile_file(path)
    if result.chart is None:
        # imported only to report a chart's errors: the lint rules' registry (and the
        # analysis it imports) was a third of `statekit worker`'s start-up imports
        # (`python -X importtime`; bench/worker_startup.py)
        from statekit.lint.formats import format_diagnostics
        from statekit.lint.registry import rule_infos

        click.echo(format_diagnostics("text", result.diagnostics, rule_infos()), nl=False, err=True)
        sys.exit(EXIT_FINDINGS)
    return result


def _chart(result: CompileResult) -> Chart:
    assert result.chart is not None  # `_compiled` exits otherwise
    return Chart(result.chart, source=result.source)


def compiled_chart(path: str) -> Chart:
    """The chart of the file at `path` (its diagnostics and exit 1 when it has errors)."""
    return _chart(_compiled(path))


def open_cli_store(url: str) -> Store:
    """The store at `url` (created or upgraded), or a usage error saying why it cannot be
    opened: for the commands that write."""
    return _store(url)


def open_cli_reader(url: str, *, check_integrity: bool = True) -> Store:
    """The existing store at `url` opened read-only (`open_read_only_store`: nothing is
    created, upgraded or written), or a usage error saying why it cannot be (exit 2)."""
    try:
        return open_read_only_store(url, check_integrity=check_integrity)
    except RunnerError as exc:
        raise click.UsageError(str(exc)) from exc


def write_line(out: IO[str], data: dict[str, Any]) -> None:
    """One JSON line of output (an outcome, a timer): the form every runner command writes."""
    out.write(json_text(data) + "\n")


def _store(url: str, *, check_integrity: bool = True) -> Store:
    try:
        return open_store(url, check_integrity=check_integrity)
    except RunnerError as exc:
        raise click.UsageError(str(exc)) from exc


@dataclass(frozen=True, slots=True)
class _Line:
    """One parsed input line: its number, the instance it is for and its command."""

    number: int
    instance: str
    command: Command


MAX_LINE_BYTES = 16 * 1024 * 1024
"""The longest input line `statekit run` reads (a longer one is an ERROR line, skipped
without being held in memory)."""


class _LineReader:
    """Input lines read straight from a file descriptor, never one more than asked for.

    `next()` blocks for one line; `ready()` says, without blocking, whether a next line
    (or the end of the input) is already there, so a batch can end when no more input
    is ready instead of waiting for it.
    """

    def __init__(self, stream: IO[bytes]) -> None:
        self._stream = stream
        try:
            self._fd: int | None = stream.fileno()
        except (AttributeError, OSError, io.UnsupportedOperation):
            self._fd = None  # an in-memory stream: everything is ready
        self._buffer = bytearray()
        self._eof = False

    def _read(self) -> None:
        chunk = os.read(self._fd, 65536) if self._fd is not None else self._stream.read(65536)
        if chunk:
            self._buffer += chunk
        else:
            self._eof = True

    def ready(self) -> bool:
        """Whether `next()` would not wait for more input to arrive."""
        if self._eof or b"\n" in self._buffer or self._fd is None:
            return True
        readable, _, _ = select.select([self._fd], [], [], 0)
        return bool(readable)

    def next(self) -> bytes | None:
        """The next line (without its end of line), None at the end of the input; a line
        longer than `MAX_LINE_BYTES` is skipped and comes back as `_TOO_LONG`."""
        skipping = False
        scanned = 0  # the buffer holds no end of line before this offset
        while True:
            end = self._buffer.find(b"\n", scanned)
            if end >= 0:
                line = bytes(self._buffer[:end]) if end <= MAX_LINE_BYTES else b""
                del self._buffer[: end + 1]
                return _TOO_LONG if skipping or end > MAX_LINE_BYTES else line
            if len(self._buffer) > MAX_LINE_BYTES:
                skipping = True
                self._buffer.clear()
            scanned = len(self._buffer)
            if self._eof:
                if skipping:
                    return _TOO_LONG
                if not self._buffer:
                    return None
                line = bytes(self._buffer)
                self._buffer.clear()
                return line
            self._read()


_TOO_LONG = b"\x00too long"  # not a JSON text, so never a real line


def _command(number: int, raw: bytes) -> _Line:
    """Parse one input line (ValueError with what is wrong)."""
    if raw is _TOO_LONG:
        raise ValueError(f"the line is longer than {MAX_LINE_BYTES} bytes")
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ValueError(f"not UTF-8: byte {exc.start + 1} is not valid UTF-8") from None
    try:
        data = parse_json(text)
    except ValueError as exc:
        raise ValueError(f"not JSON: {exc}") from None
    if not isinstance(data, dict):
        raise ValueError("a line is a JSON object")
    unknown = sorted(set(data) - FIELDS)
    if unknown:
        raise ValueError(f"unknown field(s) {unknown}; a line has {sorted(FIELDS)}")
    for key in ("instance", "event_id", "type"):
        if not isinstance(data.get(key), str) or not data[key]:
            raise ValueError(f"{key!r} must be a non-empty string")
    check_instance_id(data["instance"])
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
    return _Line(number=number, instance=data["instance"], command=command)


class _Run:
    """One `statekit run`: answers each line, a batch at a time, flushed as written."""

    def __init__(self, runner: Runner | ShardedRunner, out: IO[str], *, create: bool) -> None:
        self.runner = runner
        self.out = out
        self.create = create
        self.errors = 0
        self.applied = 0  # lines whose outcome was committed and written
        self.answered = 0  # the number of the last line answered (0: none yet)
        self.known: set[str] = set()  # instances known to exist
        self.not_created: dict[str, str] = {}  # instance -> why creating it failed

    def write(self, data: dict[str, Any]) -> None:
        write_line(self.out, data)

    def bad_line(self, number: int, error: str) -> None:
        self.errors += 1
        self.write({"line": number, "status": "ERROR", "error": error})
        self.out.flush()
        self.answered = number

    def batch(self, lines: list[_Line]) -> None:
        """Apply `lines` (of any instances) in one transaction; answer each in order."""
        items: list[Outcome | Exception]
        try:
            self._create([line.instance for line in lines])
            if len(lines) == 1:
                items = [_apply_one(self.runner, lines[0])]
            else:
                items = self.runner.apply_many([(ln.instance, ln.command) for ln in lines])
        except StoreUnavailableError as exc:
            self.out.flush()
            last = f"line {self.answered}" if self.answered else "no line"
            raise click.UsageError(
                f"{exc}; stopped at line {lines[0].number}: {last} was the last answered "
                f"(every line before it was; {self.applied} line(s) applied), and the lines "
                f"from {lines[0].number} on are not answered: send them again"
            ) from exc
        except StoreFailure as exc:
            self.out.flush()
            first = lines[0].number
            raise click.UsageError(
                f"{exc}; stopped at line {first} (nothing of it applied), "
                f"{self.applied} line(s) applied before it"
            ) from exc
        for line, item in zip(lines, items, strict=True):
            if isinstance(item, Exception):
                self.errors += 1
                data = {
                    "line": line.number,
                    "instance": line.instance,
                    "event_id": line.command.event_id,
                    "status": "ERROR",
                    "error": self._error_text(line.instance, item),
                }
            else:
                self.applied += 1
                data = item.to_data(line.instance)
            self.write(data)
        self.out.flush()
        self.answered = lines[-1].number

    def _create(self, instances: list[str]) -> None:
        """Create the instances not known to exist yet (unless --no-create)."""
        if not self.create:
            return
        for instance in instances:
            if instance in self.known:
                continue
            try:
                self.runner.create(instance, exist_ok=True)
            except StoreFailure:
                raise
            except (RunnerError, StartError, ValueError) as exc:
                self.not_created[instance] = str(exc)  # the line's answer says why
            else:
                self.known.add(instance)
                self.not_created.pop(instance, None)

    def _error_text(self, instance: str, error: Exception) -> str:
        """What a line's error says: why its instance could not be created, when it was not
        (applying to it then fails as an unknown instance, which is not what happened)."""
        why = self.not_created.get(instance)
        if why is None or instance in self.known:
            return str(error)
        return f"instance {instance!r} could not be created: {why}"


def _apply_one(runner: Runner | ShardedRunner, line: _Line) -> Outcome | Exception:
    """What `apply` gives one line: its outcome, or the error it raised."""
    c = line.command
    try:
        return runner.apply(
            line.instance,
            c.event_id,
            c.type,
            c.payload,
            expected_version=c.expected_version,
            sequence=c.sequence,
        )
    except StoreFailure:
        raise
    except (RunnerError, StartError, ValueError) as exc:
        return exc


@click.command("run")
@click.argument("file", type=click.Path(exists=True, dir_okay=False))
@db_option
@click.option(
    "--input",
    "source",
    type=click.File("rb"),
    default="-",
    show_default=True,
    help="JSON lines to read (- for standard input).",
)
@click.option(
    "--batch",
    type=click.IntRange(1),
    default=1,
    show_default=True,
    help="Apply up to N lines, of any instances, in one transaction (group commit: each "
    "line still succeeds or fails on its own); a batch also ends when no more input is ready.",
)
@click.option("--no-create", is_flag=True, help="Unknown instances are errors (default: create).")
def run_command(
    file: str, urls: tuple[str, ...], source: IO[bytes], batch: int, no_create: bool
) -> None:
    """Apply events read as JSON lines to instances of the chart FILE; one outcome per line.

    Every line is answered (its outcome written and flushed) before `run` waits for
    more input; with --batch N up to N lines of any instances are committed together
    (each still applied or refused on its own), and a batch ends at N lines, at a bad
    line or when no more input is ready.
    """
    compiled = _compiled(file)
    runner: Runner | ShardedRunner
    try:
        if len(urls) == 1:
            store = _store(urls[0])
            refuse_lone_shard(store)
            runner = Runner(_chart(compiled), store)
        else:
            runner = ShardedRunner(_chart(compiled), open_cli_shards(urls))
    except RunnerError as exc:
        raise runner_refusal(exc) from exc
    run = _Run(runner, sys.stdout, create=not no_create)
    reader = _LineReader(source)
    pending: list[_Line] = []
    number = 0
    while True:
        if pending and (len(pending) >= batch or not reader.ready()):
            run.batch(pending)
            pending = []
        raw = reader.next()
        if raw is None:
            break
        number += 1
        if not raw.strip():
            continue
        try:
            line = _command(number, raw)
        except ValueError as exc:
            if pending:  # the lines before a bad one are answered first
                run.batch(pending)
                pending = []
            run.bad_line(number, str(exc))
            continue
        pending.append(line)
    if pending:
        run.batch(pending)
    sys.exit(EXIT_FINDINGS if run.errors else EXIT_CLEAN)
