"""`statekit run` (apply JSON lines of events), and what the commands that use a store share
(`compiled_chart`, `open_cli_store`, `open_cli_reader`, `write_line`).

`run` is how shell scripts and other languages use the durable runner: one
JSON object per input line, `{instance, event_id, type, payload,
expected_version?, sequence?, context?}`, one JSON outcome per output line, written and
flushed before the next line is read (a batch ends when no more input is
ready, so a client may wait for each answer). A line that cannot be applied
(not UTF-8, not JSON or beyond its bounds, a missing field, a chart that does
not fit the stored instance) gets an `"status": "ERROR"` line and the run goes
on; the exit code is then 1. An unknown instance is created by its first line that a
new instance would take (`_Run._create`), with that line's `context`; a malformed first
event (`MALFORMED`, a sequence or expected version a new instance cannot have, a bad
context) creates nothing and is answered with ERROR. `--now MS` gives every step the clock
reading MS (default: the wall clock); a line whose stored instance recorded a later
reading is answered with ERROR and not applied (`_Run._late`: a history never goes back
in time). A full or damaged store stops the
run as a usage error that says how many lines were applied. A lost connection to PostgreSQL is
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

import sys
from typing import IO, Any

import click

from statekit.cli.chart_paths import chart_files
from statekit.cli.group import EXIT_CLEAN, EXIT_FINDINGS
from statekit.cli.output import json_text
from statekit.cli.refusals import runner_refusal
from statekit.cli.run_lines import Line, LineReader, parse_line
from statekit.cli.shard_options import db_option, open_cli_shards, refuse_lone_shard
from statekit.compiler.pipeline import CompileResult, compile_file
from statekit.engine.chart import Chart, StartError
from statekit.engine.result import INVALID_PAYLOAD, UNKNOWN_EVENT, Status
from statekit.runner.clock_readings import LastReading, last_reading
from statekit.runner.errors import (
    CorruptRowError,
    RunnerError,
    StoreFailure,
    StoreUnavailableError,
    UnknownInstanceError,
)
from statekit.runner.outcome import Outcome
from statekit.runner.runner import Runner
from statekit.runner.sharding import ShardedRunner
from statekit.runner.store import open_read_only_store, open_store
from statekit.runner.store.base import Store


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


MAX_CLOCK_MS = 2**63 - 1
"""The latest reading `--now` accepts (`run`, `worker`): the stores' largest integer."""


MALFORMED = frozenset({UNKNOWN_EVENT, INVALID_PAYLOAD})
"""The rejections that make a first event malformed: it creates no instance."""


class _Run:
    """One `statekit run`: answers each line, a batch at a time, flushed as written."""

    def __init__(
        self, runner: Runner | ShardedRunner, chart: Chart, out: IO[str], *, create: bool
    ) -> None:
        self.runner = runner
        self.chart = chart
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

    def batch(self, lines: list[Line]) -> None:
        """Apply `lines` (of any instances) in one transaction; answer each in order. For
        a runner whose steps are family steps, one line at a time: a line's step may
        start the child a later line is for (and each family step commits on its own
        anyway), so the answers are those of the lines one at a time."""
        if len(lines) > 1 and isinstance(self.runner, Runner) and self.runner.composes:
            for line in lines:
                self._batch([line])
            return
        self._batch(lines)

    def _batch(self, lines: list[Line]) -> None:
        items: list[Outcome | Exception]
        try:
            late = self._late(lines)
            refused = self._create([ln for ln in lines if ln.number not in late])
            applied = [ln for ln in lines if ln.number not in refused and ln.number not in late]
            if len(applied) <= 1:
                items = [_apply_one(self.runner, ln) for ln in applied]
            else:
                items = self.runner.apply_many([(ln.instance, ln.command) for ln in applied])
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
        answers = dict(zip((ln.number for ln in applied), items, strict=True))
        for line in lines:
            item = answers.get(line.number)
            if item is None or isinstance(item, Exception):
                self.errors += 1
                why = refused.get(line.number)
                data = {
                    "line": line.number,
                    "instance": line.instance,
                    "event_id": line.command.event_id,
                    "status": "ERROR",
                    "error": late[line.number]
                    if line.number in late
                    else f"instance {line.instance!r} could not be created: {why}"
                    if item is None
                    else self._error_text(line.instance, item),
                }
            else:
                self.applied += 1
                self.known.add(line.instance)
                data = item.to_data(line.instance)
            self.write(data)
        self.out.flush()
        self.answered = lines[-1].number

    def _late(self, lines: list[Line]) -> dict[int, str]:
        """The lines whose stored instance recorded a clock reading later than the one
        this run gives its steps (`--now`, or the wall clock): each with why. A step is
        never recorded earlier than its instance's last reading (docs/semantics.md, "The
        clock"); the lines are refused, not moved to that reading. Read once per batch:
        the readings this run gives only grow, so its own lines cannot make one late."""
        late: dict[int, str] = {}
        now = self.runner.now_ms()
        readings: dict[str, LastReading | None] = {}
        for line in lines:
            instance = line.instance
            if instance not in readings:
                runner = self.runner
                if isinstance(runner, ShardedRunner):
                    runner = runner.runner_for(instance)
                try:
                    readings[instance] = last_reading(runner, instance)
                except CorruptRowError:  # applying the line reports the damage, as before
                    readings[instance] = None
            last = readings[instance]
            if last is not None and now < last.clock_ms:
                late[line.number] = (
                    f"the clock reading {now} is earlier than instance {instance!r}'s last "
                    f"recorded reading {last.clock_ms}: a step is never recorded before it; "
                    f"give --now {last.clock_ms} or later"
                )
        return late

    def _create(self, lines: list[Line]) -> dict[int, str]:
        """Create the instances of `lines` not known to exist yet (unless --no-create), each
        by its first line that the new instance would not refuse (`_refusal`), with that
        line's context; the lines before it are not applied: the numbers of those lines,
        each with why (a first event that is malformed or rejected creates nothing). Lines
        are taken in order, so a batch answers as the same lines one at a time."""
        refused: dict[int, str] = {}
        if not self.create:
            return refused
        for line in lines:
            instance = line.instance
            if instance in self.known:
                continue
            why = self._refusal(line)
            if why is not None:
                if self._stored(instance):  # its own answer, from the stored instance
                    self.known.add(instance)
                else:
                    refused[line.number] = why
                continue
            try:
                self.runner.create(instance, line.context, exist_ok=True)
            except StoreFailure:
                raise
            except (RunnerError, StartError, ValueError) as exc:
                self.not_created[instance] = str(exc)  # the line's answer says why
            else:
                self.known.add(instance)
                self.not_created.pop(instance, None)
        return refused

    def _stored(self, instance: str) -> bool:
        """Whether the store holds `instance` (of this chart's version or another)."""
        try:
            self.runner.load(instance)
        except UnknownInstanceError:
            return False
        except StoreFailure:
            raise
        except (RunnerError, ValueError):
            return True  # stored, and its own answer will say what does not fit
        return True

    def _refusal(self, line: Line) -> str | None:
        """Why creating `line`'s instance for it would be wrong: a bad context, a version
        or sequence a new instance cannot be at, or an event the chart does not declare or
        a payload that does not fit it (`MALFORMED`, worked out on the chart alone, nothing
        stored); None when it is fine. A rejection the chart decides (a guard, no
        transition, an evaluation error) creates the instance: the rejection is recorded
        on it, as every rejection is (`Runner.rejections`)."""
        now = self.runner.now_ms()  # the reading `now` gives, as the runner's own steps
        try:
            state = self.chart.start(line.context, now_ms=now, instance_id=line.instance)
        except StartError as exc:
            return str(exc)
        c = line.command
        if c.expected_version not in (None, 0):
            return f"it expects version {c.expected_version}, and a new instance is at 0"
        if c.sequence not in (None, 1):
            return f"its sequence is {c.sequence}, and a new instance's first event is 1"
        result = self.chart.send(
            state, c.type, c.payload, event_id=c.event_id, now_ms=now, instance_id=line.instance
        )
        if result.status is not Status.REJECTED or result.reason not in MALFORMED:
            return None  # a rejection the chart decides is recorded on the new instance
        return f"its first event is not one the chart takes ({result.reason}): {result.message}"

    def _error_text(self, instance: str, error: Exception) -> str:
        """What a line's error says: why its instance could not be created, when it was not
        (applying to it then fails as an unknown instance, which is not what happened)."""
        why = self.not_created.get(instance)
        if why is None or instance in self.known or not isinstance(error, UnknownInstanceError):
            return str(error)
        return f"instance {instance!r} could not be created: {why}"


def _apply_one(runner: Runner | ShardedRunner, line: Line) -> Outcome | Exception:
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
@click.option(
    "--chart",
    "other_files",
    multiple=True,
    type=click.Path(exists=True),
    help="Another chart its instances' families run (an invoked child's chart, a message "
    "receiver's), or a folder of charts (repeatable; docs/families.md).",
)
@click.option(
    "--now",
    "now_ms",
    type=click.IntRange(0, MAX_CLOCK_MS),
    default=None,
    help="The clock's reading, in epoch milliseconds, every step of this run is given (what "
    "`now` reads, and due times come from); default: the wall clock. A line whose instance "
    "recorded a later reading is refused.",
)
def run_command(
    file: str,
    urls: tuple[str, ...],
    source: IO[bytes],
    batch: int,
    no_create: bool,
    now_ms: int | None,
    other_files: tuple[str, ...] = (),
) -> None:
    """Apply events read as JSON lines to instances of the chart FILE; one outcome per line.

    Every line is answered (its outcome written and flushed) before `run` waits for
    more input; with --batch N up to N lines of any instances are committed together
    (each still applied or refused on its own), and a batch ends at N lines, at a bad
    line or when no more input is ready.
    """
    chart = compiled_chart(file)
    others = [c for c in map(compiled_chart, chart_files(other_files)) if c.name != chart.name]
    clock = None if now_ms is None else (lambda: now_ms)
    runner: Runner | ShardedRunner
    try:
        if len(urls) == 1:
            store = _store(urls[0])
            refuse_lone_shard(store)
            runner = Runner(chart, store, clock=clock, charts=others)
        else:
            runner = ShardedRunner(chart, open_cli_shards(urls), clock=clock)
    except RunnerError as exc:
        raise runner_refusal(exc) from exc
    run = _Run(runner, chart, sys.stdout, create=not no_create)
    reader = LineReader(source)
    pending: list[Line] = []
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
            line = parse_line(number, raw)
            if no_create and line.context is not None:
                raise ValueError("'context' creates an instance, and --no-create is given")
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
