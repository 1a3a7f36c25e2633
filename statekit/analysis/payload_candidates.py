"""The payloads a replay tries for an event: every combination of its fields' candidates.

Candidate values of a field come from its declared type (enum values, both booleans,
null when nullable), from the literals the chart's guards compare with (each integer
and its neighbours, each string, strings of each integer's length and its neighbours',
for `len`, each `starts_with` prefix joined to each `ends_with` suffix) and from the
current context (`statekit.analysis.witness` replays them).
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator, Mapping
from dataclasses import replace
from typing import Any

from statekit.compiler.expressions.tree import Call, Literal, iter_nodes
from statekit.compiler.ir import CompiledChart, FieldDecl
from statekit.compiler.record_values import Record
from statekit.compiler.value_types import BaseType

Payload = dict[str, Any]

Literals = tuple[tuple[int, ...], tuple[float, ...], tuple[str, ...]]
"""The integers, numbers and strings a chart's guards and conditions mention."""


def event_payloads(
    ir: CompiledChart, event: str, context: Mapping[str, Any], literals: Literals
) -> Iterator[Payload]:
    """The payloads tried for `event` in `context`, first to last: every combination of
    its fields' `candidates` (a timer's event: only the empty payload)."""
    declared = ir.events.get(event)
    if declared is None:  # a timer's event: delivered by name, without a payload
        yield {}
        return
    names = [f.name for f in declared.fields]
    choices = [candidates(f, context, literals) for f in declared.fields]
    for values in itertools.product(*choices):
        yield dict(zip(names, values, strict=True))


def chart_literals(ir: CompiledChart) -> Literals:
    """The integers, numbers and strings the chart's guards and conditions mention."""
    ints: set[int] = set()
    floats: set[float] = set()
    strings: set[str] = set()
    affixes: dict[str, list[str]] = {"starts_with": [], "ends_with": []}
    for transition in ir.transitions:
        for check in transition.guards:
            for node in iter_nodes(check.expression.tree):
                match node:
                    case Call(
                        func="starts_with" | "ends_with" as f, args=(_, Literal(value=str(a)))
                    ):
                        affixes[f].append(a)
                if isinstance(node, Literal):
                    value = node.value
                    if isinstance(value, bool) or value is None:
                        continue
                    if isinstance(value, int):
                        ints.add(value)
                    elif isinstance(value, float):
                        floats.add(value)
                    else:
                        strings.add(value)
    starts, ends = affixes["starts_with"][:8], affixes["ends_with"][:8]
    strings.update(start + end for start in starts for end in ends)
    return tuple(sorted(ints)), tuple(sorted(floats)), tuple(sorted(strings))


def candidates(
    decl: FieldDecl,
    context: Mapping[str, Any],
    literals: Literals,
) -> list[Any]:
    """The values tried for a payload field, first to last (see the module docstring)."""
    kind = decl.type
    ints, floats, strings = literals
    values: list[Any]
    if kind.enum is not None:
        values = list(kind.enum)
    elif kind.base is BaseType.BOOLEAN:
        values = [True, False]
    elif kind.base in (BaseType.INTEGER, BaseType.NUMBER):
        known = sorted({v for v in context.values() if type(v) is int} | set(ints))
        values = [1, 0, *(v + d for v in known for d in (0, 1, -1)), -1, 1_000_000]
        if kind.base is BaseType.NUMBER:
            values += [*floats, *(f + 0.5 for f in floats), *(f - 0.5 for f in floats)]
    elif kind.base is BaseType.STRING:
        texts = sorted({v for v in context.values() if type(v) is str} | set(strings))
        # strings of the lengths `len(...)` may be compared with
        lengths = sorted({n + d for n in ints for d in (0, 1, -1) if 0 <= n + d <= 64})
        values = ["a", "", *texts, *("a" * n for n in lengths)]
    elif kind.items is not None:  # empty, or one element (the contents are untracked)
        element = replace(decl, type=kind.items, has_default=False)
        values = [[], *([x] for x in candidates(element, context, literals)[:1])]
    elif kind.fields is not None:  # one record of its fields' first candidates (untracked)
        firsts = [
            candidates(replace(decl, type=t, has_default=False), context, literals)[:1]
            for _, t in kind.fields
        ]
        values = (
            [Record({n: v[0] for (n, _), v in zip(kind.fields, firsts, strict=True)})]
            if all(firsts)
            else []
        )
    else:
        values = []
    if kind.nullable or kind.base is BaseType.NULL:
        values.append(None)
    if decl.has_default:
        values.insert(0, decl.default)
    unique: dict[tuple[type, Any], Any] = {}
    for value in values:
        if kind.accepts(value):
            # a list or a record is unhashable
            key = repr(value) if isinstance(value, list | dict) else value
            unique.setdefault((type(value), key), value)
    return list(unique.values())
