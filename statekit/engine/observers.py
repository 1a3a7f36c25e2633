"""Observers of classified results: code that wants to see every event a chart classifies.

    from statekit.engine.observers import observing

    seen = []
    with observing(lambda chart, before, result, instance: seen.append(result)):
        chart.send(chart.start(), "START")

An observer is called after every `Chart.send` (so after every event the durable
runner, `Chart.replay` or a test simulator classifies) and after
`Chart.initialize` (`before` is None then), with the chart, the state the event
was sent to, the `Result`, and the instance ID when the durable runner applies
the event (None otherwise). It must not raise and must not change anything it is
given. With no observer installed the step pays one check of an empty list.

A watcher (`watch`) is told of every `Chart` made while it is installed, whether
or not anything is ever sent to it (`statekit.load` makes one).

The test-coverage plugin (`statekit.testing.coverage`) is the observer and the
watcher statekit ships; nothing in the engine depends on what they do.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from statekit.engine.result import Result
    from statekit.engine.state import State
    from statekit.engine.tables import TablesOwner

Observer = Callable[["TablesOwner", "State | None", "Result", "str | None"], None]
"""`observer(chart, before, result, instance)`; see the module docstring (`chart` is
the `Chart`, typed by what it offers: `chart.tables.chart` is its IR)."""

installed: list[Observer] = []
"""The observers called after each step, in installation order. Changed in place only
(`install`, `uninstall`): `Chart` reads this very list on its hot path."""

ChartWatcher = Callable[["TablesOwner"], None]
"""`watcher(chart)`: called with each `Chart` made while the watcher is installed."""

watchers: list[ChartWatcher] = []
"""The installed watchers. Changed in place only (`watch`, `unwatch`): `Chart` reads
this very list when it is made."""

_instance: ContextVar[str | None] = ContextVar("statekit_observed_instance", default=None)
"""The durable instance whose event is being stepped, per thread and per task: runners
in several threads (or asyncio tasks) each see their own."""


def install(observer: Observer) -> None:
    """Call `observer` after every step from now on (until `uninstall`)."""
    installed.append(observer)


def uninstall(observer: Observer) -> None:
    """Stop calling `observer` (its last installation); nothing when it is not installed."""
    for i in range(len(installed) - 1, -1, -1):
        if installed[i] is observer:
            del installed[i]
            return


def watch(watcher: ChartWatcher) -> None:
    """Call `watcher` with every `Chart` made from now on (until `unwatch`)."""
    watchers.append(watcher)


def unwatch(watcher: ChartWatcher) -> None:
    """Stop calling `watcher` (its last installation); nothing when it is not installed."""
    for i in range(len(watchers) - 1, -1, -1):
        if watchers[i] == watcher:
            del watchers[i]
            return


def made(chart: TablesOwner) -> None:
    """Call every installed watcher with a chart just made."""
    for watcher in tuple(watchers):
        watcher(chart)


@contextmanager
def observing(observer: Observer) -> Iterator[Observer]:
    """`install(observer)` for the duration of a `with` block."""
    install(observer)
    try:
        yield observer
    finally:
        uninstall(observer)


@contextmanager
def instance_scope(instance_id: str) -> Iterator[None]:
    """Steps inside the block belong to the durable instance `instance_id` (the runner
    wraps each `apply` in it, so that observers can follow one instance's history)."""
    token = _instance.set(instance_id)
    try:
        yield
    finally:
        _instance.reset(token)


Notification = tuple["TablesOwner", "State | None", "Result", "str | None"]
"""One observer call's arguments, held by `holding` until they are delivered."""

_held: ContextVar[list[Notification] | None] = ContextVar("statekit_held_steps", default=None)


@contextmanager
def holding(held: list[Notification]) -> Iterator[list[Notification]]:
    """Steps inside the block are appended to `held` instead of being delivered: the
    caller delivers them (`deliver`) once what they classified is final, or drops them.
    The durable runner holds the steps of a decision it may still take back (one made
    on the row it committed last, which the database may find stale), so that an
    observer sees each event once, as the store recorded it."""
    token = _held.set(held)
    try:
        yield held
    finally:
        _held.reset(token)


def deliver(held: list[Notification]) -> None:
    """Call every installed observer with each held notification, in order."""
    for chart, before, result, instance in held:
        for observer in tuple(installed):
            observer(chart, before, result, instance)


def notify(chart: TablesOwner, before: State | None, result: Result) -> None:
    """Call every installed observer with one classified result (or hold it: `holding`)."""
    instance = _instance.get()
    held = _held.get()
    if held is not None:
        held.append((chart, before, result, instance))
        return
    for observer in tuple(installed):
        observer(chart, before, result, instance)
