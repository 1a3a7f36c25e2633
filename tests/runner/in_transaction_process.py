"""The child of the in-transaction kill tests (run as a script).

python in_transaction_process.py KIND URL CHART NAME

writes the order NAME (the application's row) and applies the event NAME to the counter
instance NAME through `Runner.in_transaction` on an application connection of KIND
(`app_connections`), in one transaction, then commits. At each point of that transaction
it prints the point's name and waits for a line on its standard input before going on,
so that the parent can SIGKILL it exactly there (`POINTS`, in order).
"""

from __future__ import annotations

import sys

from app_connections import App

import statekit
from statekit.runner.runner import Runner
from statekit.runner.store import open_store
from statekit.runner.store.hold_points import COMMIT, DECIDED, LOCKED

INSIDE = {LOCKED: "statekit-locked", DECIDED: "statekit-decided", COMMIT: "statekit-release"}
"""statekit's own points inside the call (`hold_points`), as the child names them."""

POINTS = (
    "app-written",  # the application's row written, statekit not called yet
    "statekit-locked",  # the instance row locked and read
    "statekit-decided",  # decided, nothing of statekit's written
    "statekit-release",  # statekit's rows written, its savepoint not released
    "statekit-written",  # the call returned
    "before-commit",  # the block ended, the application's COMMIT not sent
    "committed",  # the application's commit returned
)


def reach(point: str) -> None:
    """Tell the parent where this transaction is, and wait for it to say go on."""
    sys.stdout.write(point + "\n")
    sys.stdout.flush()
    if not sys.stdin.readline():
        raise SystemExit(f"the parent went away at {point}")


def main(kind: str, url: str, chart: str, name: str) -> None:
    """See the module docstring."""
    runner = Runner(statekit.load(chart), open_store(url))
    app = App(kind, url)
    app.begin()
    app.insert_order(name)
    reach("app-written")
    with runner.in_transaction(app.conn) as tx:
        tx.store.hold = lambda point: reach(INSIDE[point]) if point in INSIDE else None
        tx.apply(name, name, "Incr", {"by": 1})
        tx.store.hold = None
        reach("statekit-written")
    reach("before-commit")
    app.commit()
    reach("committed")


if __name__ == "__main__":
    main(*sys.argv[1:])
