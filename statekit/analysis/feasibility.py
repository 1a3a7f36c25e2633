"""Whether the data-guard outcomes one macrostep assumed can all hold together.

The explorer enumerates every combination of outcomes of the guards on
unknown data in a macrostep (`statekit.analysis.guard_choices`), each guard
on its own; `not event.at_period_end` failing and `event.at_period_end and
event.amount > 0` holding is one such combination, and no payload makes it
happen. `Feasibility.check` takes the outcomes of one run (each a
`GuardFact`: the guard's tree, the active states it tested, which value of
each context field and which payload it read, and the outcome) and answers
whether some payload and some context satisfy them all. The facts are split
into groups that share no unknown (each group holds or not on its own); a
group is first tried on a few candidate values, evaluated by the compiled
expressions themselves (most feasible groups end there, without a solver),
and only then put to an SMT solver, z3 (`statekit.analysis.smt`):

- a tracked context field (`statekit.analysis.tracked_context`) is its known
  value, a fact of the question; any other context field read before any
  `assign` of the macrostep is one unknown of its declared type, a value an
  abstract `assign` stored is another unknown; each payload field is one
  unknown of its declared type, shared by every guard of the run (and by the
  `event.<field> == v` choices of a payload split);
- integers (within the DSL's 64-bit range), numbers (as reals: comparisons
  are exact on floats), booleans, enums (their values), strings (with `len`,
  comparison, `starts_with` and `ends_with`), nullables (a null flag beside
  the value), `min`, `max`, `abs`, `+`, `-`, `*`, conditionals, `in`, and
  `active()` (decided on the configuration) are translated exactly; any other
  construct (`/`, `//`, `%`, `**`, number arithmetic, `matches()`, an operand
  that may be null where a value is needed) becomes a fresh boolean unknown
  where it is used as a condition, so the translation only ever allows more
  than the chart does.

The answer is `INFEASIBLE` only when the solver proves no values exist: such a
run is not explored. `FEASIBLE` and `UNDECIDED` (the solver gave up within
`statekit.analysis.smt.QUERY_BUDGET`) keep the run, so a run is dropped only on a proof, never
on a guess. Answers are cached by the run's guards, outcomes and the pattern of
values they read, which recurs in every configuration with the same runs.
"""

from __future__ import annotations

import itertools
import time
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from statekit.analysis.guard_facts import GuardFact, Verdict
from statekit.analysis.witness import candidates, chart_literals

if TYPE_CHECKING:
    from statekit.analysis.smt import SmtQuestions
from statekit.compiler.expressions.tree import (
    ContextRef,
    EventRef,
    InstanceId,
    Now,
    iter_nodes,
)
from statekit.compiler.ir import CompiledChart, FieldDecl

SAMPLES_PER_UNKNOWN = 12
"""Candidate values tried per unknown before a question goes to the solver."""
MAX_SAMPLES = 256
"""Combinations of candidate values tried per question before it goes to the solver."""


class Feasibility:
    """Answers `check` for one chart (see the module docstring); not thread-safe."""

    def __init__(self, chart: CompiledChart, tracked: frozenset[str] = frozenset()) -> None:
        self.chart = chart
        self.tracked = tracked
        """The tracked context fields: a read of one is its known value."""
        self.start = {name: f.default for name, f in chart.context.items()}
        self.cache: dict[tuple[object, ...], Verdict] = {}
        self.queries = 0
        self.undecided = 0
        self.seconds = 0.0
        self._literals = chart_literals(chart)
        self._smt: SmtQuestions | None = None

    def check(self, event: str | None, facts: Sequence[GuardFact]) -> Verdict:
        """Whether some payload of `event` and some context make every fact hold."""
        verdict = Verdict.FEASIBLE
        tracked = self.tracked
        for group in _independent(facts, tracked):
            key = _pattern(event, group, tracked)
            found = self.cache.get(key)
            if found is None:
                if self._sampled(event, group):
                    found = Verdict.FEASIBLE
                else:
                    found = self._solve(event, group)
                self.cache[key] = found
            if found is Verdict.INFEASIBLE:
                return found
            if found is Verdict.UNDECIDED:
                verdict = found
        return verdict

    def _sampled(self, event: str | None, facts: Sequence[GuardFact]) -> bool:
        """Whether a few candidate values (`statekit.analysis.witness.candidates`) make
        every fact hold, evaluated by the compiled expressions themselves: most feasible
        groups are settled so, and only the rest go to the solver."""
        declared = self.chart.events.get(event) if event is not None else None
        payload_fields = {f.name: f for f in declared.fields} if declared is not None else {}
        unknowns: dict[tuple[object, ...], FieldDecl] = {}
        known: dict[tuple[object, ...], object] = {}
        for fact in facts:
            reads = dict(fact.reads)
            for node in iter_nodes(fact.tree):
                if isinstance(node, ContextRef):
                    value = reads.get(node.field)
                    key: tuple[object, ...] = ("ctx", node.field, id(value))
                    if node.field in self.tracked:
                        known[key] = value
                    else:
                        unknowns.setdefault(key, self.chart.context[node.field])
                elif isinstance(node, EventRef) and node.field in payload_fields:
                    key = ("event", node.field, id(fact.payload))
                    unknowns.setdefault(key, payload_fields[node.field])
        keys = [*unknowns, *known]
        choices = [
            candidates(unknowns[k], {}, self._literals)[:SAMPLES_PER_UNKNOWN] for k in unknowns
        ]
        choices += [[value] for value in known.values()]
        for values in itertools.islice(itertools.product(*choices), MAX_SAMPLES):
            chosen = dict(zip(keys, values, strict=True))
            if all(_holds(fact, chosen) for fact in facts):
                return True
        return False

    def _solve(self, event: str | None, facts: Sequence[GuardFact]) -> Verdict:
        began = time.perf_counter()
        self.queries += 1
        if self._smt is None:
            from statekit.analysis.smt import SmtQuestions  # z3 loads only when asked

            self._smt = SmtQuestions(self.chart, self.tracked)
        try:
            verdict = self._smt.solve(event, facts)
        finally:
            self.seconds += time.perf_counter() - began
        if verdict is Verdict.UNDECIDED:
            self.undecided += 1
        return verdict


def _holds(fact: GuardFact, chosen: dict[tuple[object, ...], Any]) -> bool:
    """Whether `fact`'s expression gives its outcome on the chosen values."""
    reads = dict(fact.reads)
    context: dict[str, Any] = {}
    payload: dict[str, Any] = {}
    for (kind, name, version), value in chosen.items():
        if kind == "ctx" and version == id(reads.get(str(name))):
            context[str(name)] = value
        elif kind == "event" and version == id(fact.payload):
            payload[str(name)] = value
    try:
        return bool(fact.evaluate(context, payload, fact.active)) is fact.holds
    except Exception:  # a failing evaluation (a missing value, arithmetic) settles nothing
        return False


def _unknowns(fact: GuardFact, tracked: frozenset[str]) -> set[tuple[object, ...]]:
    """The unknowns a fact's tree reads (as `_Translation` names them; a tracked field's
    value is known, no unknown)."""
    reads = dict(fact.reads)
    out: set[tuple[object, ...]] = set()
    for node in iter_nodes(fact.tree):
        if isinstance(node, ContextRef) and node.field not in tracked:
            out.add(("ctx", node.field, id(reads.get(node.field))))
        elif isinstance(node, EventRef):
            out.add(("event", node.field, id(fact.payload)))
        elif isinstance(node, Now | InstanceId):
            out.add(("now", id(fact)))
    return out


def _independent(facts: Sequence[GuardFact], tracked: frozenset[str]) -> list[list[GuardFact]]:
    """The facts in groups that share no unknown: the conjunction holds for some values
    exactly when each group's does, and small groups recur across runs (cached)."""
    groups: list[tuple[set[tuple[object, ...]], list[GuardFact]]] = []
    for fact in facts:
        unknowns = _unknowns(fact, tracked)
        merged: tuple[set[tuple[object, ...]], list[GuardFact]] = (unknowns, [fact])
        rest = []
        for group in groups:
            if group[0] & merged[0]:
                merged = (group[0] | merged[0], group[1] + merged[1])
            else:
                rest.append(group)
        groups = [*rest, merged]
    return [sorted(members, key=facts.index) for _, members in groups]


def _pattern(
    event: str | None, facts: Sequence[GuardFact], tracked: frozenset[str]
) -> tuple[object, ...]:
    """A cache key: the facts with the value objects they read numbered by first
    appearance (runs from other configurations read other objects in the same pattern),
    and the values of tracked fields themselves."""
    numbers: dict[int, int] = {}
    out: list[object] = [event]
    for fact in facts:
        reads = tuple(
            (name, ("=", type(value).__name__, value))
            if name in tracked
            else (name, numbers.setdefault(id(value), len(numbers)))
            for name, value in fact.reads
        )
        payload = numbers.setdefault(id(fact.payload), len(numbers))
        out.append((fact.token, fact.active, reads, payload, fact.holds))
    return tuple(out)
