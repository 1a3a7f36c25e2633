"""The exploration's memory bound: past it the search stops at once and says so."""

from __future__ import annotations

import json
import subprocess
import sys

from chart_helpers import chart_of

from statekit.analysis.explorer import DEFAULT_MAX_MEMORY, explore
from statekit.analysis.memory import memory_in_use


def _regions(count: int) -> str:
    events = ", ".join(f"T{i}: {{}}" for i in range(count))
    body = "".join(
        f"  r{i}:\n    initial: a{i}\n    states:\n"
        f"      a{i}: {{on: {{T{i}: b{i}}}}}\n      b{i}: {{on: {{T{i}: a{i}}}}}\n"
        for i in range(count)
    )
    return f"statechart: boom\nparallel: true\nevents: {{{events}}}\nstates:\n{body}"


def test_memory_can_be_read_here() -> None:
    first = memory_in_use()
    assert first is not None and first > 0


_PAST_THE_BOUND = """
import json, sys
from statekit.analysis.explorer import explore
from statekit.compiler.pipeline import compile_source
chart = compile_source(sys.stdin.read(), "boom.yaml").chart
explored = explore(chart, max_memory=1)
expanded = [n for n in explored.nodes if n.outcomes is not None]
print(json.dumps({
    "limits": [[limit.kind, limit.message] for limit in explored.limits],
    "complete": explored.complete,
    "expanded": len(expanded),
    "nodes": len(explored.nodes),
    "rest_unexpanded": all(n.outcomes is None for n in explored.nodes[len(expanded):]),
}))
"""


def test_past_the_memory_bound_the_exploration_stops_and_says_so() -> None:
    # in a fresh process: a test process that freed memory earlier can grow its data into
    # pages it already holds, so its resident size would not move past even 1 byte
    run = subprocess.run(
        [sys.executable, "-c", _PAST_THE_BOUND],
        input=_regions(12),
        capture_output=True,
        text=True,
        check=True,
    )
    found = json.loads(run.stdout)
    ((kind, message),) = found["limits"]
    assert kind == "memory"
    assert "MiB of memory (--max-memory)" in message
    assert not found["complete"]
    assert found["expanded"] < found["nodes"] < 4096
    assert found["rest_unexpanded"]


def test_within_the_default_bound_a_small_chart_is_complete() -> None:
    explored = explore(chart_of(_regions(8)), max_memory=DEFAULT_MAX_MEMORY)
    assert explored.complete and len(explored.nodes) == 256
