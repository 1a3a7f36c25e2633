"""Both orders of a pair of events from one explored node, and how much they differ.

Each order is run with the explorer's own macrosteps (`Node.outcomes`): an
order's branches are every branch of its first event, each followed by every
branch of its second event from where the first one led. The exploration takes
data guards both ways, so a branch of "A then B" and a branch of "B then A"
can only both be what happens for one payload and one context when their
data-guard assumptions agree: two assumptions about the same condition,
reading the same payload and only context fields neither order writes (and
no `active()`, whose value depends on where it is evaluated), give the same
truth in both orders. Every other pair of branches is compared: a pair of
events *differs* at a node when some such pair of branches ends at another
node (configuration or history), with another context, timers or messages
(`statekit.analysis.race_effects`), or answers an event differently, and the
most important of these differences is the occurrence's
(`statekit.analysis.race_records.RANKS`).

Timer events race with declared events where they are armed; a timer is
always the second of its pair. When the event delivered first leaves the
timer's state, the timer delivered second is answered as the engine answers
it, REJECTED STALE_TIMER, changing nothing; a timer's own answer is no
difference (a cancelled timer loses nothing).
"""

from __future__ import annotations

from collections.abc import Set as AbstractSet
from typing import NamedTuple

from statekit.analysis.exploration import Exploration, Node
from statekit.analysis.guards import EFFECT_CONDITION, Assumption
from statekit.analysis.macrostep_branches import NOWHERE, MacrostepBranch
from statekit.analysis.race_effects import NOTHING, EffectSummary, same_end_data, summarize
from statekit.analysis.race_records import (
    ANSWERS,
    APPLIED,
    CONFIGURATION,
    HISTORY,
    RANKS,
    Classification,
    OrderOutcome,
)
from statekit.compiler.expressions.tree import (
    Active,
    ContextRef,
    EventMeta,
    EventRef,
    iter_nodes,
)
from statekit.compiler.ir import GuardCheck, TransitionKind
from statekit.engine.result import STALE_TIMER, Status
from statekit.engine.tables import Configuration

Answer = tuple[str, str | None]
"""An event's answer as (status, reason), the form the search compares."""
Branch = tuple[MacrostepBranch, Answer, int]
"""One branch of an event from a node: the outcome, its answer, the node it leads to
(negative: not explored)."""


class Combination(NamedTuple):
    """One branch of an order: the first and second event's answers, the node it ends
    at, the two outcomes and what each ran."""

    first_answer: Answer
    second_answer: Answer
    end: int
    first: MacrostepBranch
    second: MacrostepBranch
    first_effects: EffectSummary
    second_effects: EffectSummary


_Fact = tuple[int, bool, frozenset[str], str | None, bool]
"""An assumption as the pruning reads it: (a number for the condition's tree, its
outcome, the context fields it reads, the event that triggers its transition (None:
eventless), whether it reads the payload)."""


class RaceSearch:
    """Both orders of pairs of events over one exploration's own branches (cached per node).

    The comparison works on plain tuples; `OrderOutcome` records are made only for the
    occurrences shown (`orders`)."""

    def __init__(self, exploration: Exploration) -> None:
        self.exploration = exploration
        self.chart = exploration.chart
        self.grouped: list[dict[str, list[Branch]] | None] = [None] * len(exploration.nodes)
        self.leaves: dict[Configuration, tuple[str, ...]] = {}
        self.classifications: dict[tuple[str, Answer], Classification] = {}
        self.paths: dict[int, tuple[str, ...]] = {}
        self.timers = frozenset(exploration.timer_events)
        self.summaries: dict[tuple[str, object], EffectSummary] = {}
        self.facts: dict[tuple[int, int, bool], _Fact | None] = {}
        self.checks: dict[int, tuple[int, frozenset[str], bool, bool]] = {}
        self.tokens: dict[object, int] = {}

    def by_event(self, node: Node) -> dict[str, list[Branch]]:
        """Event → its branches from `node` (cached per node)."""
        found = self.grouped[node.id]
        if found is None:
            found = {}
            for outcome in node.outcomes or ():
                if outcome.event is not None:
                    branch: Branch
                    if outcome.fired:
                        branch = (outcome, (APPLIED, None), outcome.target)
                    else:
                        branch = (outcome, (outcome.status.value, outcome.reason), node.id)
                    found.setdefault(outcome.event, []).append(branch)
            self.grouped[node.id] = found
        return found

    def fired(self, node: Node) -> frozenset[str]:
        """The events with a branch that fires from `node`."""
        return frozenset(
            event
            for event, branches in self.by_event(node).items()
            if any(answer[0] == APPLIED for _o, answer, _t in branches)
        )

    def configuration(self, config: Configuration) -> tuple[str, ...]:
        """The active atomic states of `config`, as dotted paths (cached)."""
        found = self.leaves.get(config)
        if found is None:
            states = self.chart.states
            found = self.leaves[config] = tuple(states[s].path for s in config.atomic)
        return found

    def combinations(self, node: Node, first: str, second: str) -> list[Combination]:
        """Every branch of `first` then `second` from `node` (branches that leave the
        explored part are skipped)."""
        nodes = self.exploration.nodes
        out: list[Combination] = []
        for a, answer_a, middle in self.by_event(node).get(first, ()):
            if middle < 0:
                continue
            branches = self.by_event(nodes[middle]).get(second)
            if branches is None and second in self.timers:
                branches = [self.stale(second, middle)]  # the first event cancelled it
            effects_a = self.summary(a)
            for b, answer_b, end in branches or ():
                if end >= 0:
                    out.append(
                        Combination(answer_a, answer_b, end, a, b, effects_a, self.summary(b))
                    )
        return out

    def stale(self, timer: str, node: int) -> Branch:
        """A timer event delivered where it is no longer armed: the engine answers
        REJECTED STALE_TIMER and changes nothing."""
        outcome = MacrostepBranch(
            event=timer,
            assumptions=(),
            target=NOWHERE,
            steps=(),
            status=Status.REJECTED,
            reason=STALE_TIMER,
            basis="stale",
        )
        return (outcome, (outcome.status.value, STALE_TIMER), node)

    def summary(self, outcome: MacrostepBranch) -> EffectSummary:
        """What the branch ran (nothing unless it fired; cached by its shared steps)."""
        if not outcome.fired or outcome.event is None:
            return NOTHING
        key = (outcome.event, outcome.steps)
        found = self.summaries.get(key)
        if found is None:
            effects = [e for step in outcome.steps for e in step.effects]
            found = self.summaries[key] = summarize(outcome.event, effects)
        return found

    def compare(
        self, node: Node, a: str, b: str
    ) -> tuple[str | None, list[Combination], list[Combination], tuple[int, int]] | None:
        """How the two orders of (a, b) differ at `node`: the difference (None: not at
        all), both orders' branches and the indexes of the two shown (the first pair of
        branches with the greatest difference); None when an order has no branch."""
        ab = self.combinations(node, a, b)
        ba = self.combinations(node, b, a)
        if not ab or not ba:
            return None
        timer = b in self.timers  # a timer's own answer is no difference
        active = node.config.paths
        best: str | None = None
        shown = (0, 0)
        for i, x in enumerate(ab):
            for j, y in enumerate(ba):
                difference = self.difference(x, y, timer, active)
                if difference is None or (best is not None and RANKS[difference] <= RANKS[best]):
                    continue
                if not self.exclusive(x, y):
                    best, shown = difference, (i, j)
                    if RANKS[best] == RANKS[CONFIGURATION]:
                        return best, ab, ba, shown
        return best, ab, ba, shown

    def difference(
        self, x: Combination, y: Combination, timer: bool, active: AbstractSet[str]
    ) -> str | None:
        """What branch `x` of A then B and branch `y` of B then A, from a configuration
        whose active states have the paths `active`, differ in, if anything."""
        if x.end != y.end:
            of = self.exploration
            if of.config_index[x.end] != of.config_index[y.end]:
                return CONFIGURATION
            if of.history_index[x.end] != of.history_index[y.end]:
                return HISTORY
            return "context"  # a node's identity may include the context values it tracks
        data = same_end_data(
            (x.first_effects, x.second_effects), (y.first_effects, y.second_effects), active
        )
        if data is not None:
            return data
        same_a = x.first_answer == y.second_answer
        if not same_a or (not timer and x.second_answer != y.first_answer):
            return ANSWERS
        return None

    def exclusive(self, x: Combination, y: Combination) -> bool:
        """Whether no payload and context let `x` and `y` both happen: they assume
        opposite outcomes of one condition that reads the same data in both (see
        `facts_of`), or one event stored different values of a tracked context field
        from its own payload (`chose_apart`)."""
        if self.chose_apart(x.first, x.first_effects, y.second) or self.chose_apart(
            x.second, x.second_effects, y.first
        ):
            return True
        if not (
            x.first.assumptions
            or x.second.assumptions
            or y.first.assumptions
            or y.second.assumptions
        ):
            return False
        parts = (x.first_effects, x.second_effects, y.first_effects, y.second_effects)
        raised = frozenset().union(*(p.raises for p in parts))
        seen: dict[tuple[int, str | None], bool] = {}
        for order in (x, y):
            before: frozenset[str] = frozenset()
            for branch, effects in (
                (order.first, order.first_effects),
                (order.second, order.second_effects),
            ):
                event = branch.event
                after = before | effects.writes
                for fact in self.facts_of(branch.assumptions):
                    if fact is None:
                        continue
                    key, holds, fields, trigger, reads_event = fact
                    first = trigger == event and event not in raised
                    if fields & (before if first else after):
                        continue  # it may read a value the pair wrote before it
                    if not first and reads_event:
                        continue  # the payload of an event raised inside the macrostep
                    if seen.setdefault((key, trigger), holds) is not holds:
                        return True
                before = after
        return False

    def chose_apart(
        self, one: MacrostepBranch, effects: EffectSummary, other: MacrostepBranch
    ) -> bool:
        """Whether two branches of one event (one in each order) fired the same
        transitions and stored different values in a tracked context field that those
        transitions assign only from the event's own payload (`f: event.x`): the
        exploration splits such a run per value of the payload field, and no one
        payload gives both branches."""
        of = self.exploration
        if not of.tracked or one.target < 0 or other.target < 0:
            return False
        if one.transitions() != other.transitions():
            return False
        assigned: list[tuple[str, object]] = []
        for key in effects.assigns:  # ("assign", ((field, tree), ...), payload tag)
            pairs = key[1]
            assert isinstance(pairs, tuple)
            assigned.extend(pairs)
        from_payload = {f for f, tree in assigned if isinstance(tree, EventRef)}
        otherwise = {f for f, tree in assigned if not isinstance(tree, EventRef)}
        fields = (from_payload - otherwise) & frozenset(of.tracked)
        if not fields:
            return False
        mine, theirs = of.nodes[one.target].tracked, of.nodes[other.target].tracked
        return any(
            (type(mine.get(f)), mine.get(f)) != (type(theirs.get(f)), theirs.get(f)) for f in fields
        )

    def facts_of(self, assumptions: tuple[Assumption, ...]) -> list[_Fact | None]:
        """The assumptions as facts: the condition, its outcome, the context fields it
        reads and the event that triggers its transition (None for an eventless one).
        A condition of a transition triggered by the delivered event is evaluated in its
        first microstep, before any of its effects, over its payload; one that tests
        `active()` is None (its value depends on where it is evaluated)."""
        out: list[_Fact | None] = []
        for assumption in assumptions:
            key = (id(assumption.check), assumption.transition, assumption.holds)
            if key not in self.facts:
                self.facts[key] = self.fact(assumption)
            out.append(self.facts[key])
        return out

    def fact(self, assumption: Assumption) -> _Fact | None:
        """One assumption as a fact (see `facts_of`)."""
        tree, fields, tests_active, reads_event = self.check_info(assumption.check)
        if tests_active or assumption.transition == EFFECT_CONDITION:
            return None  # an `if` effect's condition reads the data its earlier effects left
        transition = self.chart.transitions[assumption.transition]
        trigger = transition.event if transition.kind is TransitionKind.EVENT else None
        return (tree, assumption.holds, fields, trigger, reads_event)

    def check_info(self, check: GuardCheck) -> tuple[int, frozenset[str], bool, bool]:
        """(a number for the condition's tree (equal trees, one number), the context
        fields it reads, whether it tests `active()`, whether it reads the payload),
        cached per condition of the chart."""
        found = self.checks.get(id(check))
        if found is None:
            tree = check.expression.tree
            nodes = list(iter_nodes(tree))
            fields = frozenset(n.field for n in nodes if isinstance(n, ContextRef))
            tests_active = any(isinstance(n, Active) for n in nodes)
            reads_event = any(isinstance(n, EventRef | EventMeta) for n in nodes)
            token = self.tokens.setdefault(tree, len(self.tokens))  # equal trees, one token
            found = self.checks[id(check)] = (token, fields, tests_active, reads_event)
        return found

    def orders(
        self, pair: tuple[str, str], ab: list[Combination], ba: list[Combination]
    ) -> tuple[tuple[OrderOutcome, ...], tuple[OrderOutcome, ...]]:
        """Every branch of each order as `OrderOutcome` records (A then B first)."""
        a, b = pair
        return (
            tuple(self.outcome((a, b), c) for c in ab),
            tuple(self.outcome((b, a), c) for c in ba),
        )

    def path(self, node_id: int) -> tuple[str, ...]:
        """The events of the shortest known path to `node_id` (cached: every race in one
        configuration shares it)."""
        nodes, paths = self.exploration.nodes, self.paths
        chain: list[int] = []
        current = node_id
        while current >= 0 and current not in paths:
            chain.append(current)
            current = nodes[current].parent
        path = paths[current] if current >= 0 else ()
        for step in reversed(chain):
            event = nodes[step].via.event
            path = path if event is None else (*path, event)
            paths[step] = path
        return paths[node_id]

    def outcome(self, order: tuple[str, str], combination: Combination) -> OrderOutcome:
        end = self.exploration.nodes[combination.end].config
        return OrderOutcome(
            order=order,
            first=self.classification(order[0], combination.first_answer),
            second=self.classification(order[1], combination.second_answer),
            configuration=self.configuration(end),
            assumptions=combination.first.assumptions + combination.second.assumptions,
            transitions=(combination.first.transitions(), combination.second.transitions()),
        )

    def classification(self, event: str, answer: Answer) -> Classification:
        key = (event, answer)
        found = self.classifications.get(key)
        if found is None:
            found = self.classifications[key] = Classification(event, answer[0], answer[1])
        return found
