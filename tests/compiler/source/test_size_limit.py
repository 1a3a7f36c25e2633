"""The loader's default limits admit large generated charts and still refuse hostile files
of the same size: the node count, not the byte count, is what bounds the work."""

from __future__ import annotations

from collections.abc import Callable

import pytest
import yaml

from statekit.compiler.diagnostics import Severity
from statekit.compiler.source.limits import DEFAULT_LIMITS
from statekit.compiler.source.loader import load_yaml

NODES = DEFAULT_LIMITS.max_expanded_nodes
BYTES = DEFAULT_LIMITS.max_bytes


def _chart(states: int, transitions: int) -> str:
    """A chain of compound groups of ten states, `transitions` per state (every other one
    guarded and assigning), the shape of the benchmarks' generated charts."""
    lines = ["statechart: big", "version: 1", "context:", "  n: {type: integer, default: 0}"]
    lines += ["events:", *(f"  E{e}: {{n: integer}}" for e in range(50))]
    lines += ["guards:", "  small: {if: event.n < ctx.n + 10, else: TOO_BIG}", "initial: g0"]
    lines.append("states:")
    groups = states // 10
    for g in range(groups):
        lines += [f"  g{g}:", f"    initial: s{g}_0", "    states:"]
        for i in range(10):
            lines += [f"      s{g}_{i}:", "        on:"]
            for k in range(transitions):
                target = f"s{(g + k) % groups}_{(i + k + 1) % 10}"
                event = f"E{(i * transitions + k) % 50}"
                if k % 2:
                    do = "do: [{assign: {n: ctx.n + 1}}]"
                    lines.append(f"          {event}: {{to: {target}, guard: small, {do}}}")
                else:
                    lines.append(f"          {event}: {target}")
    return "\n".join(lines) + "\n"


def _nodes(text: str) -> int:
    def count(node: yaml.Node) -> int:
        if isinstance(node, yaml.MappingNode):
            return 1 + sum(count(k) + count(v) for k, v in node.value)
        if isinstance(node, yaml.SequenceNode):
            return 1 + sum(count(v) for v in node.value)
        return 1

    root = yaml.compose(text, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))
    assert root is not None
    return count(root)


def _errors(text: str) -> list[str]:
    _root, diagnostics = load_yaml(text, "c.yaml")
    return [d.slug for d in diagnostics if d.severity is Severity.ERROR]


def test_a_chart_of_5000_states_and_25000_transitions_loads() -> None:
    text = _chart(5000, 5)
    assert len(text) > 1 << 20  # over the old limit of 1 MiB
    root, diagnostics = load_yaml(text, "c.yaml")
    assert root is not None and not diagnostics


def test_a_chart_just_under_the_node_limit_loads_and_one_group_more_is_refused() -> None:
    per_group = _nodes(_chart(20, 5)) - _nodes(_chart(10, 5))
    groups = (NODES - _nodes(_chart(10, 5))) // per_group + 1
    under = _chart(groups * 10, 5)
    assert NODES - per_group < _nodes(under) <= NODES
    root, diagnostics = load_yaml(under, "c.yaml")
    assert root is not None and not diagnostics
    assert _errors(_chart((groups + 1) * 10, 5)) == ["yaml-limits"]


def _flow_list(size: int) -> str:
    head = "statechart: x\nstates: ["
    return head + "0," * ((size - len(head)) // 2 - 1) + "0]\n"


def _block_list(size: int) -> str:
    head = "statechart: x\nstates:\n"
    return head + "- 0\n" * ((size - len(head)) // 4)


def _flat_mapping(size: int) -> str:
    head = "statechart: x\nstates:\n"
    lines, used, i = [], len(head), 0
    while used < size - 20:
        line = f"  k{i}: 0\n"
        lines.append(line)
        used += len(line)
        i += 1
    return head + "".join(lines)


def _flow_mappings(size: int) -> str:
    head = "statechart: x\nstates: ["
    return head + "{a: 0}," * ((size - len(head)) // 7 - 1) + "{a: 0}]\n"


def _aliases(size: int) -> str:
    lines = ["statechart: x", "a0: &a0 [x, x, x, x, x, x, x, x, x, x]"]
    lines += [f"a{i}: &a{i} [{', '.join([f'*a{i - 1}'] * 10)}]" for i in range(1, 9)]
    text = "\n".join(lines) + "\n"
    return text + "#" * (size - len(text) - 1) + "\n"


def _over_the_bytes(size: int) -> str:
    text = "statechart: x\n"
    return text + "#" * (size + 1 - len(text))


def _deep(size: int) -> str:
    head = "statechart: x\nstates: "
    depth = (size - len(head)) // 2
    return head + "[" * depth + "]" * depth + "\n"


HOSTILE: dict[str, Callable[[int], str]] = {
    "flow list of scalars": _flow_list,
    "block list of scalars": _block_list,
    "flow list of mappings": _flow_mappings,
    "nested aliases": _aliases,
    "deep nesting": _deep,
    "one byte over": _over_the_bytes,
}
CHART_BYTES = 1_209_326
"""The size of `_chart(5000, 5)`: the hostile files are tried at it and at the limit."""


def test_the_chart_size_the_hostile_files_are_tried_at() -> None:
    assert len(_chart(5000, 5)) == CHART_BYTES


@pytest.mark.parametrize("size", [CHART_BYTES, BYTES], ids=["chart-size", "at-the-limit"])
@pytest.mark.parametrize("make", list(HOSTILE.values()), ids=list(HOSTILE))
def test_hostile_files_of_that_size_are_refused_by_a_limit(
    make: Callable[[int], str], size: int
) -> None:
    text = make(size) if make is not _over_the_bytes else make(BYTES)
    assert size - 64 <= len(text.encode()) <= BYTES + 1
    root, diagnostics = load_yaml(text, "h.yaml")
    assert root is None
    refused = [d for d in diagnostics if d.slug == "yaml-limits"]
    assert len(refused) == 1 and refused[0].span.line >= 1, diagnostics


def test_a_mapping_of_short_keys_at_the_limit_is_refused_by_its_nodes() -> None:
    text = _flat_mapping(BYTES)
    assert _errors(text) == ["yaml-limits"]
