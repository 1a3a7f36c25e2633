"""Two concurrent family steps of one family on PostgreSQL: one holds the family's root
lock (held at a hold point, `hold_points`); the other, sent to the child, locks the root
first (through the child's link), so it waits for the first's commit (the server reports
its lock wait) and never deadlocks; both are answered, in the order of the root lock."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable

import psycopg
import pytest
from family_machines import family

from statekit.runner.outcome import Outcome
from statekit.runner.runner import Runner
from statekit.runner.store import open_store
from statekit.runner.store.hold_points import LOCKED

PAY = "o1/payment/1"
WAIT = 30.0


def _runner(url: str) -> Runner:
    order, payment, shipment = family()
    return Runner(order, open_store(url), charts=[payment, shipment])


def _until(condition: Callable[[], bool], what: str) -> None:
    """Wait for an observable state (a lock wait the server reports): polled, failing
    after `WAIT` s."""
    deadline = time.monotonic() + WAIT
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting until {what}")
        time.sleep(0.002)


STEPS = {"root": ("o1", "c1", "Cancel", {}), "child": (PAY, "p1", "Authorized", {"ref": "R"})}


@pytest.mark.parametrize(("first", "second"), [("root", "child"), ("child", "root")])
def test_a_second_family_step_waits_for_the_root_and_never_deadlocks(
    pg_url: str, first: str, second: str
) -> None:
    setup = _runner(pg_url)
    setup.create("o1")
    setup.apply("o1", "e1", "Place", {"total": 30})
    holder, waiter = _runner(pg_url), _runner(pg_url)
    monitor = psycopg.connect(pg_url, autocommit=True)
    reached, release = threading.Event(), threading.Event()

    def hold(point: str) -> None:
        if point == LOCKED and not reached.is_set():
            reached.set()
            if not release.wait(WAIT):
                raise AssertionError("the first family step was held too long")

    answers: dict[str, Outcome | BaseException] = {}

    def run(name: str, runner: Runner) -> None:
        try:
            answers[name] = runner.apply(*STEPS[name])
        except BaseException as exc:  # (reported by the assertions below)
            answers[name] = exc

    def lock_waiters() -> bool:
        row = monitor.execute(
            "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() "
            "AND wait_event_type = 'Lock' AND pid <> pg_backend_pid()"
        ).fetchone()
        return bool(row and row[0] == 1)

    holder.store.hold = hold
    a = threading.Thread(target=run, args=(first, holder))
    a.start()
    try:
        assert reached.wait(WAIT), "the first family step never locked the root"
        b = threading.Thread(target=run, args=(second, waiter))
        b.start()
        _until(lock_waiters, "the second family step waits for a lock")
        assert b.is_alive() and second not in answers  # it waits for the root
    finally:
        release.set()
        a.join(WAIT)
    b.join(WAIT)
    assert not a.is_alive() and not b.is_alive()
    outcomes = {k: v for k, v in answers.items() if isinstance(v, Outcome)}
    assert len(outcomes) == 2, answers
    if first == "root":  # cancelled first: the child refuses the payment
        assert outcomes["root"].applied
        assert outcomes["child"].reason == "INVOCATION_CANCELLED"
    else:  # paid first: the order got done.invoke.payment, then it is cancelled
        assert outcomes["child"].applied and outcomes["root"].applied
        assert [e.type for e in setup.history("o1")][1:] == ["done.invoke.payment", "Cancel"]
    assert setup.load("o1").state.configuration == {"cancelled"}
    for instance in ("o1", PAY):
        assert setup.verify(instance).ok, setup.verify(instance).differences
    monitor.close()
    for r in (setup, holder, waiter):
        r.store.close()
