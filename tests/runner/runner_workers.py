"""Worker processes for the concurrency and crash tests (run as a script).

python runner_workers.py contend URL CHART WORKER ATTEMPTS INSTANCES SEED
    → one JSON line per attempt at the end: [instance, event_id, by, status, reason,
      version, sequence]
python runner_workers.py crash URL CHART RUN INSTANCES SEED
    → "ready", then one JSON line per acknowledged event, until killed (or 20 s)

CHART is the file of the counter chart (`runner_charts.COUNTER`, written by the test).
"""

from __future__ import annotations

import json
import random
import sys
import time

import statekit
from statekit.runner.runner import Runner
from statekit.runner.store import open_store


def contend(url: str, chart: str, worker: int, attempts: int, instances: int, seed: int) -> None:
    """Conflicting applies: read the version, then apply with it as expected_version
    (70%), apply unconditionally (10%), send a rejected event (10%) or redeliver one
    of our earlier event IDs (10%)."""
    rng = random.Random(seed)
    runner = Runner(statekit.load(chart), open_store(url))
    sent: list[tuple[str, str, int]] = []
    lines = []
    for n in range(attempts):
        instance = f"i{rng.randrange(instances)}"
        roll = rng.random()
        expected: int | None = None
        if roll < 0.1 and sent:
            instance, event_id, by = rng.choice(sent)
        else:
            event_id, by = f"w{worker}-{n}", rng.randint(1, 5)
            if roll < 0.2:
                by = 0  # REJECTED: NOT_POSITIVE
            elif roll < 0.9:
                expected = runner.load(instance).version
            sent.append((instance, event_id, by))
        o = runner.apply(instance, event_id, "Incr", {"by": by}, expected_version=expected)
        lines.append([instance, event_id, by, o.status.value, o.reason, o.version, o.sequence])
    for line in lines:
        print(json.dumps(line))


def crash(url: str, chart: str, run: int, instances: int, seed: int) -> None:
    """Apply events until killed, acknowledging each after `apply` returned."""
    rng = random.Random(seed)
    runner = Runner(statekit.load(chart), open_store(url))
    out = sys.stdout
    out.write("ready\n")
    out.flush()
    deadline = time.monotonic() + 20
    n = 0
    while time.monotonic() < deadline:
        instance = f"i{rng.randrange(instances)}"
        event_id = f"r{run}-{n}"
        o = runner.apply(instance, event_id, "Incr", {"by": 1 + n % 3})
        out.write(json.dumps([instance, event_id, o.status.value, o.version]) + "\n")
        out.flush()
        n += 1


if __name__ == "__main__":
    mode, url, chart, *rest = sys.argv[1:]
    numbers = [int(x) for x in rest]
    if mode == "contend":
        contend(url, chart, *numbers)
    else:
        crash(url, chart, *numbers)
