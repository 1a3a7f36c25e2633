"""The context fields the exploration tracks across events, and how their values change.

The explorer's abstract state is a configuration, history values and the
values of the *tracked* context fields; every other field stays abstract. A
field is tracked when its value is exact from the chart alone:

- its type has a small finite domain: `boolean`, an `enum`, or a nullable
  version of either (null is then one more value);
- a guard or `if` condition reads it (tracking a field nothing decides on
  would only multiply the abstract states), or a tracked field is assigned
  from it;
- no invocation's `finalize` assigns it (the exploration runs no child);
- every `assign` of it in the chart (transition effects, `entry`, `exit`) is
  a literal of its domain, another tracked field whose domain is within its
  own, a table read keyed by a tracked field or a literal whose every value is
  within its domain (`tables.tier[ctx.priority]`), or a payload field
  (`event.<name>`) whose type's domain is within its own. A payload
  assignment splits the run per value of the payload field, and each value
  joins the run's feasibility question (`event.at_period_end
  == true` holding fixes the stored value to true).

Its value at the start is *any* value of its domain, kept until the first
`assign`: an instance may be created with a context that overrides the declared
default (`Chart.start(context=...)`, `Runner.create(instance, context)`), so
the default is one start among others. The initial macrostep is explored once
per combination of start values (`TrackedFields.starts`, the declared defaults
first); a field no `assign` changes then keeps its start value for the whole
run, and every guard that reads it agrees with every other.

Bound: the tracked fields are chosen in declaration order while the product
of their domains' sizes stays within `MAX_VALUATIONS`; a qualifying field
past the bound stays abstract (today's behaviour for it: both ways), and the
exploration notes it (`TrackedFields.notes`). An abstract field is never a
wrong answer, only a less precise one.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Iterator, Mapping
from typing import Any

from statekit.compiler.effect_walk import effect_conditions, leaf_effects
from statekit.compiler.expressions.closures import compile_tree
from statekit.compiler.expressions.evaluator import Evaluator
from statekit.compiler.expressions.tree import (
    Compare,
    ContextRef,
    EventRef,
    ExprNode,
    IsNone,
    Literal,
    TableRead,
    iter_nodes,
)
from statekit.compiler.ir import Assign, CompiledChart, Effect
from statekit.compiler.value_types import BaseType, ValueType
from statekit.engine.abstract import AbstractDomain

MAX_VALUATIONS = 64
"""The most combinations of tracked values one configuration may be split into."""

Valuation = tuple[object, ...]
"""The values of the tracked fields, in `TrackedFields.names` order."""


def finite_domain(kind: ValueType) -> tuple[object, ...] | None:
    """The values of a finite-domain type (booleans, enums, and null when nullable), or
    None for any other type."""
    values: tuple[object, ...]
    if kind.enum is not None:
        values = tuple(kind.enum)
    elif kind.base is BaseType.BOOLEAN:
        values = (False, True)
    else:
        return None
    return (*values, None) if kind.nullable else values


def _within(inner: tuple[object, ...], outer: tuple[object, ...]) -> bool:
    """Whether every value of `inner` is one of `outer` (by type and value: True is not 1)."""
    keys = {(type(v), v) for v in outer}
    return all((type(v), v) in keys for v in inner)


def _chart_effects(chart: CompiledChart) -> Iterator[Effect]:
    """Every effect of the chart, each branch of an `if` included."""
    for transition in chart.transitions:
        yield from leaf_effects(transition.effects)
    for state in chart.states:
        yield from leaf_effects(state.entry + state.exit)


def _finalized(chart: CompiledChart) -> set[str]:
    """The context fields an invocation's `finalize` assigns: the exploration runs no
    child, so what a finalize makes of a child's event is not known here."""
    return {
        name
        for invocation in chart.invocations
        for effect in leaf_effects(invocation.finalize)
        if isinstance(effect, Assign)
        for name, _value in effect.assignments
    }


def _guard_reads(chart: CompiledChart) -> set[str]:
    """The context fields a guard or an `if` effect's condition reads."""
    out: set[str] = set()
    checks = [check for transition in chart.transitions for check in transition.guards]
    for transition in chart.transitions:
        checks.extend(effect_conditions(transition.effects))
    for state in chart.states:
        checks.extend(effect_conditions(state.entry + state.exit))
    for check in checks:
        out.update(n.field for n in iter_nodes(check.expression.tree) if isinstance(n, ContextRef))
    return out


class TrackedFields:
    """Which context fields one chart's exploration tracks (see the module docstring),
    their start values, and the facts a payload split adds to a run's question."""

    def __init__(self, chart: CompiledChart, max_valuations: int = MAX_VALUATIONS) -> None:
        self.chart = chart
        domains = {
            name: d for name, f in chart.context.items() if (d := finite_domain(f.type)) is not None
        }
        sources: dict[str, list[ExprNode]] = {name: [] for name in chart.context}
        for effect in _chart_effects(chart):
            if isinstance(effect, Assign):
                for name, expression in effect.assignments:
                    sources[name].append(expression.tree)
        read = _guard_reads(chart)
        # Read by a guard, or (transitively) the source of a field that is.
        wanted = set(read)
        grown = True
        while grown:
            grown = False
            for name in list(wanted):
                for tree in sources.get(name, ()):
                    source = tree.key if isinstance(tree, TableRead) else tree
                    if isinstance(source, ContextRef) and source.field not in wanted:
                        wanted.add(source.field)
                        grown = True
        finalized = _finalized(chart)  # assigned where the exploration does not run: opaque
        candidates = [n for n in chart.context if n in domains and n in wanted - finalized]
        qualifying = self._fixed_point(set(candidates), domains, sources)
        chosen: list[str] = []
        size = 1
        self.notes: list[str] = []
        """Why a qualifying field stays abstract (the bound), for the exploration's report."""
        for name in [n for n in candidates if n in qualifying]:
            if size * len(domains[name]) > max_valuations:
                self.notes.append(
                    f"ctx.{name} is not tracked: tracking it too would split a configuration "
                    f"into more than {max_valuations} combinations of context values"
                )
                continue
            chosen.append(name)
            size *= len(domains[name])
        kept = self._fixed_point(set(chosen), domains, sources)
        self.names: tuple[str, ...] = tuple(n for n in chosen if n in kept)
        """The tracked fields, in declaration order."""
        self.domains: dict[str, tuple[object, ...]] = {n: domains[n] for n in self.names}
        self.default: Valuation = tuple(chart.context[n].default for n in self.names)
        """The declared defaults of the tracked fields."""
        self.position = {name: i for i, name in enumerate(self.names)}
        self.valuations = math.prod(len(d) for d in self.domains.values())
        self._facts: dict[tuple[str, str, object], tuple[ExprNode, Evaluator, int]] = {}

    @staticmethod
    def _fixed_point(
        fields: set[str],
        domains: Mapping[str, tuple[object, ...]],
        sources: Mapping[str, list[ExprNode]],
    ) -> set[str]:
        """The largest subset of `fields` whose every assignment is trackable given it."""
        while True:
            drop = {
                name
                for name in fields
                if not all(
                    _trackable(tree, domains[name], fields, domains) for tree in sources[name]
                )
            }
            if not drop:
                return fields
            fields = fields - drop

    def __bool__(self) -> bool:
        return bool(self.names)

    def starts(self) -> list[Valuation]:
        """Every combination of start values: the declared defaults first, then the rest
        in the order of the domains."""
        every = itertools.product(*(self.domains[n] for n in self.names))
        keyed = [tuple((type(v), v) for v in self.default)]
        out = [self.default]
        for valuation in every:
            key = tuple((type(v), v) for v in valuation)
            if key not in keyed:
                keyed.append(key)
                out.append(valuation)
        return out

    def context(self, base: Mapping[str, Any], valuation: Valuation) -> dict[str, Any]:
        """`base` (the abstract context) with the tracked fields set to `valuation`."""
        out = dict(base)
        out.update(zip(self.names, valuation, strict=True))
        return out

    def describe(self, valuation: Valuation, only: tuple[str, ...] | None = None) -> str:
        """`ctx.cancel_at_period_end = true, ctx.plan = 'gold'` (the fields of `only`, or all)."""
        parts = []
        for name, value in zip(self.names, valuation, strict=True):
            if only is None or name in only:
                parts.append(f"ctx.{name} = {shown_value(value)}")
        return ", ".join(parts)

    def choice_fact(self, node: EventRef, value: object) -> tuple[ExprNode, Evaluator, int]:
        """The condition `event.<field> == value` (`is None` for null) as a tree, its
        evaluator and a token of its own (negative: never a guard's)."""
        key = (node.field, type(value).__name__, value)
        found = self._facts.get(key)
        if found is None:
            tree: ExprNode
            if value is None:
                tree = IsNone(operand=node, negated=False)
            else:
                literal = Literal(value=value, type=ValueType(node.type.base))  # type: ignore[arg-type]
                tree = Compare(left=node, ops=("==",), comparators=(literal,))
            found = self._facts[key] = (tree, compile_tree(tree), -1 - len(self._facts))
        return found


def _trackable(
    tree: ExprNode,
    domain: tuple[object, ...],
    tracked: set[str],
    domains: Mapping[str, tuple[object, ...]],
) -> bool:
    if isinstance(tree, Literal):
        return _within((tree.value,), domain)
    if isinstance(tree, ContextRef):
        return tree.field in tracked and _within(domains[tree.field], domain)
    if isinstance(tree, EventRef):
        inner = finite_domain(tree.type)
        return inner is not None and _within(inner, domain)
    if isinstance(tree, TableRead) and isinstance(tree.key, ContextRef | Literal):
        # a table read keyed by a tracked field (or a literal): exact when every value the
        # table can give is within the domain
        table = tree.lookup
        values = (*table.entries.values(), *((table.default,) if table.has_default else ()))
        key_known = isinstance(tree.key, Literal) or tree.key.field in tracked
        return key_known and _within(values, domain)
    return False


def shown_value(value: object) -> str:
    """A tracked value as the chart's YAML writes it: `true`, `null`, `'gold'`, `3`."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    return repr(value) if isinstance(value, str) else str(value)


class PayloadChooser:
    """What a payload split asks of the run's guard oracle: a value of `node` (an
    `event.<field>` of a finite domain) for the payload object `payload`."""

    def choose_value(
        self, node: EventRef, payload: object, options: tuple[object, ...]
    ) -> object:  # pragma: no cover - the protocol
        raise NotImplementedError


class TrackingDomain(AbstractDomain):
    """The analysis's value domain with tracked fields exact: an `assign` of a tracked
    field stores its literal, the tracked field's current value, or a payload value the
    run's oracle chooses (a split); every other assignment a new `AbstractValue`. One
    per replay of a macrostep; `assigned` records the last value of each tracked field."""

    __slots__ = ("chooser", "fields", "last")

    def __init__(self, fields: TrackedFields, chooser: PayloadChooser) -> None:
        self.fields = fields
        self.chooser = chooser
        self.last: dict[str, object] = {}

    def assigned(  # type: ignore[override]
        self,
        field: str,
        expression: Any,
        context: Mapping[str, Any],
        payload: Mapping[str, Any],
        active: frozenset[int],
    ) -> Any:
        """The tracked value, or a new `AbstractValue` for an abstract field."""
        fields = self.fields
        if field not in fields.position:
            return AbstractDomain.assigned(field, expression, context, payload, active)
        tree = expression.tree
        value: object
        if isinstance(tree, Literal):
            value = tree.value
        elif isinstance(tree, ContextRef):
            value = context[tree.field]
        elif isinstance(tree, TableRead):  # keyed by a tracked field or a literal
            value = expression.evaluate(context, payload, active)
        else:
            assert isinstance(tree, EventRef)  # the only other trackable source
            options = finite_domain(tree.type)
            assert options is not None
            value = self.chooser.choose_value(tree, payload, options)
        self.last[field] = value
        return value

    def end(self, start: Valuation) -> Valuation:
        """The valuation after the run, from `start`."""
        if not self.last:
            return start
        position = self.fields.position
        out = list(start)
        for name, value in self.last.items():
            out[position[name]] = value
        return tuple(out)
