"""The exploration's memory bound: past it the search stops at once and says so."""

from __future__ import annotations

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


def test_past_the_memory_bound_the_exploration_stops_and_says_so() -> None:
    explored = explore(chart_of(_regions(12)), max_memory=1)
    (limit,) = explored.limits
    assert limit.kind == "memory"
    assert "MiB of memory (--max-memory)" in limit.message
    assert not explored.complete
    expanded = [n for n in explored.nodes if n.outcomes is not None]
    assert len(expanded) < len(explored.nodes) < 4096
    assert all(n.outcomes is None for n in explored.nodes[len(expanded) :])


def test_within_the_default_bound_a_small_chart_is_complete() -> None:
    explored = explore(chart_of(_regions(8)), max_memory=DEFAULT_MAX_MEMORY)
    assert explored.complete and len(explored.nodes) == 256
