"""Null narrowing in an effect list: where a nullable context field is known not to be null.

Effects run in order and an effect that fails rejects the whole step, so after

```yaml
- assign: {total: 0}
- assign: {total: ctx.total + event.amount}
```

`ctx.total` cannot be null when the second `assign` runs. The rule, as type checkers
narrow (a conservative one, never wrong, sometimes too cautious):

- an `assign` of a value whose type is not nullable narrows the field for the effects
  after it in the same list (the later keys of the same `assign` too: they run in order),
  and in the `if`/`foreach` bodies among them; an `assign` of a value that may be null
  widens it back;
- an `if` condition that is `ctx.f is not None` (or an `and` of such tests with
  anything) narrows `ctx.f` in its own `then` branch; after the `if`,
  a field stays narrowed only when every way through it (each branch, and no branch
  taken when there is no `else`) leaves it narrowed;
- a `foreach` body starts with what holds before the loop, less what the body itself
  may widen (the narrowing must hold on every pass); after the loop, what held before
  it and after its body (it may run no time at all);
- within one expression, an `and` narrows its later operands by the `is not None`
  tests of the ones before it (`expressions.null_tests`); nothing else narrows:
  definitions (`define:`) see the declared types, and a field's narrowing ends with
  its effect list.

Only the compiler's view changes (the scope's context types): the engine evaluates
values as they are, and the analysis reads the declared types.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace
from types import MappingProxyType

from statekit.compiler.expressions.null_tests import not_null_tests
from statekit.compiler.expressions.scope import ExpressionScope
from statekit.compiler.expressions.tree import ExprNode
from statekit.compiler.value_types import ValueType


class Narrowing:
    """Scopes with some nullable context fields narrowed; one per chart's compile.

    A scope is made once per (scope, change) so that the expression memo, which knows
    scopes by identity, still finds a repeated expression in a narrowed scope.
    """

    def __init__(self, declared: Mapping[str, ValueType]) -> None:
        self.declared = declared
        self.nullable = tuple(name for name, t in declared.items() if t.nullable)
        self._made: dict[
            tuple[int, tuple[tuple[str, bool], ...]], tuple[object, ExpressionScope]
        ] = {}

    def narrowed(self, scope: ExpressionScope) -> frozenset[str]:
        """The declared-nullable fields `scope` knows are not null."""
        return frozenset(
            name
            for name in self.nullable
            if name in scope.context and not scope.context[name].nullable
        )

    def with_nullable(self, scope: ExpressionScope, flags: Mapping[str, bool]) -> ExpressionScope:
        """`scope` with each field of `flags` nullable or not as it says (declared-nullable
        fields only; the others are left as they are)."""
        changes = tuple(
            sorted(
                (name, flag)
                for name, flag in flags.items()
                if name in self.nullable
                and name in scope.context
                and scope.context[name].nullable is not flag
            )
        )
        if not changes:
            return scope
        key = (id(scope), changes)
        made = self._made.get(key)
        if made is not None and made[0] is scope:
            return made[1]
        context = dict(scope.context)
        for name, flag in changes:
            context[name] = replace(context[name], nullable=flag)
        result = replace(scope, context=MappingProxyType(context))
        self._made[key] = (scope, result)  # holds `scope`: its id is never reused
        return result

    def after_assign(self, scope: ExpressionScope, name: str, value: ValueType) -> ExpressionScope:
        """`scope` after `ctx.<name>` was given a value of type `value`."""
        return self.with_nullable(scope, {name: value.nullable})

    def joined(self, base: ExpressionScope, ends: Sequence[ExpressionScope]) -> ExpressionScope:
        """`base` (the scope before a branching effect) with what holds at the end of
        every one of `ends` (the ways through it): narrowed where all narrow."""
        held = frozenset.intersection(*(self.narrowed(end) for end in ends)) if ends else None
        if held is None:
            return base
        return self.with_nullable(base, {name: name not in held for name in self.nullable})

    def tested(self, scope: ExpressionScope, condition: ExprNode) -> ExpressionScope:
        """`scope` where `condition` holds: narrowed by its `is not None` tests."""
        return self.with_nullable(scope, dict.fromkeys(not_null_tests(condition), False))
