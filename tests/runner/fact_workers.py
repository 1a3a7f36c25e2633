"""A worker process for the concurrency test of business keys (run as a script).

python fact_workers.py URL CHART WORKER FACTS INSTANCES SEED
    → "ready"; after a line on standard input, sends every fact once under its own
      event IDs (in its own shuffled order), then one JSON line per attempt:
      [instance, event_id, channel_ref, amount, status, reason, version, sequence,
       first_event_id, duplicate]

Fact f is PAY_SUCCESS(channel_ref=f"ref-{f}") on instance f"i{f % INSTANCES}"; its amount
is 1, except that every third fact is sent with amount 1 by even workers and 2 by odd
ones (so the same key comes with two payloads). CHART is `runner_charts.FACTS`.
"""

from __future__ import annotations

import json
import random
import sys

import statekit
from statekit.runner.runner import Runner
from statekit.runner.store import open_store


def amount(fact: int, worker: int) -> int:
    """The amount `worker` reports for `fact`."""
    return 1 + worker % 2 if fact % 3 == 0 else 1


def send(url: str, chart: str, worker: int, facts: int, instances: int, seed: int) -> None:
    runner = Runner(statekit.load(chart), open_store(url))
    order = list(range(facts))
    random.Random(seed).shuffle(order)
    print("ready", flush=True)
    sys.stdin.readline()
    lines = []
    for fact in order:
        instance, ref, by = f"i{fact % instances}", f"ref-{fact}", amount(fact, worker)
        event_id = f"w{worker}-f{fact}"
        o = runner.apply(instance, event_id, "PAY_SUCCESS", {"channel_ref": ref, "amount": by})
        lines.append(
            [
                instance,
                event_id,
                ref,
                by,
                o.status.value,
                o.reason,
                o.version,
                o.sequence,
                o.first_event_id,
                o.duplicate,
            ]
        )
    for line in lines:
        print(json.dumps(line))


if __name__ == "__main__":
    url, chart, *rest = sys.argv[1:]
    send(url, chart, *(int(x) for x in rest))
