"""Data-guard choices for the replays of a macrostep, as the explorer enumerates them.

The explorer replays a macrostep depth first, once per sequence of choices
(`enumerate_runs`): `ScriptedGuardOracle` answers each guard on unknown data
from the script of that replay (extending it with True), records the
`Assumption` it made, and stops choosing past `MAX_CHOICES` (every further
data guard then fails); at most `MAX_RUNS` replays are made. `stable_facts`
seeds every replay with what a stable start configuration implies.

A guard that reads only tracked context fields (`statekit.analysis.tracked_context`)
and no payload is no choice: the oracle evaluates it on their values. A payload
split (an `assign` of a tracked field from `event.<field>`) is a chain of choices,
`event.<field> == v` for each value but the last, each joining the run's
feasibility question like a guard's outcome (and, not being a guard, no
`Assumption`).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from statekit.analysis.feasibility import Feasibility
from statekit.analysis.guard_facts import GuardFact, Verdict
from statekit.analysis.guards import EFFECT_CONDITION, UNKNOWN, Assumption, ThreeValued
from statekit.analysis.tracked_context import PayloadChooser, TrackedFields, Valuation
from statekit.compiler.expressions.tree import EventRef
from statekit.compiler.ir import CompiledChart, GuardCheck, Transition
from statekit.engine.abstract import AbstractMacrostep
from statekit.engine.tables import Configuration

MAX_CHOICES = 20
"""Data-guard decisions one macrostep may need before its enumeration stops."""
MAX_RUNS = 1024
"""Distinct guard-outcome combinations enumerated per abstract state and event."""

Leaf = tuple[tuple[Assumption, ...], AbstractMacrostep, Valuation]
"""One run of a macrostep: the assumptions its choices made, what happened, and the
tracked context values it ends with."""


class ScriptedGuardOracle(PayloadChooser):
    """Answers guards for one replay of a macrostep: exactly when the three-valued
    value is known, else from `script` (extending it with True).

    A guard asked again with the same data gets the same answer without a new
    choice: the memo key holds the guard's tree, its relevant active states
    and the current values of the context fields it reads (an abstract
    `assign` stores a new `AbstractValue`, so a changed field changes the key);
    guards that read the event are memoised per payload object. `known`
    seeds the memo with what the start configuration's stability implies.
    With `tracked`, a guard reading only tracked fields is evaluated on their
    values, and `choose_value` makes payload splits.
    """

    __slots__ = (
        "assumptions",
        "chosen",
        "cut",
        "event_memo",
        "facts",
        "memo",
        "payload",
        "pos",
        "script",
        "three",
        "tracked",
    )

    def __init__(
        self,
        script: list[bool],
        three: ThreeValued,
        known: dict[object, bool],
        tracked: TrackedFields | None = None,
    ) -> None:
        self.script = script
        self.three = three
        self.tracked = tracked
        self.chosen: dict[tuple[int, str], object] = {}
        self.pos = 0
        self.cut = False
        self.assumptions: list[Assumption] = []
        self.facts: list[GuardFact] = []
        """Each assumption with the data it read (`statekit.analysis.feasibility`)."""
        self.payload: object = None
        self.memo = dict(known)
        self.event_memo: dict[object, bool] = {}

    def __call__(
        self,
        check: GuardCheck,
        transition: Transition | None,
        context: Mapping[str, Any],
        payload: Mapping[str, Any],
        active: frozenset[int],
    ) -> bool:
        value, key, info = self.three.lookup(check.expression, active)
        if value is not UNKNOWN:
            return value
        tracked = self.tracked
        if (
            not info.reads_payload
            and not info.reads_clock
            and (
                all(f in tracked.position for f in info.fields)
                if tracked is not None
                else not info.fields
            )
        ):
            try:  # every value it reads is known: decided exactly, no choice
                return bool(check.expression.evaluate(context, payload, active))
            except Exception:  # a failing evaluation is the engine's to classify: a choice
                pass
        values = tuple([context[f] for f in info.fields])
        data_key = (key, values)
        if info.reads_event:
            if payload is not self.payload:
                self.payload = payload
                self.event_memo = {}
            memo = self.event_memo
        else:
            memo = self.memo
        found = memo.get(data_key)
        if found is not None:
            return found
        answer = self._decide()
        memo[data_key] = answer
        where = EFFECT_CONDITION if transition is None else transition.id
        self.assumptions.append(Assumption(check, where, answer))
        reads = tuple(zip(info.fields, values, strict=True))
        payload_read = payload if info.reads_event else None
        tree = check.expression.tree
        evaluate = check.expression.evaluate
        fact = GuardFact(tree, evaluate, info.token, key[1], reads, payload_read, answer)
        self.facts.append(fact)
        return answer

    def _decide(self) -> bool:
        """The next choice of the script (extending it with True; False past the bound)."""
        pos = self.pos
        if pos < len(self.script):
            answer = self.script[pos]
            self.pos = pos + 1
        elif pos >= MAX_CHOICES:  # past the bound every further decision is "fails"
            answer = False
            self.cut = True
        else:
            answer = True
            self.script.append(True)
            self.pos = pos + 1
        return answer

    def choose_value(self, node: EventRef, payload: object, options: tuple[object, ...]) -> object:
        """A value of payload field `node` for the payload object `payload`: `options` in
        order, one choice per value but the last; the same answer again within the run."""
        key = (id(payload), node.field)  # the payload lives as long as the run
        memo = self.chosen
        if key in memo:
            return memo[key]
        tracked = self.tracked
        assert tracked is not None
        chosen = options[-1]
        for option in options[:-1]:
            holds = self._decide()
            tree, evaluate, token = tracked.choice_fact(node, option)
            self.facts.append(GuardFact(tree, evaluate, token, frozenset(), (), payload, holds))
            if holds:
                chosen = option
                break
        memo[key] = chosen
        return chosen


def stable_facts(
    chart: CompiledChart,
    three: ThreeValued,
    context: Mapping[str, Any],
    config: Configuration,
) -> dict[object, bool]:
    """What is known at the start of a macrostep from a stable configuration.

    A macrostep ends (short of a final chart) only when no eventless
    transition is enabled, so every `always` candidate of the configuration
    had a failing guard then; one whose guards all hold here but one on data
    had *that* guard false, and it stays false until an `assign` changes a
    field it reads (a guard that reads `now` is not kept: the clock moves). The facts are keyed
    as `ScriptedGuardOracle` keys its memo.
    """
    facts: dict[object, bool] = {}
    eventless, transitions = chart.eventless, chart.transitions
    for state in config.atomic:
        for tid in eventless[state]:
            unknown = []
            for check in transitions[tid].guards:
                value, key, info = three.lookup(check.expression, config.ids)
                if value is False:
                    break
                if value is UNKNOWN:
                    unknown.append((key, info))
            else:
                if len(unknown) == 1 and not unknown[0][1].reads_clock:
                    key, info = unknown[0]  # (the clock moves between macrosteps)
                    facts[(key, tuple([context[f] for f in info.fields]))] = False
    return facts


RunStart = Callable[[ScriptedGuardOracle], tuple[AbstractMacrostep, Valuation]]
"""Runs a macrostep once with an oracle: what happened and the tracked values it ends with."""


def enumerate_runs(
    start: RunStart,
    three: ThreeValued,
    known: dict[object, bool],
    event: str | None = None,
    feasibility: Feasibility | None = None,
    tracked: TrackedFields | None = None,
) -> tuple[list[Leaf], list[str]]:
    """Every distinct run of a macrostep over the choices of its data guards, and why
    the enumeration was cut short (empty when it was not). With `feasibility`, a run
    whose data-guard outcomes are proven unable to hold together (for a payload of
    `event` and any context) is left out. `tracked` as for `ScriptedGuardOracle`."""
    script: list[bool] = []
    runs: list[Leaf] = []
    infeasible: list[Leaf] = []
    limits: list[str] = []
    tried = 0
    while True:
        oracle = ScriptedGuardOracle(script, three, known, tracked)
        run, valuation = start(oracle)
        tried += 1
        if oracle.cut and not limits:
            limits.append(f"more than {MAX_CHOICES} data-guard decisions in one macrostep")
        leaf = (tuple(oracle.assumptions), run, valuation)
        if (
            feasibility is not None
            and oracle.facts
            and not oracle.cut
            and feasibility.check(event, oracle.facts) is Verdict.INFEASIBLE
        ):
            infeasible.append(leaf)
        else:
            runs.append(leaf)
        del script[oracle.pos :]
        while script and not script[-1]:
            script.pop()
        if not script:
            # Some values take some run; were every run refuted, the refutation would be
            # wrong, and the runs stay (never fewer outcomes than the chart has).
            return (runs or infeasible), limits
        if tried >= MAX_RUNS:
            limits.append(f"more than {MAX_RUNS} guard-outcome combinations in one macrostep")
            return (runs or infeasible), limits
        script[-1] = False
