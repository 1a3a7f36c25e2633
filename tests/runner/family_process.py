"""The child of the family kill tests (run as a script).

python family_process.py URL FOLDER INSTANCE EVENT_ID TYPE PAYLOAD_JSON

applies one event through a runner of the order chart given the payment and shipment
charts (`family_machines`, written to FOLDER): a family step. At each hold point of its
transaction (`hold_points`: begin, locked, then decided before each member's writes,
commit) it prints the point's name with how many times it was reached (`decided-2`:
before the second member's writes) and waits for a line on its standard input, so that
the parent can SIGKILL it exactly there; then it prints `returned`.
"""

from __future__ import annotations

import json
import sys
from collections import Counter
from pathlib import Path

import statekit
from statekit.runner.runner import Runner
from statekit.runner.store import open_store


def main(url: str, folder: str, instance: str, event_id: str, kind: str, payload: str) -> None:
    """See the module docstring."""
    order, payment, shipment = (statekit.load(Path(folder) / f"{n}.yaml")
                                for n in ("order", "payment", "shipment"))  # fmt: skip
    runner = Runner(order, open_store(url), charts=[payment, shipment])
    reached: Counter[str] = Counter()

    def hold(point: str) -> None:
        reached[point] += 1
        sys.stdout.write(f"{point}-{reached[point]}\n")
        sys.stdout.flush()
        if not sys.stdin.readline():
            raise SystemExit(f"the parent went away at {point}")

    runner.store.hold = hold
    runner.apply(instance, event_id, kind, json.loads(payload))
    runner.store.hold = None
    sys.stdout.write("returned\n")
    sys.stdout.flush()


if __name__ == "__main__":
    main(*sys.argv[1:])
