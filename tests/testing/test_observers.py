"""The engine's observer interface: every classified result, from every caller of the step."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import statekit
from statekit.engine import observers
from statekit.engine.chart import START_EVENT
from statekit.engine.result import Result, Status
from statekit.engine.state import State
from statekit.engine.tables import TablesOwner
from statekit.runner.runner import Runner
from statekit.runner.store import open_store

MACHINES = Path(__file__).resolve().parents[2] / "machines"

Seen = list[tuple[str, bool, str, str | None, str | None]]


def _collector(seen: Seen) -> observers.Observer:
    def observe(
        chart: TablesOwner, before: State | None, result: Result, instance: str | None
    ) -> None:
        seen.append(
            (chart.tables.chart.name, before is None, result.event, result.reason, instance)
        )

    return observe


def test_send_initialize_and_replay_are_observed_and_uninstall_stops_it() -> None:
    chart = statekit.load(MACHINES / "payment.yaml")
    seen: Seen = []
    already = list(observers.installed)  # the coverage plugin's, when the suite runs with it
    with observers.observing(_collector(seen)):
        start = chart.initialize().state
        r = chart.send(start, "START_PAY", {"amount": 100})
        chart.send(r.state, "NOPE")
        chart.replay([("START_PAY", {"amount": 5})])
    chart.send(start, "START_PAY", {"amount": 100})
    assert seen == [
        ("payment", True, START_EVENT, None, None),
        ("payment", False, "START_PAY", None, None),
        ("payment", False, "NOPE", "UNKNOWN_EVENT", None),
        ("payment", True, START_EVENT, None, None),  # replay starts from `start()`
        ("payment", False, "START_PAY", None, None),
    ]
    assert observers.installed == already


def test_observers_are_called_in_order_and_removed_one_by_one() -> None:
    chart = statekit.load(MACHINES / "payment.yaml")
    calls: list[str] = []
    start = chart.start()

    def first(*_: Any) -> None:
        calls.append("first")

    def second(*_: Any) -> None:
        calls.append("second")

    observers.install(first)
    observers.install(second)
    try:
        chart.send(start, "CLOSE")
        observers.uninstall(first)
        chart.send(start, "CLOSE")
        observers.uninstall(first)  # not installed any more: nothing happens
    finally:
        observers.uninstall(second)
    assert calls == ["first", "second", "second"]


def test_the_runner_reports_each_apply_with_its_instance(tmp_path: Path) -> None:
    runner = Runner(
        statekit.load(MACHINES / "payment.yaml"), open_store(f"sqlite:///{tmp_path}/r.db")
    )
    seen: Seen = []
    with observers.observing(_collector(seen)):
        runner.create("pay-1")
        runner.apply("pay-1", "e1", "START_PAY", {"amount": 100})
        runner.apply("pay-1", "e2", "NOPE")
        runner.apply_batch("pay-1", [])
    steps = [s for s in seen if not s[1]]
    assert steps == [
        ("payment", False, "START_PAY", None, "pay-1"),
        ("payment", False, "NOPE", "UNKNOWN_EVENT", "pay-1"),
    ]


def test_results_seen_are_the_results_returned() -> None:
    chart = statekit.load(MACHINES / "payment.yaml")
    got: list[Result] = []
    start = chart.start()
    with observers.observing(lambda _c, _b, result, _i: got.append(result)):
        returned = chart.send(start, "START_PAY", {"amount": 0})
    assert got == [returned] and returned.status is Status.REJECTED


def test_instance_scopes_of_threads_do_not_leak_into_each_other(tmp_path: Path) -> None:
    """Runners in two threads whose scopes open and close crosswise: each step names its
    own thread's instance, and afterwards a plain send names none."""
    import threading

    chart = statekit.load(MACHINES / "payment.yaml")
    seen: Seen = []
    inside = threading.Barrier(2)
    a_left = threading.Event()

    def run(instance: str) -> None:
        with observers.instance_scope(instance):
            inside.wait()  # both scopes are open now
            if instance == "b":
                a_left.wait()  # a closes first, b last: crosswise
            chart.send(chart.start(), "START_PAY", {"amount": 1})
        if instance == "a":
            a_left.set()

    with observers.observing(_collector(seen)):
        threads = [threading.Thread(target=run, args=(name,)) for name in ("a", "b")]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        chart.send(chart.start(), "START_PAY", {"amount": 1})
    sends = [instance for _, initial, _, _, instance in seen if not initial]
    assert sorted(sends[:2], key=str) == ["a", "b"]
    assert sends[2:] == [None]


def test_a_watcher_sees_every_chart_made_until_unwatched() -> None:
    made: list[str] = []

    def watcher(chart: TablesOwner) -> None:
        made.append(chart.tables.chart.name)

    observers.watch(watcher)
    try:
        payment = statekit.load(MACHINES / "payment.yaml")
        statekit.Chart(payment.ir)
    finally:
        observers.unwatch(watcher)
    statekit.load(MACHINES / "task.yaml")
    assert made == ["payment", "payment"]
    assert watcher not in observers.watchers
