"""`statekit worker`: deliver timers as they come due (`statekit timers` lists them:
`timer_listing`).

`worker` opens the store, one `Runner` per chart name given (the highest
version given is the runner's, the others its previous versions; a chart whose
version the store holds with another digest is refused, exit 2, before any
timer is looked at), and loops:
`fire_due` a batch at a time (one transaction each) for every chart, one JSON
line per delivery on standard output, as `statekit run` writes outcomes
(`Outcome.to_data`), flushed after each batch. When nothing is due it sleeps
until the next due time, but at most `--max-sleep` seconds, so a timer armed
meanwhile by another process with an earlier due time is seen within that
bound; it never polls faster than the due times ask. A due timer it could not
claim (another transaction holds its instance: PostgreSQL's claim skips it) is
looked at again after a backoff (`BACKOFF_FIRST` doubling to `BACKOFF_LAST`),
not in a loop. SIGTERM or SIGINT, from the moment the command starts (start-up
included, and while it waits for the server), ends it cleanly: the transaction under
way commits, then it exits 0.

A server that is down, starting or restarting is waited for (`cli.store_link`): at
start-up, and whenever a connection is lost in the middle of any of its loops, the
worker says so once on standard error, reconnects with a bounded backoff and goes on
from what the database holds. A batch whose COMMIT outcome was lost is safe: the
transaction that delivers a timer also consumes its row, so each delivery happened
once or is still due, and it is never delivered twice (its output line may be missing:
the history has it).
A stored timer row that does not fit (`runner.timer_firing`) is reported once
on standard error and skipped; so are due rows of instances the store does not
have, looked for at start-up and when idle in one query bounded whatever the
number of armed timers (`Store.unclaimable_timers`). `--once` delivers what is
due when it starts, with the clock fixed then, and exits (1 when a row was skipped); an
instance whose deliveries keep arming timers due at once is delivered at most
`MAX_REDELIVERIES_AT_ONCE` times so without the worker going idle (in one `--once` run),
then parked durably (`runner.loop_parking`: consumed, recorded as `TIMER_LOOP`) and
reported. `--now MS` delivers as of the clock reading MS (epoch milliseconds): with
`--once`, what is due by MS, the clock fixed there (the deliveries record MS as their
time); without, the clock runs on from MS. Each round also delivers a batch of the
messages between instances (`Runner.deliver_messages`: each in its own transaction on its
receiver, one JSON line each, `{"delivered": EVENT_ID, ...}`); one whose receiver's chart
no `--chart` gives waits, reported once. Given `--db` several times (a shard set,
`shard_options`), one loop delivers the timers of every shard (`shard_worker`).
"""

from __future__ import annotations

import signal
import sys
import threading
from collections.abc import Callable, Sequence
from types import FrameType
from typing import IO

import click

from statekit.cli.chart_paths import chart_files
from statekit.cli.group import EXIT_CLEAN, EXIT_FINDINGS
from statekit.cli.output import echo_text
from statekit.cli.refusals import runner_refusal
from statekit.cli.runner_commands import MAX_CLOCK_MS, compiled_chart, write_line
from statekit.cli.shard_options import db_option, open_cli_shards
from statekit.cli.shard_worker import ShardedWorker
from statekit.cli.store_link import StoreLink
from statekit.engine.chart import Chart
from statekit.runner.errors import RunnerError, UnknownInstanceError
from statekit.runner.loop_parking import is_parked
from statekit.runner.outbox import lost_connection
from statekit.runner.outcome import Outcome
from statekit.runner.runner import Runner, wall_clock_ms
from statekit.runner.store.base import Store
from statekit.runner.timer_firing import BATCH, TimerKey, describe_problem, key_of
from statekit.runner.timers import parse_timer_event_id


def _runners(
    store: Store, charts: Sequence[Chart], clock: Callable[[], int] | None = None
) -> list[Runner]:
    """One runner per chart name: its highest version, the others as previous ones, and
    the other names' charts as the charts it also knows (the members of its families and
    the receivers of messages, `Runner(charts=...)`)."""
    by_name: dict[str, list[Chart]] = {}
    for chart in charts:
        by_name.setdefault(chart.name, []).append(chart)
    runners = []
    for name, versions in by_name.items():
        versions.sort(key=lambda c: c.version)
        others = [c for n, each in by_name.items() if n != name for c in each]
        runners.append(
            Runner(versions[-1], store, previous=versions[:-1], clock=clock, charts=others)
        )
    return runners


ORPHAN_WINDOW = 1000
"""How many of the earliest due timer rows a worker looks through for rows of instances
the store does not have (`Store.unclaimable_timers`), besides those it reported."""

MAX_REDELIVERIES_AT_ONCE = 100
"""How many deliveries of one instance's timers that arm a timer due at once again
(`after: {0ms: self}`, a `send` with a delay of 0 or less: an eventless loop, as `always`
transitions can make one) a worker makes without going idle, or in one `--once` run;
past it the timers so armed are parked durably (`runner.loop_parking`: consumed and
recorded as `TIMER_LOOP`, never delivered again, a restarted worker included) and
reported, and it goes on with the others (`--once` exits 1) instead of never going
idle or never exiting."""

BACKOFF_FIRST, BACKOFF_LAST = 0.05, 1.0
"""The sleeps, in seconds, before looking again at a due timer the worker could not claim
(its instance locked by another transaction): doubled from the first to the last (and
never above `--max-sleep`) while nothing can be delivered."""


Reopen = Callable[[Store, BaseException], "tuple[Store, list[Runner]] | None"]
"""How a worker gets a fresh store and runners after a lost connection broke its store."""


class Worker:
    """The loop of one `statekit worker` (see the module docstring)."""

    def __init__(self, store: Store, runners: list[Runner], out: IO[str], err: IO[str]) -> None:
        self.store, self.runners = store, runners
        self.out, self.err = out, err
        self.stop = threading.Event()
        self.reported: set[TimerKey] = set()
        self.undeliverable: set[int] = set()  # messages between instances reported
        self.problems = 0
        self.backoff = 0.0  # the last sleep before a due timer it could not claim (0: none)
        self.until_ms: int | None = None  # --once: the clock fixed when the run started
        self.deliveries: dict[str, int] = {}  # re-arming deliveries per instance, since idle
        # after a lost connection: the broken store and the error give a fresh store and
        # runners (`StoreLink.reopen`), None when stopped while waiting for the server
        self.reopen: Reopen | None = None

    def report(self, key: TimerKey, why: str) -> None:
        if key not in self.reported:
            self.reported.add(key)
            self.problems += 1
            self.err.write(f"statekit worker: {describe_problem(key, why)}\n")
            self.err.flush()

    def orphans(self) -> None:
        """Report due timer rows of instances the store does not have (never claimed), in
        one query whose cost does not grow with the armed timers (`ORPHAN_WINDOW`): run at
        start-up and whenever the worker goes idle, so a row that comes due is reported
        once it is due. `verify_store` names every such row, due or not."""
        now_ms = self.runners[0].now_ms()
        with self.store.read():
            rows = self.store.unclaimable_timers(now_ms, ORPHAN_WINDOW + len(self.reported))
        for row in rows:
            self.report(key_of(row), f"instance {row.instance_id!r} is not stored")

    def round(self) -> int:
        """Deliver one batch per chart; how many deliveries it made."""
        fired = 0
        for runner in self.runners:
            if self.stop.is_set():
                break
            now = runner.now_ms() if self.until_ms is None else self.until_ms
            outcomes = runner.fire_due(now_ms=now, limit=BATCH)
            for outcome in outcomes:
                write_line(self.out, outcome.to_data())
                self.count(runner, outcome, now)
            self.out.flush()
            fired += len(outcomes)
            for key, why in runner.timer_problems.items():
                self.report(key, why)
        return fired + self.deliver()

    def deliver(self) -> int:
        """Deliver one batch of messages between instances (`Runner.deliver_messages`), one
        JSON line each; how many. A message no runner here can deliver (its receiver's
        chart not given) is reported once and waits."""
        if self.stop.is_set() or not self.runners:
            return 0
        runner = self.runners[0]  # (it knows every chart given: its own and `charts`)
        deliveries = runner.deliver_messages(limit=BATCH)
        for delivery in deliveries:
            write_line(self.out, delivery.to_data())
        self.out.flush()
        for message, why in runner.message_problems.items():
            if message not in self.undeliverable:
                self.undeliverable.add(message)
                self.problems += 1
                self.err.write(f"statekit worker: {why}\n")
                self.err.flush()
        return len(deliveries)

    def count(self, runner: Runner, outcome: Outcome, now: int) -> None:
        """Count a delivery that armed a timer due at once again (by `now`, the clock its
        round read, or the one `--once` fixed); at `MAX_REDELIVERIES_AT_ONCE` of them for
        one instance since the worker was last idle, the timers it armed are parked
        durably (`runner.loop_parking`: consumed, recorded as `TIMER_LOOP`) and reported."""
        result, instance = outcome.result, outcome.instance_id
        if result is None or instance is None or outcome.event_id is None:
            return
        if parse_timer_event_id(outcome.event_id) is None:
            return
        again = [t for t in result.timers_armed if t.due_ms is not None and t.due_ms <= now]
        if not again:
            return
        n = self.deliveries[instance] = self.deliveries.get(instance, 0) + 1
        if n < MAX_REDELIVERIES_AT_ONCE:
            return
        for t in again:
            try:
                parked = runner.park_timer(instance, t.id, t.generation)
            except UnknownInstanceError:
                continue  # pruned meanwhile: nothing left to deliver
            if not is_parked(parked):
                continue  # delivered, cancelled or parked meanwhile
            write_line(self.out, parked.to_data())
            self.report(
                (instance, t.id, t.generation, t.due_ms),
                f"{n} deliveries in a row armed a timer due at once again (an eventless "
                f"loop; the bound is MAX_REDELIVERIES_AT_ONCE); parked: consumed and "
                f"recorded as TIMER_LOOP at version {parked.version}",
            )

    def wait(self, max_sleep: float) -> None:
        """Sleep until the next due time this worker can deliver, at most `max_sleep`; when
        that time has come already (a due timer whose instance another transaction holds:
        the claim passed over it), a backoff from `BACKOFF_FIRST` doubling to
        `BACKOFF_LAST`, so that a locked instance is not polled in a loop."""
        names = [r.chart.name for r in self.runners]
        skipped = set().union(*(r.timer_problems for r in self.runners))
        with self.store.read():
            upcoming = self.store.upcoming_timers(names, len(skipped) + 1)
        due = [r.due_ms for r in upcoming if key_of(r) not in skipped]
        delay = max_sleep
        if due and isinstance(due[0], int):
            delay = min(max_sleep, max(0.0, (due[0] - self.runners[0].now_ms()) / 1000))
        if due and delay == 0:
            self.backoff = min(max(BACKOFF_FIRST, self.backoff * 2), BACKOFF_LAST, max_sleep)
            delay = self.backoff
        else:
            self.backoff = 0.0
        if delay > 0:
            self.stop.wait(delay)

    def run(self, *, once: bool, max_sleep: float) -> None:
        """Report orphan rows, then deliver until stopped (`once`: until nothing is due).
        A lost connection is handed to `reconnect` (when given), and the loop goes on
        from what the database holds; it ends when `reconnect` returns False (stopped)."""
        if once:  # what is due when it starts, and what its deliveries make due at once
            self.until_ms = self.runners[0].now_ms()
        while not self.stop.is_set():
            try:
                self._loop(once=once, max_sleep=max_sleep)
                return
            except Exception as exc:
                if self.reopen is None or not lost_connection(exc):
                    raise
                if not self.reconnect(exc):
                    return

    def reconnect(self, exc: BaseException) -> bool:
        """Replace the store `exc` broke and its runners (`reopen`); False when stopped
        while waiting for the server. Rows found unfit stay skipped."""
        assert self.reopen is not None
        problems = {r.chart.name: r.timer_problems for r in self.runners}
        again = self.reopen(self.store, exc)
        if again is None:
            return False
        self.store, self.runners = again
        for runner in self.runners:
            runner.timer_problems.update(problems.get(runner.chart.name, {}))
        return True

    def _loop(self, *, once: bool, max_sleep: float) -> None:
        if not self.stop.is_set():
            self.orphans()
        while not self.stop.is_set():
            fired = self.round()
            if once and fired == 0:
                break
            if fired == 0:
                self.deliveries.clear()  # idle: a loop would have kept it busy
                self.orphans()
                self.wait(max_sleep)
            else:
                self.backoff = 0.0


@click.command("worker")
@db_option
@click.option(
    "--chart",
    "files",
    multiple=True,
    required=True,
    type=click.Path(exists=True),
    help="A chart whose instances' timers to deliver, or a folder of charts (repeat for more "
    "charts or versions).",
)
@click.option("--once", is_flag=True, help="Deliver what is due now, then exit.")
@click.option(
    "--now",
    "now_ms",
    type=click.IntRange(0, MAX_CLOCK_MS),
    default=None,
    help="The clock's reading, in epoch milliseconds, to deliver as of (what is due by then): "
    "with --once the clock stays there; without, it runs on from there.",
)
@click.option(
    "--max-sleep",
    type=click.FloatRange(0.01),
    default=1.0,
    show_default=True,
    help="Longest sleep, in seconds, before looking again for timers armed meanwhile.",
)
def worker_command(
    urls: tuple[str, ...], files: tuple[str, ...], once: bool, now_ms: int | None, max_sleep: float
) -> None:
    """Deliver due timers of the charts' instances, one JSON line per delivery (of every
    shard, in one loop, given a shard set: `shard_worker`).

    Waits for a database server that is down, starting or restarting, and keeps running
    across restarts: without end, unless the URL says ?retry_for=SECONDS. SIGTERM or
    SIGINT ends it with 0 at any moment.
    """
    # The signals are caught before anything else (start-up included: opening and upgrading
    # the store may wait on another process or on the server), so a SIGTERM at any moment
    # ends in a clean 0.
    stopping = threading.Event()

    def stop(signum: int, frame: FrameType | None) -> None:
        stopping.set()

    previous = {s: signal.signal(s, stop) for s in (signal.SIGTERM, signal.SIGINT)}
    try:
        charts = [compiled_chart(path) for path in chart_files(files)]
        clock = _clock(now_ms, once=once)
        if len(urls) > 1:
            worker: Worker | ShardedWorker = _shard_set_worker(urls, charts, clock)
        else:
            link = StoreLink(urls[0], "worker", stopping, sys.stderr)

            def ready(store: Store) -> list[Runner]:
                return _runners(store, charts, clock)

            try:
                opened = link.open(ready)
                if opened is None:
                    sys.exit(EXIT_CLEAN)  # stopped while waiting for the server
                single = Worker(opened[0], opened[1], sys.stdout, sys.stderr)
            except RunnerError as exc:
                raise runner_refusal(exc) from exc

            def reopen(broken: Store, exc: BaseException) -> tuple[Store, list[Runner]] | None:
                try:
                    return link.reopen(broken, exc, ready)
                except RunnerError as refused:
                    raise runner_refusal(refused) from refused

            single.reopen = reopen
            worker = single
        worker.stop = stopping
        runners = worker.workers[0].runners if isinstance(worker, ShardedWorker) else worker.runners
        names = ", ".join(f"{r.chart.name} v{r.chart.version}" for r in runners)
        shards = f" in {len(urls)} shards" if len(urls) > 1 else ""
        echo_text(f"statekit worker: delivering the timers of {names}{shards}", err=True)
        try:
            worker.run(once=once, max_sleep=max_sleep)
        finally:
            for each in worker.workers if isinstance(worker, ShardedWorker) else [worker]:
                each.store.close()  # (a reopened store: the worker holds the one it uses)
    finally:
        for s, handler in previous.items():
            signal.signal(s, handler)
    sys.exit(EXIT_FINDINGS if once and worker.problems else EXIT_CLEAN)


def _clock(now_ms: int | None, *, once: bool) -> Callable[[], int] | None:
    """The runners' clock for `--now` (None: the wall clock): fixed at `now_ms` for
    `--once`, else running on from `now_ms` at the wall clock's pace."""
    if now_ms is None:
        return None
    if once:
        return lambda: now_ms
    offset = now_ms - wall_clock_ms()
    return lambda: min(wall_clock_ms() + offset, MAX_CLOCK_MS)


def _shard_set_worker(
    urls: tuple[str, ...], charts: Sequence[Chart], clock: Callable[[], int] | None
) -> ShardedWorker:
    """One worker over every shard of the set (`shard_worker`): each shard's runners heal
    a lost connection (`runner.retrying`) within the URL's `retry_for`."""
    stores = list(open_cli_shards(urls).stores)
    try:
        workers = [Worker(st, _runners(st, charts, clock), sys.stdout, sys.stderr) for st in stores]
    except RunnerError as exc:
        for store in stores:
            store.close()
        raise runner_refusal(exc) from exc
    return ShardedWorker(workers, (BACKOFF_FIRST, BACKOFF_LAST))
