"""The compact exploration against an independent one: a plain breadth-first search over
`Chart.send` on generated data-free charts (the same abstract states at the same
shortest depths, the same answer to every event in each, paths that replay), the bound
on abstract states, and results that do not depend on when the explorer drops the
engine's working caches."""

from __future__ import annotations

import json
import random
from collections import deque
from typing import Any

import pytest
from analysis_charts import MACHINES, chart_of

import statekit
import statekit.analysis.exploration as exploration_module
import statekit.analysis.explorer as explorer_module
from statekit.analysis.exploration import Exploration
from statekit.analysis.explorer import explore
from statekit.analysis.macrostep_branches import BEYOND, NOWHERE, MacrostepBranch
from statekit.compiler.ir import CompiledChart
from statekit.engine.chart import Chart
from statekit.engine.result import Status
from statekit.engine.state import State

EVENTS = ("E0", "E1", "E2", "E3")
Key = tuple[frozenset[str], tuple[tuple[str, tuple[str, ...]], ...]]


class _Names:
    def __init__(self) -> None:
        self.count = 0

    def __call__(self, prefix: str) -> str:
        self.count += 1
        return f"{prefix}{self.count}"


def _tree(rng: random.Random, names: _Names, depth: int, out: list[tuple[str, str]]) -> Any:
    """A random state body: compound (with perhaps a history child and a final child),
    parallel, or atomic; `out` collects (name, kind) of every state made."""
    kind = rng.choice(["atomic", "atomic", "compound", "compound", "parallel"])
    if depth >= 3 or kind == "atomic":
        return {}
    children: dict[str, Any] = {}
    for _ in range(rng.randint(2, 3)):
        name = names("s")
        children[name] = _tree(rng, names, depth + 1, out)
        out.append((name, "state"))
    body: dict[str, Any] = {"states": children}
    if kind == "parallel":
        body["parallel"] = True
        return body
    body["initial"] = next(iter(children))
    if depth > 0 and rng.random() < 0.4:  # the root is never exited: no history
        name = names("h")
        children[name] = {"history": rng.choice(["shallow", "deep"])}
        out.append((name, "history"))
    if rng.random() < 0.3:
        name = names("f")
        children[name] = {"final": True}
        out.append((name, "final"))
    return body


def _transitions(bodies: dict[str, Any], rng: random.Random, targets: list[str]) -> None:
    for body in bodies.values():
        if "history" in body or body.get("final"):
            continue
        on = {}
        for event in rng.sample(EVENTS, rng.randint(0, 2)):
            on[event] = rng.choice(targets)
        if on:
            body["on"] = on
        if rng.random() < 0.2:
            body["reject"] = {"*": "NOT_HERE"}
        if rng.random() < 0.2 and "states" in body and not body.get("parallel"):
            body["done"] = rng.choice(targets)
        if "states" in body:
            _transitions(body["states"], rng, targets)


def generated_chart(seed: int) -> str:
    """A data-free chart from `seed`: nested compound and parallel states, shallow and
    deep history, final states with `done`, `reject: "*"` here and there."""
    rng = random.Random(seed)
    names = _Names()
    made: list[tuple[str, str]] = []
    root = _tree(rng, names, 0, made)
    while "states" not in root:
        root = _tree(rng, names, 0, made)
    targets = [name for name, kind in made if kind != "final" or rng.random() < 0.5]
    _transitions(root["states"], rng, targets)
    lines = [f"statechart: generated{seed}", "version: 1", "events:"]
    lines += [f"  {e}: {{}}" for e in EVENTS]
    for key, value in root.items():
        lines.append(f"{key}: {json.dumps(value)}")
    return "\n".join(lines) + "\n"


def _chart(seed: int) -> Chart:
    return Chart(chart_of(generated_chart(seed), f"generated{seed}.yaml"))


def _key(state: State) -> Key:
    return (state.configuration, tuple(sorted(state.history.items())))


def _node_key(exploration: Exploration, node: int) -> Key:
    states = exploration.chart.states
    n = exploration.nodes[node]
    history = tuple(
        sorted(
            (states[h].path, tuple(states[s].path for s in values))
            for h, values in n.history.items()
        )
    )
    return (n.config.paths, history)


def concrete_bfs(chart: Chart) -> tuple[dict[Key, int], dict[Key, dict[str, Any]]]:
    """Every (configuration, history) `Chart.send` reaches, with its shortest distance in
    events, and the engine's answer to every event there: (status, reason, target)."""
    start = chart.start()
    distance = {_key(start): 0}
    answers: dict[Key, dict[str, Any]] = {}
    queue = deque([start])
    while queue:
        state = queue.popleft()
        here = _key(state)
        answers[here] = {}
        for event in EVENTS:
            result = chart.send(state, event, {})
            after = None
            if result.status is Status.APPLIED:
                after = _key(result.state)
                if after not in distance:
                    distance[after] = distance[here] + 1
                    queue.append(result.state)
            answers[here][event] = (result.status, result.reason, after)
    return distance, answers


SEEDS = range(60)


@pytest.mark.parametrize("seed", SEEDS)
def test_the_exploration_is_the_engines_breadth_first_search(seed: int) -> None:
    chart = _chart(seed)
    distance, answers = concrete_bfs(chart)
    explored = explore(chart.ir)
    assert explored.complete
    keys = [_node_key(explored, i) for i in range(len(explored.nodes))]
    assert len(set(keys)) == len(keys)  # every abstract state once
    assert set(keys) == set(distance)
    for node in explored.nodes:
        key = keys[node.id]
        assert node.depth == distance[key]  # breadth first: shortest distances
        path = explored.path(node.id)
        assert len(path) == node.depth + 1
        assert path[-1][1].target == node.id
        state = chart.start()
        for _, step in path[1:]:
            assert step.event is not None
            state = chart.send(state, step.event, {}).state
        assert _key(state) == key  # the path replays to the abstract state
        assert node.outcomes is not None
        got = {
            o.event: (o.status, o.reason, None if o.target == NOWHERE else keys[o.target])
            for o in node.outcomes
        }
        assert len(node.outcomes) == len(EVENTS)  # one outcome per event: no data
        assert got == answers[key]


@pytest.mark.parametrize("seed", [s for s in SEEDS if s % 3 == 0])
def test_the_bound_keeps_a_breadth_first_prefix(seed: int) -> None:
    chart = _chart(seed)
    distance, answers = concrete_bfs(chart)
    total = len(distance)
    for bound in sorted({1, 2, max(1, total // 2), max(1, total - 1), total, total + 1}):
        explored = explore(chart.ir, max_configurations=bound)
        kept = [_node_key(explored, i) for i in range(len(explored.nodes))]
        assert len(kept) == min(bound, total)
        if bound < total:
            assert [limit.kind for limit in explored.limits] == ["configurations"]
            assert explored.limits[0].message == (
                f"the exploration stopped at {bound:,} abstract states (--max-configurations)"
            )
        else:
            assert explored.complete
        deepest = max(distance[k] for k in kept)
        assert {k for k, d in distance.items() if d < deepest} <= set(kept)
        for node in explored.nodes:
            assert node.depth == distance[kept[node.id]]
            assert node.outcomes is not None  # the bound stops finding, not expanding
            for outcome in node.outcomes:
                expected = answers[kept[node.id]][outcome.event or ""][2]
                if outcome.target == BEYOND:
                    assert expected is not None and expected not in kept
                elif outcome.target != NOWHERE:
                    assert kept[outcome.target] == expected


def _plain(branch: MacrostepBranch) -> Any:
    steps = [
        (s.transitions, s.exit_order, s.entry_order, s.history_updates, s.effects)
        for s in branch.steps
    ]
    return (*branch[:3], steps, *branch[4:])


def _everything(exploration: Exploration) -> Any:
    """What an exploration answers, as plain values (steps are interned per exploration:
    compared by their fields here)."""
    nodes = [
        (
            n.config.ids,
            n.history_key,
            n.parent,
            n.depth,
            _plain(n.via),
            None if n.outcomes is None else [_plain(o) for o in n.outcomes],
        )
        for n in exploration.nodes
    ]
    conflicts = [
        (c.conflict.configuration.ids, c.conflict.kept, c.node, c.event, c.assumptions)
        for c in exploration.conflicts
    ]
    initial = [_plain(o) for o in exploration.initial]
    return nodes, initial, exploration.limits, conflicts, exploration.checks


def _charts() -> list[tuple[str, CompiledChart]]:
    out = [(path.stem, statekit.compile(path)) for path in sorted(MACHINES.glob("*.yaml"))]
    for seed in range(0, 60, 7):
        out.append((f"generated{seed}", _chart(seed).ir))
    return out


@pytest.mark.parametrize("scope", [1, 2, 7, 64])
def test_the_answers_do_not_depend_on_when_the_working_caches_are_dropped(
    scope: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The explorer drops the engine's per-configuration caches every
    `SCOPE_EXPANSIONS` expanded states; the media player (505 abstract states over 16
    configurations, history shared between them) and the generated charts give the
    same exploration whenever that happens."""
    charts = _charts()
    reference = [_everything(explore(chart)) for _, chart in charts]
    monkeypatch.setattr(explorer_module, "SCOPE_EXPANSIONS", scope)
    for (name, chart), expected in zip(charts, reference, strict=True):
        assert _everything(explore(chart)) == expected, name


@pytest.mark.parametrize("kept", [1, 3, 4096])
def test_outcomes_read_again_in_any_order_are_the_same(
    kept: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`Node.outcomes` keeps the last nodes' outcomes built (`OUTCOME_CACHE` of them):
    read forwards, backwards and again, every node answers what it answered first, and
    changing what a caller got back changes nothing stored."""
    monkeypatch.setattr(exploration_module, "OUTCOME_CACHE", kept)
    for name, chart in _charts():
        exploration = explore(chart)
        first = [n.outcomes for n in exploration.nodes]
        backwards = [n.outcomes for n in reversed(exploration.nodes)][::-1]
        assert backwards == first, name
        for got in first:
            if got:
                got.clear()  # the caller's list, not the store's
        assert [n.outcomes for n in exploration.nodes] == backwards, name
