"""The safe expression language: parse, allow-list, type-check, compile once.

Guards, `if` conditions, invariants and `assign` values are written as a small
subset of Python expression syntax (see docs/dsl.md, section Expressions).
`compile_expression` turns one of them into an `Expression`:

1. bound the input (at most `MAX_SOURCE_LENGTH` characters) and parse it with
   `ast.parse(..., mode="eval")`; a syntax error is `expression-syntax` at the
   column where Python's parser stopped;
2. bound the nesting (`MAX_DEPTH`), then walk the AST against an allow-list:
   every construct outside the language is `expression-unsafe`, naming it;
3. type-check each allowed construct against the declared context and payload
   types (`expression-type`: unknown fields, operands that cannot meet,
   truthiness of non-booleans, a result not assignable where it goes);
4. build the typed tree and compile it once into closures (both live in
   `statekit.compiler.expression_closures`; the node types are re-exported
   here, so callers import everything from this module).

Every problem in an expression is reported, each with its own column (the
span of the YAML scalar, offset by the position inside the expression when
the scalar is on one line). Nothing from user text is ever passed to `eval`,
`exec` or `compile`: the only interpretation of the text is `ast.parse`, and
the only code that runs afterwards is the closures built from the tree.
"""

from __future__ import annotations

import ast
import difflib
import math
import typing
import warnings
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace

from statekit.compiler.diagnostics import Diagnostic, Severity, SourceSpan
from statekit.compiler.expression_closures import (
    Active,
    ArithOp,
    BinOp,
    BoolOp,
    Call,
    CallFunc,
    Compare,
    CompareOp,
    ContextRef,
    Evaluator,
    EventRef,
    ExprNode,
    IfExp,
    InList,
    IsNone,
    Literal,
    LiteralValue,
    Not,
    UnaryOp,
    UnaryOpSymbol,
    children,
    compile_tree,
    iter_nodes,
    tree_to_json,
)
from statekit.compiler.value_types import (
    BOOLEAN,
    INTEGER,
    NULL,
    NUMBER,
    STRING,
    BaseType,
    ValueType,
)

__all__ = [
    "MAX_DEPTH",
    "MAX_EXPONENT",
    "MAX_SOURCE_LENGTH",
    "Active",
    "BinOp",
    "BoolOp",
    "Call",
    "Compare",
    "ContextRef",
    "Evaluator",
    "EventRef",
    "ExprNode",
    "Expression",
    "ExpressionScope",
    "IfExp",
    "InList",
    "IsNone",
    "Literal",
    "Not",
    "UnaryOp",
    "compile_expression",
    "iter_nodes",
    "tree_to_json",
]

MAX_SOURCE_LENGTH = 2000
"""Longest accepted expression source, in characters."""
MAX_DEPTH = 50
"""Deepest accepted nesting of sub-expressions."""
MAX_EXPONENT = 64
"""Largest literal exponent of `**`, and of nested powers multiplied together."""

SYNTAX = "expression-syntax"
UNSAFE = "expression-unsafe"
TYPE = "expression-type"


@dataclass(frozen=True, slots=True)
class ExpressionScope:
    """What an expression may refer to where it is written.

    `event` is None where no event is in scope (entry/exit actions, `always`,
    invariants); `event_unavailable_reason` then says why. `resolve_state`
    maps an `active('ref')` argument to a state id, or returns the diagnostic
    (unknown or ambiguous state) to report as is. `event_name` names the
    triggering event(s) in messages about payload fields.
    """

    context: Mapping[str, ValueType]
    event: Mapping[str, ValueType] | None
    event_unavailable_reason: str
    resolve_state: Callable[[str, SourceSpan], int | Diagnostic]
    event_name: str = ""


@dataclass(frozen=True, slots=True)
class Expression:
    """A checked, typed and compiled expression.

    `evaluate(ctx, event_payload, active_state_ids)` returns its value; it may
    raise `ArithmeticError` (division by zero, float overflow), which the
    engine classifies.
    """

    source: str
    span: SourceSpan
    tree: ExprNode
    type: ValueType
    evaluate: Evaluator = field(compare=False, repr=False)

    def to_json(self) -> dict[str, object]:
        """Canonical JSON form: source, result type and the typed tree."""
        return {"source": self.source, "type": self.type.to_json(), "tree": tree_to_json(self.tree)}

    def active_states(self) -> frozenset[int]:
        """Ids of the states this expression tests with `active()`."""
        return frozenset(n.state_id for n in iter_nodes(self.tree) if isinstance(n, Active))

    def reads_event(self) -> bool:
        """Whether the value depends on the event payload."""
        return any(isinstance(n, EventRef) for n in iter_nodes(self.tree))

    def reads_context(self) -> bool:
        """Whether the value depends on the context."""
        return any(isinstance(n, ContextRef) for n in iter_nodes(self.tree))


def compile_expression(
    source: str | int | float | bool | None,
    span: SourceSpan,
    scope: ExpressionScope,
    expected: ValueType | None = None,
    what: str = "expression",
) -> Expression | tuple[Diagnostic, ...]:
    """Check and compile one expression, or return every diagnostic found in it.

    A non-string `source` (a YAML literal such as `0`, `true` or `null`) is a
    literal of its own type. With `expected`, the result must be assignable to
    that type (`BOOLEAN` for guards; a context field's type for `assign`).
    `what` names the expression's role in messages ("guard 'paid'").
    """
    if not isinstance(source, str):
        return _compile_literal(source, span, expected, what)
    checker = _Checker(source, span, scope, what)
    node = checker.check()
    if node is not None and expected is not None:
        problem = _assign_problem(node, expected)
        if problem is not None:
            checker.report(TYPE, checker.root, problem)
    if node is None or checker.diagnostics:
        return tuple(sorted(checker.diagnostics, key=Diagnostic.sort_key))
    return Expression(source, span, node, node.type, compile_tree(node))


def _compile_literal(
    value: LiteralValue, span: SourceSpan, expected: ValueType | None, what: str
) -> Expression | tuple[Diagnostic, ...]:
    text = (
        "null" if value is None else repr(value).lower() if isinstance(value, bool) else repr(value)
    )
    if isinstance(value, float) and not math.isfinite(value):
        return (Diagnostic(UNSAFE, Severity.ERROR, f"{what}: {text} is not a finite number", span),)
    node = Literal(value, _literal_type(value))
    problem = _assign_problem(node, expected) if expected is not None else None
    if problem is not None:
        return (Diagnostic(TYPE, Severity.ERROR, f"{what}: {problem}", span),)
    return Expression(text, span, node, node.type, compile_tree(node))


def _literal_type(value: LiteralValue) -> ValueType:
    if value is None:
        return NULL
    if isinstance(value, bool):
        return BOOLEAN
    if isinstance(value, int):
        return INTEGER
    if isinstance(value, float):
        return NUMBER
    return STRING


# ---------------------------------------------------------------------------
# Type relations


def _numeric(t: ValueType) -> bool:
    return t.base is BaseType.INTEGER or t.base is BaseType.NUMBER


def _plain(t: ValueType) -> ValueType:
    """The type without enum values or nullability (the type of a computed value)."""
    return ValueType(t.base)


def _enum_miss(values: tuple[str | int, ...] | None, other: ExprNode) -> str | None:
    """If `other` is a literal of the enum's base type but not one of `values`, say so."""
    if values is None or not isinstance(other, Literal) or other.value is None:
        return None
    if type(other.value) is type(values[0]) and other.value not in values:
        listed = ", ".join(repr(v) for v in values)
        return f"{other.value!r} is not one of {listed}"
    return None


def _assign_problem(node: ExprNode, expected: ValueType) -> str | None:
    """Why a value of `node` cannot go where `expected` is declared, or None if it can."""
    if isinstance(node, IfExp):
        return _assign_problem(node.body, expected) or _assign_problem(node.orelse, expected)
    t = node.type
    mismatch = f"expected {expected.describe()}, got {t.describe()}"
    if isinstance(node, Literal):
        if expected.accepts(node.value):
            return None
        if expected.enum is not None and node.value is not None:
            return _enum_miss(expected.enum, node) or mismatch
        return mismatch
    if t.base is BaseType.NULL:
        return None if expected.nullable else mismatch
    if t.nullable and not expected.nullable:
        return mismatch
    if expected.enum is not None:
        ok = t.enum is not None and t.base is expected.base and set(t.enum) <= set(expected.enum)
        return None if ok else mismatch
    if expected.base is BaseType.NUMBER:
        return None if _numeric(t) else mismatch
    return None if t.base is expected.base else mismatch


def _unify(a: ExprNode, b: ExprNode) -> ValueType | None:
    """The type of `x if c else y`, or None when the branches cannot share one."""
    ta, tb = a.type, b.type
    if ta == tb:
        return ta
    if ta.base is BaseType.NULL:
        return replace(tb, nullable=True)
    if tb.base is BaseType.NULL:
        return replace(ta, nullable=True)
    nullable = ta.nullable or tb.nullable
    if ta.base is not tb.base:
        return ValueType(BaseType.NUMBER, nullable) if _numeric(ta) and _numeric(tb) else None
    if ta.enum is not None and tb.enum is not None:
        merged = ta.enum + tuple(v for v in tb.enum if v not in ta.enum)
        return ValueType(ta.base, nullable, merged)
    for enum_side, other in ((a, b), (b, a)):
        if (
            enum_side.type.enum is not None
            and isinstance(other, Literal)
            and other.value in enum_side.type.enum
        ):
            return ValueType(ta.base, nullable, enum_side.type.enum)
    return ValueType(ta.base, nullable)


# ---------------------------------------------------------------------------
# The checker

_COMPARE_OPS: dict[type[ast.cmpop], CompareOp] = {
    ast.Eq: "==",
    ast.NotEq: "!=",
    ast.Lt: "<",
    ast.LtE: "<=",
    ast.Gt: ">",
    ast.GtE: ">=",
}
_ARITH_OPS: dict[type[ast.operator], ArithOp] = {
    ast.Add: "+",
    ast.Sub: "-",
    ast.Mult: "*",
    ast.Div: "/",
    ast.FloorDiv: "//",
    ast.Mod: "%",
    ast.Pow: "**",
}
_OTHER_OPS: dict[type[ast.AST], str] = {
    ast.BitOr: "|",
    ast.BitAnd: "&",
    ast.BitXor: "^",
    ast.LShift: "<<",
    ast.RShift: ">>",
    ast.MatMult: "@",
    ast.Invert: "~",
}
_FORBIDDEN: dict[type[ast.AST], str] = {
    ast.Lambda: "lambda is not allowed",
    ast.ListComp: "comprehensions are not allowed",
    ast.SetComp: "comprehensions are not allowed",
    ast.DictComp: "comprehensions are not allowed",
    ast.GeneratorExp: "comprehensions are not allowed",
    ast.Subscript: "subscripts are not allowed",
    ast.Slice: "slices are not allowed",
    ast.Dict: "dict displays are not allowed",
    ast.Set: "set displays are not allowed",
    ast.List: "lists are only allowed on the right of 'in': x in [a, b]",
    ast.Tuple: "tuples are only allowed on the right of 'in': x in (a, b)",
    ast.JoinedStr: "f-strings are not allowed",
    ast.FormattedValue: "f-strings are not allowed",
    ast.NamedExpr: "assignment expressions (:=) are not allowed",
    ast.Starred: "starred expressions are not allowed",
    ast.Await: "await is not allowed",
    ast.Yield: "yield is not allowed",
    ast.YieldFrom: "yield is not allowed",
}
_FUNCTIONS = ("active", "len", "abs", "min", "max")
_CALL_FUNCS: dict[str, CallFunc] = {"len": "len", "abs": "abs", "min": "min", "max": "max"}
_CALLS_MESSAGE = "calls are limited to active(), len(), abs(), min(), max()"
_NAME_LITERALS: dict[str, LiteralValue] = {"true": True, "false": False, "null": None}


class _Checker:
    """One expression's allow-list and type check; collects every diagnostic."""

    def __init__(self, source: str, span: SourceSpan, scope: ExpressionScope, what: str) -> None:
        self.text = source.lstrip()
        self.span = span
        self.scope = scope
        self.what = what
        self.diagnostics: list[Diagnostic] = []
        self.root: ast.expr | None = None
        self.lines = self.text.split("\n")
        # Columns inside the expression map onto the file only when the scalar is on one
        # line. A quoted scalar's span starts at its quote: recognised by its width (an
        # escape inside the quotes defeats this, and the column is then one off).
        one_line = span.line == span.end_line and "\n" not in self.text.rstrip("\n")
        quoted = one_line and span.end_column - span.column == len(source) + 2
        lead = len(source) - len(self.text)
        self.base_column = span.column + lead + int(quoted) if one_line else None

    # -- positions and reporting ------------------------------------------------

    def _column(self, lineno: int, byte_offset: int) -> int:
        """0-based character column of an AST (UTF-8 byte) offset on source line `lineno`."""
        line = self.lines[lineno - 1] if 0 < lineno <= len(self.lines) else ""
        if line.isascii():
            return byte_offset
        return len(line.encode()[:byte_offset].decode(errors="ignore"))

    def at(self, start: int, end: int) -> SourceSpan:
        """The span of 0-based character columns `start:end` of the expression's first line."""
        if self.base_column is None:
            return self.span
        line = self.span.line
        return SourceSpan(
            self.span.file, line, self.base_column + start, line, self.base_column + end
        )

    def span_of(self, node: ast.AST | None) -> SourceSpan:
        if not isinstance(node, ast.expr) or node.lineno != 1:
            return self.span
        start = self._column(1, node.col_offset)
        end_lineno, end_offset = node.end_lineno or 1, node.end_col_offset or node.col_offset
        end = self._column(1, end_offset) if end_lineno == 1 else len(self.lines[0])
        return self.at(start, max(end, start + 1))

    def report(
        self, slug: str, node: ast.AST | None, message: str, notes: tuple[str, ...] = ()
    ) -> None:
        span = self.span_of(node)
        self.diagnostics.append(
            Diagnostic(slug, Severity.ERROR, f"{self.what}: {message}", span, notes)
        )

    def segment(self, node: ast.expr) -> str:
        return ast.get_source_segment(self.text, node) or type(node).__name__

    # -- entry ------------------------------------------------------------------

    def check(self) -> ExprNode | None:
        if len(self.text) > MAX_SOURCE_LENGTH:
            message = f"expression is too long ({len(self.text)} characters, at most "
            self.report(UNSAFE, None, message + f"{MAX_SOURCE_LENGTH})")
            return None
        try:
            with warnings.catch_warnings():  # e.g. "invalid decimal literal" for `1if x else 2`
                warnings.simplefilter("ignore", SyntaxWarning)
                warnings.simplefilter("ignore", DeprecationWarning)
                tree = ast.parse(self.text, mode="eval")
        except SyntaxError as exc:
            self._syntax_error(exc)
            return None
        except (RecursionError, MemoryError):
            self.report(UNSAFE, None, "expression is too deeply nested to parse")
            return None
        except ValueError as exc:
            self.report(SYNTAX, None, f"cannot parse the expression: {exc}")
            return None
        if _depth_exceeds(tree.body, MAX_DEPTH):
            self.report(UNSAFE, None, f"expression is nested more than {MAX_DEPTH} levels deep")
            return None
        self.root = tree.body
        return self.visit(tree.body)

    def _syntax_error(self, exc: SyntaxError) -> None:
        lineno = exc.lineno or 1
        if lineno != 1:
            message = f"{self.what}: invalid syntax on line {lineno}: {exc.msg}"
            self.diagnostics.append(Diagnostic(SYNTAX, Severity.ERROR, message, self.span))
            return
        line = self.lines[0]
        offset = exc.offset if exc.offset and exc.offset > 0 else len(line) + 1
        start = min(offset - 1, len(line))
        end_offset = exc.end_offset or 0
        end = end_offset - 1 if end_offset > offset else start + 1
        span = self.at(start, max(end, start + 1))
        detail = "" if exc.msg == "invalid syntax" else f": {exc.msg}"
        message = f"{self.what}: invalid syntax{detail}"
        self.diagnostics.append(Diagnostic(SYNTAX, Severity.ERROR, message, span))

    # -- the allow-list -----------------------------------------------------------

    def visit(self, node: ast.expr) -> ExprNode | None:
        match node:
            case ast.Constant():
                return self._constant(node)
            case ast.Name():
                return self._name(node)
            case ast.Attribute():
                return self._attribute(node)
            case ast.BoolOp():
                return self._bool_op(node)
            case ast.UnaryOp():
                return self._unary(node)
            case ast.BinOp():
                return self._bin_op(node)
            case ast.Compare():
                return self._compare(node)
            case ast.IfExp():
                return self._if_exp(node)
            case ast.Call():
                return self._call(node)
        message = _FORBIDDEN.get(type(node), f"{type(node).__name__} is not allowed")
        self.report(UNSAFE, node, message)
        return None

    def _constant(self, node: ast.Constant) -> ExprNode | None:
        value = node.value
        if isinstance(value, float) and not math.isfinite(value):
            self.report(UNSAFE, node, f"{self.segment(node)} is not a finite number")
            return None
        if value is None or isinstance(value, str | int | float):
            return Literal(value, _literal_type(value))
        kind = "bytes literals" if isinstance(value, bytes) else f"{type(value).__name__} literals"
        self.report(UNSAFE, node, f"{kind} are not allowed")
        return None

    def _name(self, node: ast.Name) -> ExprNode | None:
        name = node.id
        if name in _NAME_LITERALS:
            value = _NAME_LITERALS[name]
            return Literal(value, _literal_type(value))
        if name in ("ctx", "event"):
            self.report(UNSAFE, node, f"'{name}' is only allowed as {name}.<field>")
            return None
        if name in _FUNCTIONS:
            self.report(UNSAFE, node, f"'{name}' can only be called: {name}(...)")
            return None
        notes = []
        if name in self.scope.context:
            notes.append(f"did you mean ctx.{name}?")
        if self.scope.event is not None and name in self.scope.event:
            notes.append(f"did you mean event.{name}?")
        if not notes:
            notes.append(f"a string literal needs quotes inside the expression: \"'{name}'\"")
        message = f"name '{name}' is not allowed: only event.<field>, ctx.<field> and literals"
        self.report(UNSAFE, node, message, tuple(notes))
        return None

    def _attribute(self, node: ast.Attribute) -> ExprNode | None:
        base = node.value
        attr = node.attr
        if (
            not isinstance(base, ast.Name)
            or base.id not in ("ctx", "event")
            or attr.startswith("__")
        ):
            message = (
                f"attribute access '{attr}' is not allowed: only event.<field> and ctx.<field>"
            )
            self.report(UNSAFE, node, message)
            return None
        if base.id == "ctx":
            declared = self.scope.context.get(attr)
            if declared is None:
                notes = _did_you_mean(attr, self.scope.context)
                self.report(TYPE, node, f"unknown context field '{attr}'", notes)
                return None
            return ContextRef(attr, declared)
        payload = self.scope.event
        if payload is None:
            reason = self.scope.event_unavailable_reason
            self.report(TYPE, node, f"event.{attr} is not available here: {reason}")
            return None
        declared = payload.get(attr)
        if declared is None:
            event = f"event {self.scope.event_name}" if self.scope.event_name else "the event"
            notes = _did_you_mean(attr, payload)
            if not notes:
                fields = ", ".join(payload) if payload else "none"
                notes = (f"payload fields: {fields}",)
            self.report(TYPE, node, f"{event} has no field '{attr}'", notes)
            return None
        return EventRef(attr, declared)

    def _bool_op(self, node: ast.BoolOp) -> ExprNode | None:
        op: typing.Literal["and", "or"] = "and" if isinstance(node.op, ast.And) else "or"
        values = [self.visit(v) for v in node.values]
        ok = True
        for child, value in zip(node.values, values, strict=True):
            ok = self._require_boolean(child, value, f"'{op}'") and ok
        if not ok:
            return None
        return BoolOp(op, tuple(v for v in values if v is not None))

    def _require_boolean(self, node: ast.expr, value: ExprNode | None, role: str) -> bool:
        if value is None:
            return False
        if value.type != BOOLEAN:
            message = (
                f"{role} needs a boolean, but {self.segment(node)} is {value.type.describe()}"
                " (no truthiness: compare explicitly)"
            )
            self.report(TYPE, node, message)
            return False
        return True

    def _unary(self, node: ast.UnaryOp) -> ExprNode | None:
        if isinstance(node.op, ast.Not):
            operand = self.visit(node.operand)
            if not self._require_boolean(node.operand, operand, "'not'"):
                return None
            assert operand is not None
            return Not(operand)
        if isinstance(node.op, ast.Invert):
            self.report(UNSAFE, node, "operator '~' is not allowed")
            return None
        op: UnaryOpSymbol = "-" if isinstance(node.op, ast.USub) else "+"
        operand = self.visit(node.operand)
        if operand is None:
            return None
        t = operand.type
        if not _numeric(t) or t.nullable:
            self.report(TYPE, node, f"unary '{op}' needs a number, got {t.describe()}")
            return None
        if isinstance(operand, Literal) and isinstance(operand.value, int | float):
            return Literal(-operand.value if op == "-" else operand.value, operand.type)
        return UnaryOp(op, operand, _plain(t))

    def _bin_op(self, node: ast.BinOp) -> ExprNode | None:
        op = _ARITH_OPS.get(type(node.op))
        if op is None:
            self.report(UNSAFE, node, f"operator '{_OTHER_OPS[type(node.op)]}' is not allowed")
            return None
        power = 0
        if op == "**":
            exponent = node.right
            if (
                isinstance(exponent, ast.Constant)
                and type(exponent.value) is int
                and 0 <= exponent.value <= MAX_EXPONENT
            ):
                power = exponent.value
            else:
                message = (
                    f"'**' needs a literal integer exponent from 0 to {MAX_EXPONENT}"
                    " (huge exponents are not allowed)"
                )
                self.report(UNSAFE, exponent, message)
                return None
        left, right = self.visit(node.left), self.visit(node.right)
        if left is None or right is None:
            return None
        lt, rt = left.type, right.type
        if op == "**" and _power_degree(left) * power > MAX_EXPONENT:
            message = f"huge exponents: nested powers multiply to an exponent above {MAX_EXPONENT}"
            self.report(UNSAFE, node, message)
            return None
        if lt.nullable or rt.nullable:
            nullable = self.segment(node.left if lt.nullable else node.right)
            self.report(TYPE, node, f"'{op}' needs numbers, but {nullable} may be null")
            return None
        if op == "+" and lt.base is BaseType.STRING and rt.base is BaseType.STRING:
            return BinOp(op, left, right, STRING)
        if not (_numeric(lt) and _numeric(rt)):
            needs = "two numbers or two strings" if op == "+" else "numbers"
            message = f"'{op}' needs {needs}, got {lt.describe()} and {rt.describe()}"
            self.report(TYPE, node, message)
            return None
        both_int = lt.base is BaseType.INTEGER and rt.base is BaseType.INTEGER
        return BinOp(op, left, right, INTEGER if both_int and op != "/" else NUMBER)

    def _compare(self, node: ast.Compare) -> ExprNode | None:
        ast_ops = node.ops
        special = [op for op in ast_ops if isinstance(op, ast.In | ast.NotIn | ast.Is | ast.IsNot)]
        if special and len(ast_ops) > 1:
            self.report(UNSAFE, node, "'in' and 'is' cannot be chained with other comparisons")
            return None
        if special:
            if isinstance(ast_ops[0], ast.In | ast.NotIn):
                return self._in_list(node, isinstance(ast_ops[0], ast.NotIn))
            return self._is_none(node, isinstance(ast_ops[0], ast.IsNot))
        operands = [self.visit(x) for x in (node.left, *node.comparators)]
        ops = tuple(_COMPARE_OPS[type(op)] for op in ast_ops)
        ok = all(x is not None for x in operands)
        asts = (node.left, *node.comparators)
        for i, op in enumerate(ops):
            left, right = operands[i], operands[i + 1]
            if left is not None and right is not None:
                problem = _comparison_problem(op, left, right, asts[i], asts[i + 1], self.segment)
                if problem is not None:
                    self.report(TYPE, node, problem)
                    ok = False
        if not ok:
            return None
        left_node, *rest = (x for x in operands if x is not None)
        return Compare(left_node, ops, tuple(rest))

    def _in_list(self, node: ast.Compare, negated: bool) -> ExprNode | None:
        container = node.comparators[0]
        keyword = "not in" if negated else "in"
        if not isinstance(container, ast.List | ast.Tuple):
            message = f"'{keyword}' needs a list display on its right, e.g. x {keyword} ['a', 'b']"
            self.report(UNSAFE, container, message)
            return None
        item = self.visit(node.left)
        options = [self.visit(x) for x in container.elts]
        if item is None or any(o is None for o in options):
            return None
        ok = True
        for option_ast, option in zip(container.elts, options, strict=True):
            assert option is not None
            if option.type.base is BaseType.NULL:
                problem = None if item.type.nullable else f"{self.segment(node.left)} is never null"
            else:
                problem = _comparison_problem(
                    "==", item, option, node.left, option_ast, self.segment
                )
            if problem is not None:
                self.report(TYPE, option_ast, problem)
                ok = False
        if not ok:
            return None
        return InList(item, tuple(o for o in options if o is not None), negated)

    def _is_none(self, node: ast.Compare, negated: bool) -> ExprNode | None:
        right = node.comparators[0]
        if not (isinstance(right, ast.Constant) and right.value is None):
            self.report(UNSAFE, node, "'is' is only allowed as 'is None' or 'is not None'")
            return None
        operand = self.visit(node.left)
        if operand is None:
            return None
        if not operand.type.nullable:
            never = "false" if negated else "true"
            message = (
                f"'{self.segment(node)}' can never be {never}: "
                f"{self.segment(node.left)} is {operand.type.describe()}, never null"
            )
            self.report(TYPE, node, message)
            return None
        return IsNone(operand, negated)

    def _if_exp(self, node: ast.IfExp) -> ExprNode | None:
        test, body, orelse = self.visit(node.test), self.visit(node.body), self.visit(node.orelse)
        test_ok = self._require_boolean(node.test, test, "a conditional expression")
        if test is None or body is None or orelse is None or not test_ok:
            return None
        unified = _unify(body, orelse)
        if unified is None:
            message = (
                "the branches of a conditional expression have incompatible types: "
                f"{body.type.describe()} and {orelse.type.describe()}"
            )
            self.report(TYPE, node, message)
            return None
        return IfExp(test, body, orelse, unified)

    def _call(self, node: ast.Call) -> ExprNode | None:
        func = node.func
        if not isinstance(func, ast.Name) or func.id not in _FUNCTIONS:
            self.report(UNSAFE, node, _CALLS_MESSAGE)
            return None
        if node.keywords:
            self.report(UNSAFE, node.keywords[0].value, "keyword arguments are not allowed")
            return None
        name = func.id
        if name == "active":
            arg = node.args[0] if len(node.args) == 1 else None
            if not (isinstance(arg, ast.Constant) and isinstance(arg.value, str)):
                message = "active() takes one string literal naming a state, e.g. active('done')"
                self.report(UNSAFE, node, message)
                return None
            resolved = self.scope.resolve_state(arg.value, self.span_of(arg))
            if isinstance(resolved, Diagnostic):
                self.diagnostics.append(resolved)
                return None
            return Active(resolved, arg.value)
        args = [self.visit(x) for x in node.args]
        if any(x is None for x in args):
            return None
        checked = [x for x in args if x is not None]
        if name in ("len", "abs") and len(checked) != 1:
            self.report(TYPE, node, f"{name}() takes exactly one argument ({len(checked)} given)")
            return None
        if name in ("min", "max") and len(checked) < 2:
            self.report(TYPE, node, f"{name}() needs at least two arguments")
            return None
        ok = True
        for arg_ast, arg_node in zip(node.args, checked, strict=True):
            t = arg_node.type
            wanted_ok = t.base is BaseType.STRING if name == "len" else _numeric(t)
            if not wanted_ok or t.nullable:
                wanted = "a string" if name == "len" else "numbers"
                message = f"{name}() needs {wanted}, but {self.segment(arg_ast)} is {t.describe()}"
                self.report(TYPE, arg_ast, message)
                ok = False
        if not ok:
            return None
        integral = name == "len" or all(x.type.base is BaseType.INTEGER for x in checked)
        result = INTEGER if integral else NUMBER
        return Call(_CALL_FUNCS[name], tuple(checked), result)


def _comparison_problem(
    op: CompareOp,
    left: ExprNode,
    right: ExprNode,
    left_ast: ast.expr,
    right_ast: ast.expr,
    segment: Callable[[ast.expr], str],
) -> str | None:
    """Why `left op right` is ill-typed or can never hold, or None."""
    lt, rt = left.type, right.type
    if op in ("==", "!="):
        if lt.base is BaseType.NULL or rt.base is BaseType.NULL:
            return f"comparison with None: use 'is None' or 'is not None' instead of '{op}'"
        if lt.base is BaseType.BOOLEAN and rt.base is BaseType.BOOLEAN:
            return None
        if (_numeric(lt) and _numeric(rt)) or lt.base is rt.base is BaseType.STRING:
            miss = _enum_miss(lt.enum, right) or _enum_miss(rt.enum, left)
            if miss is not None:
                return f"{miss} (the values of {segment(left_ast if lt.enum else right_ast)})"
            if lt.enum is not None and rt.enum is not None and not set(lt.enum) & set(rt.enum):
                return f"'{op}' between {lt.describe()} and {rt.describe()} can never be true"
            return None
        return (
            f"comparing {lt.describe()} with {rt.describe()} using '{op}' can never be true"
            f" ({segment(left_ast)} {op} {segment(right_ast)})"
        )
    if lt.base is BaseType.BOOLEAN or rt.base is BaseType.BOOLEAN:
        return f"booleans cannot be ordered with '{op}'"
    if lt.nullable or rt.nullable:
        nullable, t = (left_ast, lt) if lt.nullable else (right_ast, rt)
        return (
            f"'{op}' cannot order a value that may be null: {segment(nullable)} is {t.describe()}"
        )
    if (_numeric(lt) and _numeric(rt)) or lt.base is rt.base is BaseType.STRING:
        return None
    return f"'{op}' cannot compare {lt.describe()} with {rt.describe()}"


def _power_degree(node: ExprNode) -> int:
    """The largest product of `**` exponents along any path of nested powers in `node`."""
    if isinstance(node, BinOp) and node.op == "**" and isinstance(node.right, Literal):
        return _power_degree(node.left) * int(node.right.value or 0)
    return max((_power_degree(child) for child in children(node)), default=1)


def _depth_exceeds(root: ast.expr, limit: int) -> bool:
    """Whether sub-expressions nest deeper than `limit` (iterative: safe on hostile input)."""
    stack: list[tuple[ast.AST, int]] = [(root, 1)]
    while stack:
        node, depth = stack.pop()
        if depth > limit:
            return True
        for child in ast.iter_child_nodes(node):
            stack.append((child, depth + 1 if isinstance(child, ast.expr) else depth))
    return False


def _did_you_mean(name: str, known: Mapping[str, object]) -> tuple[str, ...]:
    close = difflib.get_close_matches(name, list(known), n=1)
    return (f"did you mean '{close[0]}'?",) if close else ()
