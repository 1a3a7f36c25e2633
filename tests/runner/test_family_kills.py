"""A process applying a family step (the order's step and its children's, ONE
transaction) is SIGKILLed at every hold point of it, on both stores: before the parent's
writes, between the parent's and each child's, before the COMMIT. Restarted, the same
event redelivered: nothing is lost or doubled (the family ends as an uninterrupted run
leaves it) and `verify` is clean for every member.

The child (`family_process.py`) stops at each point and waits for a line on its standard
input, so the kill lands exactly there: no sleep decides where.
"""

from __future__ import annotations

import itertools
import json
import os
import signal
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from family_machines import family, write_family

from statekit.runner.runner import Runner
from statekit.runner.store import open_store
from statekit.testing.postgres_server import ThrowawayPostgres

CHILD = Path(__file__).resolve().parent / "family_process.py"
PAY, SHIP = "o1/payment/1", "o1/shipment/1"
STEPS: list[tuple[str, str, str, dict[str, Any]]] = [
    ("o1", "e1", "Place", {"total": 30}),  # the parent's step starts both children
    (PAY, "p1", "Authorized", {"ref": "R-7"}),  # a child's step finishes it: done → parent
    ("o1", "e2", "Cancel", {}),  # the parent's step cancels the shipment
]
MEMBERS_WRITTEN = [3, 2, 2]
"""How many members each step locks and writes (a `decided` point before each one's
writes; a cancelled child's are its link's)."""


def _run(
    url: str, folder: Path, step: tuple[str, str, str, dict[str, Any]], kill_at: str | None
) -> list[str]:
    """Run the child for `step`, answering every point until `kill_at` (SIGKILL there;
    None: to the end); the points it reached."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(CHILD.parent), str(CHILD.parents[1])])}
    instance, event_id, kind, payload = step
    child = subprocess.Popen(
        [sys.executable, str(CHILD), url, str(folder), instance, event_id, kind,
         json.dumps(payload)],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        env=env,
    )  # fmt: skip
    assert child.stdin is not None and child.stdout is not None and child.stderr is not None
    points = []
    try:
        for line in child.stdout:
            point = line.strip()
            points.append(point)
            if point == kill_at:
                child.send_signal(signal.SIGKILL)
                break
            if point != "returned":
                child.stdin.write("go\n")
                child.stdin.flush()
    finally:
        child.wait(timeout=60)
        error = child.stderr.read()
        child.stdin.close()
        child.stdout.close()
        child.stderr.close()
    expected = -signal.SIGKILL if kill_at is not None else 0
    assert child.returncode == expected, error
    return points


def _family(runner: Runner) -> dict[str, Any]:
    """Everything of the family that must not be lost or doubled."""
    found: dict[str, Any] = {}
    for instance_id in ("o1", PAY, SHIP):
        try:
            loaded = runner.load(instance_id)
        except Exception:
            found[instance_id] = None
            continue
        found[instance_id] = (
            loaded.version,
            sorted(loaded.state.configuration),
            dict(loaded.state.context),
            [(e.event_id, e.type) for e in runner.history(instance_id)],
        )
    found["links"] = [(r.child_instance_id, r.status) for r in runner.store.children("o1")]
    return found


def _fresh(store_url: str, tmp_path: Path, request: pytest.FixtureRequest) -> Callable[[], str]:
    """A maker of fresh, empty stores of the kind of `store_url`."""
    names = itertools.count(1)
    if store_url.startswith("sqlite"):
        return lambda: f"sqlite:///{tmp_path / f'family{next(names)}.db'}"
    server: ThrowawayPostgres = request.getfixturevalue("pg_server")
    prefix = f"statekit_family_{os.getpid()}_"
    return lambda: server.create_database(f"{prefix}{next(names)}")


def _prepared(url: str, steps: list[tuple[str, str, str, dict[str, Any]]]) -> Runner:
    """A runner over `url` whose family took `steps`, uninterrupted."""
    order, payment, shipment = family()
    runner = Runner(order, open_store(url), charts=[payment, shipment])
    runner.create("o1")
    for instance, event_id, kind, payload in steps:
        runner.apply(instance, event_id, kind, payload)
    return runner


def test_a_kill_at_every_point_of_a_family_step_loses_and_doubles_nothing(
    store_url: str, tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    folder = tmp_path / "charts"
    folder.mkdir()
    write_family(folder)
    fresh = _fresh(store_url, tmp_path, request)
    killed = 0
    for number, step in enumerate(STEPS):
        url = fresh()
        runner = _prepared(url, STEPS[:number])
        before = _family(runner)
        points = _run(url, folder, step, None)  # every point of this step, in order
        after = _family(runner)
        runner.store.close()
        assert after != before and points[-1] == "returned"
        assert [p.rsplit("-", 1)[0] for p in points[:2]] == ["begin", "locked"]
        written = sum(p.startswith("decided-") for p in points)
        assert written == MEMBERS_WRITTEN[number], points
        for point in points[:-1]:  # ("returned" comes after the commit)
            url = fresh()
            runner = _prepared(url, STEPS[:number])
            _run(url, folder, step, point)
            killed += 1
            assert _family(runner) == before, point  # nothing of the step committed
            instance, event_id, kind, payload = step
            runner.apply(instance, event_id, kind, payload)  # restarted: redelivered
            assert _family(runner) == after, point  # as the uninterrupted run left it
            for member in ("o1", PAY, SHIP):
                if after[member] is not None:
                    report = runner.verify(member)
                    assert report.ok, (point, member, report.differences)
            runner.store.close()
    assert killed == sum(3 + n for n in MEMBERS_WRITTEN)  # begin, locked, commit
