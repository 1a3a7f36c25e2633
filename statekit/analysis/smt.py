"""The solver's side of `statekit.analysis.feasibility`: guards translated for z3.

`SmtQuestions.solve` asks whether some payload and some context make every
`GuardFact` of a group hold (see `statekit.analysis.feasibility` for what is
translated exactly and what becomes a fresh unknown). One z3 context and one
solver serve every question of a chart (push, ask, pop); each question is
bounded by `QUERY_BUDGET`. This module is imported only when a question
reaches the solver, so charts whose questions sampling settles never load z3.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import z3

from statekit.analysis.guard_facts import GuardFact, Verdict
from statekit.compiler.expressions.tree import (
    Active,
    BinOp,
    BoolOp,
    Call,
    Compare,
    ContextRef,
    EventRef,
    ExprNode,
    IfExp,
    InList,
    InstanceId,
    IsNone,
    Literal,
    Not,
    Now,
    TableRead,
    UnaryOp,
)
from statekit.compiler.ir import CompiledChart
from statekit.compiler.value_types import INT_MAX, INT_MIN, BaseType, ValueType

QUERY_BUDGET = 500_000
MAX_TABLE_TERMS = 64
"""Largest table a read of which is translated (a nested `If` per entry); a larger one is
an unknown of its value type (sound, less precise)."""
"""The solver's resource limit for one question (z3's `rlimit`: a count of its basic
steps, so the bound and the answer are the same on every machine, unlike a timeout);
past it the run is kept (UNDECIDED). The questions the DSL's guards make take
about a thousand."""


class _Unsupported(Exception):
    """A construct the translation leaves to a fresh unknown."""


class SmtQuestions:
    """One chart's solver (see the module docstring); not thread-safe."""

    def __init__(self, chart: CompiledChart, tracked: frozenset[str] = frozenset()) -> None:
        self.chart = chart
        self.tracked = tracked
        self.start = {name: f.default for name, f in chart.context.items()}
        self.z3 = z3.Context()
        self.solver = z3.SimpleSolver(ctx=self.z3)
        self.solver.set("rlimit", QUERY_BUDGET)

    def solve(self, event: str | None, facts: Sequence[GuardFact]) -> Verdict:
        """FEASIBLE, INFEASIBLE (proven), or UNDECIDED (past the budget)."""
        try:
            translation = _Translation(self, event)
            solver = self.solver
            solver.push()
            try:
                for fact in facts:
                    formula = translation.condition(fact.tree, fact)
                    solver.add(formula if fact.holds else z3.Not(formula))
                solver.add(*translation.domains)
                answer = solver.check()
            finally:
                solver.pop()
        except z3.Z3Exception:
            answer = z3.unknown
        if answer == z3.unsat:
            return Verdict.INFEASIBLE
        if answer == z3.sat:
            return Verdict.FEASIBLE
        return Verdict.UNDECIDED


class _Translation:
    """One question's unknowns and their domains."""

    def __init__(self, owner: SmtQuestions, event: str | None) -> None:
        self.owner = owner
        self.ctx = owner.z3
        self.event = owner.chart.events.get(event) if event is not None else None
        self.unknowns: dict[tuple[object, ...], tuple[Any, Any]] = {}
        self.domains: list[Any] = []
        self.fresh = 0

    # -- unknowns -----------------------------------------------------------------

    def _unknown(self, key: tuple[object, ...], kind: ValueType) -> tuple[Any, Any]:
        """(value, is-null) of an unknown of type `kind` (is-null False when not nullable)."""
        found = self.unknowns.get(key)
        if found is not None:
            return found
        name = "|".join(str(k) for k in key)
        ctx = self.ctx
        base = kind.base
        if base is BaseType.BOOLEAN:
            value = z3.Bool(name, ctx)
        elif base is BaseType.INTEGER:
            value = z3.Int(name, ctx)
            self.domains.append(z3.And(value >= INT_MIN, value <= INT_MAX))
        elif base is BaseType.NUMBER:
            value = z3.Real(name, ctx)
        elif base is BaseType.STRING:
            value = z3.String(name, ctx)
        else:
            raise _Unsupported
        if kind.enum is not None:
            options = [self._literal(v) for v in kind.enum]
            self.domains.append(z3.Or([value == o for o in options]))
        null = z3.Bool(name + "|null", ctx) if kind.nullable else z3.BoolVal(False, ctx)
        found = self.unknowns[key] = (value, null)
        return found

    def _field(self, node: ContextRef | EventRef, fact: GuardFact) -> tuple[Any, Any]:
        if isinstance(node, ContextRef):
            decl = self.owner.chart.context[node.field]
            value = dict(fact.reads).get(node.field)
            if node.field in self.owner.tracked:  # a tracked field's value is known
                if value is None:
                    term = self._unknown(("ctx", node.field, "null"), decl.type)[0]
                    return term, z3.BoolVal(True, self.ctx)
                return self._literal(value), z3.BoolVal(False, self.ctx)
            version: object = "start" if value is self.owner.start.get(node.field) else id(value)
            return self._unknown(("ctx", node.field, version), decl.type)
        fields = {f.name: f for f in self.event.fields} if self.event is not None else {}
        declared = fields.get(node.field)
        kind = declared.type if declared is not None else node.type
        return self._unknown(("event", node.field, id(fact.payload)), kind)

    def _literal(self, value: object) -> Any:
        ctx = self.ctx
        if isinstance(value, bool):
            return z3.BoolVal(value, ctx)
        if isinstance(value, int):
            return z3.IntVal(value, ctx)
        if isinstance(value, float):
            if value != value or value in (float("inf"), float("-inf")):
                raise _Unsupported
            return z3.RealVal(repr(value), ctx)
        if isinstance(value, str):
            return z3.StringVal(value, ctx)
        raise _Unsupported

    # -- conditions and values ----------------------------------------------------

    def condition(self, node: ExprNode, fact: GuardFact) -> Any:
        """A boolean formula that holds whenever `node` is true (exactly, or a fresh
        unknown where the translation gives up)."""
        try:
            formula = self._condition(node, fact)
            if not z3.is_bool(formula):
                raise _Unsupported
            return formula
        except (_Unsupported, z3.Z3Exception):
            self.fresh += 1
            return z3.Bool(f"fresh|{self.fresh}", self.ctx)

    def _condition(self, node: ExprNode, fact: GuardFact) -> Any:
        match node:
            case Not(operand=x):
                return z3.Not(self.condition(x, fact))
            case BoolOp(op=op, values=values):
                parts = [self.condition(v, fact) for v in values]
                return z3.And(parts) if op == "and" else z3.Or(parts)
            case IfExp(test=test, body=body, orelse=orelse) if _is_boolean(node):
                return z3.If(
                    self.condition(test, fact),
                    self.condition(body, fact),
                    self.condition(orelse, fact),
                )
            case IsNone(operand=x, negated=negated):
                null = self._null(x, fact)
                return z3.Not(null) if negated else null
            case _:
                return self._boolean_value(node, fact)

    def _null(self, node: ExprNode, fact: GuardFact) -> Any:
        if isinstance(node, ContextRef | EventRef):
            return self._field(node, fact)[1]
        if isinstance(node, Literal):
            return z3.BoolVal(node.value is None, self.ctx)
        if node.type.nullable or node.type.base is BaseType.NULL:
            raise _Unsupported
        return z3.BoolVal(False, self.ctx)

    def _boolean_value(self, node: ExprNode, fact: GuardFact) -> Any:
        match node:
            case Active(state_id=state):
                return z3.BoolVal(state in fact.active, self.ctx)
            case Compare(left=left, ops=ops, comparators=comparators):
                parts = []
                a = self.value(left, fact)
                for op, right in zip(ops, comparators, strict=True):
                    b = self.value(right, fact)
                    parts.append(_compare(op, *_numeric(a, b)))
                    a = b
                return z3.And(parts) if len(parts) > 1 else parts[0]
            case InList(item=item, options=options, negated=negated):
                a = self.value(item, fact)
                found = z3.Or([_compare("==", *_numeric(a, self.value(o, fact))) for o in options])
                return z3.Not(found) if negated else found
            case _:
                return self.value(node, fact)

    def value(self, node: ExprNode, fact: GuardFact) -> Any:
        """The term of a value that is never null here (else `_Unsupported`)."""
        match node:
            case Literal(value=value):
                return self._literal(value)
            case ContextRef() | EventRef():
                value, null = self._field(node, fact)
                if not z3.is_false(null):
                    raise _Unsupported  # may be null where a value is needed
                return value
            case Now() | InstanceId():  # any reading, unrelated to other guards' (sound)
                return self._unknown(("now", id(fact)), node.type)[0]
            case UnaryOp(op=op, operand=x):
                term = self.value(x, fact)
                _require_integer(node.type)
                return -term if op == "-" else term
            case BinOp(op=op, left=left, right=right) if op in ("+", "-", "*"):
                _require_integer(node.type)
                a, b = self.value(left, fact), self.value(right, fact)
                return a + b if op == "+" else a - b if op == "-" else a * b
            case Call(func="len", args=(x,)):
                return z3.Length(self.value(x, fact))
            case Call(func="starts_with" | "ends_with" as func, args=(text, affix)):
                whole, part = self.value(text, fact), self.value(affix, fact)
                return (
                    z3.PrefixOf(part, whole) if func == "starts_with" else z3.SuffixOf(part, whole)
                )
            case Call(func="abs", args=(x,)):
                term = self.value(x, fact)
                return z3.If(term >= 0, term, -term)
            case Call(func="min" | "max" as func, args=args) if args:
                terms = [self.value(a, fact) for a in args]
                out = terms[0]
                for term in terms[1:]:
                    out, term = _numeric(out, term)
                    keep_out = out <= term if func == "min" else out >= term
                    out = z3.If(keep_out, out, term)
                return out
            case IfExp(test=test, body=body, orelse=orelse):
                a, b = _numeric(self.value(body, fact), self.value(orelse, fact))
                return z3.If(self.condition(test, fact), a, b)
            case TableRead(key=key, lookup=table) if 0 < len(table.entries) <= MAX_TABLE_TERMS:
                term = self.value(key, fact)
                entries = list(table.entries.items())
                last = table.default if table.has_default else entries.pop()[1]
                out = self._literal(last)
                for k, v in reversed(entries):
                    a, b = _numeric(self._literal(v), out)
                    out = z3.If(term == self._literal(k), a, b)
                return out
            case Not() | BoolOp() | IsNone() | Compare() | InList() | Active():
                return self.condition(node, fact)
        raise _Unsupported


def _is_boolean(node: ExprNode) -> bool:
    return node.type.base is BaseType.BOOLEAN and not node.type.nullable


def _require_integer(kind: ValueType) -> None:
    # Number arithmetic rounds (floats); only integer arithmetic is exact.
    if kind.base is not BaseType.INTEGER or kind.nullable:
        raise _Unsupported


def _numeric(a: Any, b: Any) -> tuple[Any, Any]:
    """Operands of one sort: an integer compared with a number is compared as a real."""
    if z3.is_int(a) and z3.is_real(b):
        return z3.ToReal(a), b
    if z3.is_real(a) and z3.is_int(b):
        return a, z3.ToReal(b)
    if a.sort() != b.sort():
        raise _Unsupported
    return a, b


def _compare(op: str, a: Any, b: Any) -> Any:
    if op == "==":
        return a == b
    if op == "!=":
        return a != b
    if z3.is_bool(a):
        raise _Unsupported
    if op == "<":
        return a < b
    if op == "<=":
        return a <= b
    if op == ">":
        return a > b
    return a >= b
