"""The check of one expression: its Python AST against the allow-list and the declared types.

`Checker` reports every problem it finds, each at its own column, and builds the typed
tree (`statekit.compiler.expressions.tree`) when there is no problem.
"""

from __future__ import annotations

import ast
import difflib
import math
import typing
import warnings
from collections.abc import Mapping

from statekit.compiler.diagnostics import Diagnostic, Severity, SourceSpan
from statekit.compiler.expressions.language import (
    ARITH_OPS,
    CALL_FUNCS,
    CALLS_MESSAGE,
    COMPARE_OPS,
    FORBIDDEN,
    FUNCTIONS,
    MAX_DEPTH,
    MAX_EXPONENT,
    MAX_SOURCE_LENGTH,
    NAME_LITERALS,
    OTHER_OPS,
    depth_exceeds,
)
from statekit.compiler.expressions.positions import ExpressionPositions
from statekit.compiler.expressions.scope import ExpressionScope, NoEvent, TypedEvent
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
    IsNone,
    Literal,
    Not,
    UnaryOp,
    UnaryOpSymbol,
)
from statekit.compiler.expressions.type_relations import (
    comparison_problem,
    literal_type,
    numeric,
    plain,
    power_degree,
    unify,
)
from statekit.compiler.rules import expression_syntax, expression_type, expression_unsafe
from statekit.compiler.value_types import (
    BOOLEAN,
    INTEGER,
    NUMBER,
    STRING,
    BaseType,
)


class Checker:
    """One expression's allow-list and type check; collects every diagnostic."""

    def __init__(self, source: str, span: SourceSpan, scope: ExpressionScope, what: str) -> None:
        self.positions = ExpressionPositions(source, span)
        self.text = self.positions.text
        self.lines = self.positions.lines
        self.span = span
        self.scope = scope
        self.what = what
        self.diagnostics: list[Diagnostic] = []
        self.root: ast.expr | None = None

    # -- reporting --------------------------------------------------------------

    def report(
        self, slug: str, node: ast.AST | None, message: str, notes: tuple[str, ...] = ()
    ) -> None:
        """Record an error at `node`'s span, its message prefixed with the expression's role."""
        span = self.positions.span_of(node)
        self.diagnostics.append(
            Diagnostic(
                slug=slug,
                severity=Severity.ERROR,
                message=f"{self.what}: {message}",
                span=span,
                notes=notes,
            )
        )

    def segment(self, node: ast.expr) -> str:
        """The source text of `node`, for messages."""
        return ast.get_source_segment(self.text, node) or type(node).__name__

    # -- entry ------------------------------------------------------------------

    def check(self) -> ExprNode | None:
        """Parse and check the whole expression: its typed tree, or None after a problem."""
        if len(self.text) > MAX_SOURCE_LENGTH:
            message = f"expression is too long ({len(self.text)} characters, at most "
            self.report(expression_unsafe.SLUG, None, message + f"{MAX_SOURCE_LENGTH})")
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
            self.report(expression_unsafe.SLUG, None, "expression is too deeply nested to parse")
            return None
        except ValueError as exc:
            self.report(expression_syntax.SLUG, None, f"cannot parse the expression: {exc}")
            return None
        if depth_exceeds(tree.body, MAX_DEPTH):
            self.report(
                expression_unsafe.SLUG,
                None,
                f"expression is nested more than {MAX_DEPTH} levels deep",
            )
            return None
        self.root = tree.body
        return self.visit(tree.body)

    def _syntax_error(self, exc: SyntaxError) -> None:
        lineno = exc.lineno or 1
        if lineno != 1:
            message = f"{self.what}: invalid syntax on line {lineno}: {exc.msg}"
            self.diagnostics.append(
                Diagnostic(
                    slug=expression_syntax.SLUG,
                    severity=Severity.ERROR,
                    message=message,
                    span=self.span,
                )
            )
            return
        line = self.lines[0]
        offset = exc.offset if exc.offset and exc.offset > 0 else len(line) + 1
        start = min(offset - 1, len(line))
        end_offset = exc.end_offset or 0
        end = end_offset - 1 if end_offset > offset else start + 1
        span = self.positions.at(start, max(end, start + 1))
        detail = "" if exc.msg == "invalid syntax" else f": {exc.msg}"
        message = f"{self.what}: invalid syntax{detail}"
        self.diagnostics.append(
            Diagnostic(
                slug=expression_syntax.SLUG, severity=Severity.ERROR, message=message, span=span
            )
        )

    # -- the allow-list -----------------------------------------------------------

    def visit(self, node: ast.expr) -> ExprNode | None:
        """Check one sub-expression against the allow-list: its typed node, or None."""
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
        message = FORBIDDEN.get(type(node), f"{type(node).__name__} is not allowed")
        self.report(expression_unsafe.SLUG, node, message)
        return None

    def _constant(self, node: ast.Constant) -> ExprNode | None:
        value = node.value
        if isinstance(value, float) and not math.isfinite(value):
            self.report(
                expression_unsafe.SLUG, node, f"{self.segment(node)} is not a finite number"
            )
            return None
        if value is None or isinstance(value, str | int | float):
            return Literal(value=value, type=literal_type(value))
        kind = "bytes literals" if isinstance(value, bytes) else f"{type(value).__name__} literals"
        self.report(expression_unsafe.SLUG, node, f"{kind} are not allowed")
        return None

    def _name(self, node: ast.Name) -> ExprNode | None:
        name = node.id
        if name in NAME_LITERALS:
            value = NAME_LITERALS[name]
            return Literal(value=value, type=literal_type(value))
        if name in ("ctx", "event"):
            self.report(expression_unsafe.SLUG, node, f"'{name}' is only allowed as {name}.<field>")
            return None
        if name in FUNCTIONS:
            self.report(expression_unsafe.SLUG, node, f"'{name}' can only be called: {name}(...)")
            return None
        notes = []
        if name in self.scope.context:
            notes.append(f"did you mean ctx.{name}?")
        payload = self.scope.payload
        if payload is not None and name in payload:
            notes.append(f"did you mean event.{name}?")
        if not notes:
            notes.append(f"a string literal needs quotes inside the expression: \"'{name}'\"")
        message = f"name '{name}' is not allowed: only event.<field>, ctx.<field> and literals"
        self.report(expression_unsafe.SLUG, node, message, tuple(notes))
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
            self.report(expression_unsafe.SLUG, node, message)
            return None
        if base.id == "ctx":
            declared = self.scope.context.get(attr)
            if declared is None:
                notes = _did_you_mean(attr, self.scope.context)
                self.report(expression_type.SLUG, node, f"unknown context field '{attr}'", notes)
                return None
            return ContextRef(field=attr, type=declared)
        scope_event = self.scope.event
        if isinstance(scope_event, NoEvent):
            self.report(
                expression_type.SLUG,
                node,
                f"event.{attr} is not available here: {scope_event.reason}",
            )
            return None
        if not isinstance(scope_event, TypedEvent):
            return None  # DeferredEvent: checked where the expression is used
        payload = scope_event.fields
        declared = payload.get(attr)
        if declared is None:
            event = f"event {scope_event.name}" if scope_event.name else "the event"
            notes = _did_you_mean(attr, payload)
            if not notes:
                fields = ", ".join(payload) if payload else "none"
                notes = (f"payload fields: {fields}",)
            self.report(expression_type.SLUG, node, f"{event} has no field '{attr}'", notes)
            return None
        return EventRef(field=attr, type=declared)

    def _bool_op(self, node: ast.BoolOp) -> ExprNode | None:
        op: typing.Literal["and", "or"] = "and" if isinstance(node.op, ast.And) else "or"
        values = [self.visit(v) for v in node.values]
        ok = True
        for child, value in zip(node.values, values, strict=True):
            ok = self._require_boolean(child, value, f"'{op}'") and ok
        if not ok:
            return None
        return BoolOp(op=op, values=tuple(v for v in values if v is not None))

    def _require_boolean(self, node: ast.expr, value: ExprNode | None, role: str) -> bool:
        if value is None:
            return False
        if value.type != BOOLEAN:
            message = (
                f"{role} needs a boolean, but {self.segment(node)} is {value.type.describe()}"
                " (no truthiness: compare explicitly)"
            )
            self.report(expression_type.SLUG, node, message)
            return False
        return True

    def _unary(self, node: ast.UnaryOp) -> ExprNode | None:
        if isinstance(node.op, ast.Not):
            operand = self.visit(node.operand)
            if not self._require_boolean(node.operand, operand, "'not'"):
                return None
            assert operand is not None
            return Not(operand=operand)
        if isinstance(node.op, ast.Invert):
            self.report(expression_unsafe.SLUG, node, "operator '~' is not allowed")
            return None
        op: UnaryOpSymbol = "-" if isinstance(node.op, ast.USub) else "+"
        operand = self.visit(node.operand)
        if operand is None:
            return None
        t = operand.type
        if not numeric(t) or t.nullable:
            self.report(
                expression_type.SLUG, node, f"unary '{op}' needs a number, got {t.describe()}"
            )
            return None
        if isinstance(operand, Literal) and isinstance(operand.value, int | float):
            return Literal(value=-operand.value if op == "-" else operand.value, type=operand.type)
        return UnaryOp(op=op, operand=operand, type=plain(t))

    def _bin_op(self, node: ast.BinOp) -> ExprNode | None:
        op = ARITH_OPS.get(type(node.op))
        if op is None:
            self.report(
                expression_unsafe.SLUG,
                node,
                f"operator '{OTHER_OPS[type(node.op)]}' is not allowed",
            )
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
                self.report(expression_unsafe.SLUG, exponent, message)
                return None
        left, right = self.visit(node.left), self.visit(node.right)
        if left is None or right is None:
            return None
        lt, rt = left.type, right.type
        if op == "**" and power_degree(left) * power > MAX_EXPONENT:
            message = f"huge exponents: nested powers multiply to an exponent above {MAX_EXPONENT}"
            self.report(expression_unsafe.SLUG, node, message)
            return None
        if lt.nullable or rt.nullable:
            nullable = self.segment(node.left if lt.nullable else node.right)
            self.report(
                expression_type.SLUG, node, f"'{op}' needs numbers, but {nullable} may be null"
            )
            return None
        if op == "+" and lt.base is BaseType.STRING and rt.base is BaseType.STRING:
            return BinOp(op=op, left=left, right=right, type=STRING)
        if not (numeric(lt) and numeric(rt)):
            needs = "two numbers or two strings" if op == "+" else "numbers"
            message = f"'{op}' needs {needs}, got {lt.describe()} and {rt.describe()}"
            self.report(expression_type.SLUG, node, message)
            return None
        both_int = lt.base is BaseType.INTEGER and rt.base is BaseType.INTEGER
        return BinOp(
            op=op, left=left, right=right, type=INTEGER if both_int and op != "/" else NUMBER
        )

    def _compare(self, node: ast.Compare) -> ExprNode | None:
        ast_ops = node.ops
        special = [op for op in ast_ops if isinstance(op, ast.In | ast.NotIn | ast.Is | ast.IsNot)]
        if special and len(ast_ops) > 1:
            self.report(
                expression_unsafe.SLUG,
                node,
                "'in' and 'is' cannot be chained with other comparisons",
            )
            return None
        if special:
            if isinstance(ast_ops[0], ast.In | ast.NotIn):
                return self._in_list(node, isinstance(ast_ops[0], ast.NotIn))
            return self._is_none(node, isinstance(ast_ops[0], ast.IsNot))
        operands = [self.visit(x) for x in (node.left, *node.comparators)]
        ops = tuple(COMPARE_OPS[type(op)] for op in ast_ops)
        ok = all(x is not None for x in operands)
        asts = (node.left, *node.comparators)
        for i, op in enumerate(ops):
            left, right = operands[i], operands[i + 1]
            if left is not None and right is not None:
                problem = comparison_problem(op, left, right, asts[i], asts[i + 1], self.segment)
                if problem is not None:
                    self.report(expression_type.SLUG, node, problem)
                    ok = False
        if not ok:
            return None
        left_node, *rest = (x for x in operands if x is not None)
        return Compare(left=left_node, ops=ops, comparators=tuple(rest))

    def _in_list(self, node: ast.Compare, negated: bool) -> ExprNode | None:
        container = node.comparators[0]
        keyword = "not in" if negated else "in"
        if not isinstance(container, ast.List | ast.Tuple):
            message = f"'{keyword}' needs a list display on its right, e.g. x {keyword} ['a', 'b']"
            self.report(expression_unsafe.SLUG, container, message)
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
                problem = comparison_problem(
                    "==", item, option, node.left, option_ast, self.segment
                )
            if problem is not None:
                self.report(expression_type.SLUG, option_ast, problem)
                ok = False
        if not ok:
            return None
        return InList(
            item=item, options=tuple(o for o in options if o is not None), negated=negated
        )

    def _is_none(self, node: ast.Compare, negated: bool) -> ExprNode | None:
        right = node.comparators[0]
        if not (isinstance(right, ast.Constant) and right.value is None):
            self.report(
                expression_unsafe.SLUG, node, "'is' is only allowed as 'is None' or 'is not None'"
            )
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
            self.report(expression_type.SLUG, node, message)
            return None
        return IsNone(operand=operand, negated=negated)

    def _if_exp(self, node: ast.IfExp) -> ExprNode | None:
        test, body, orelse = self.visit(node.test), self.visit(node.body), self.visit(node.orelse)
        test_ok = self._require_boolean(node.test, test, "a conditional expression")
        if test is None or body is None or orelse is None or not test_ok:
            return None
        unified = unify(body, orelse)
        if unified is None:
            message = (
                "the branches of a conditional expression have incompatible types: "
                f"{body.type.describe()} and {orelse.type.describe()}"
            )
            self.report(expression_type.SLUG, node, message)
            return None
        return IfExp(test=test, body=body, orelse=orelse, type=unified)

    def _call(self, node: ast.Call) -> ExprNode | None:
        func = node.func
        if not isinstance(func, ast.Name) or func.id not in FUNCTIONS:
            self.report(expression_unsafe.SLUG, node, CALLS_MESSAGE)
            return None
        if node.keywords:
            self.report(
                expression_unsafe.SLUG, node.keywords[0].value, "keyword arguments are not allowed"
            )
            return None
        name = func.id
        if name == "active":
            arg = node.args[0] if len(node.args) == 1 else None
            if not (isinstance(arg, ast.Constant) and isinstance(arg.value, str)):
                message = "active() takes one string literal naming a state, e.g. active('done')"
                self.report(expression_unsafe.SLUG, node, message)
                return None
            resolved = self.scope.resolve_state(arg.value, self.positions.span_of(arg))
            if isinstance(resolved, Diagnostic):
                self.diagnostics.append(resolved)
                return None
            return Active(state_id=resolved, ref=arg.value)
        args = [self.visit(x) for x in node.args]
        if any(x is None for x in args):
            return None
        checked = [x for x in args if x is not None]
        if name in ("len", "abs") and len(checked) != 1:
            self.report(
                expression_type.SLUG,
                node,
                f"{name}() takes exactly one argument ({len(checked)} given)",
            )
            return None
        if name in ("min", "max") and len(checked) < 2:
            self.report(expression_type.SLUG, node, f"{name}() needs at least two arguments")
            return None
        ok = True
        for arg_ast, arg_node in zip(node.args, checked, strict=True):
            t = arg_node.type
            wanted_ok = t.base is BaseType.STRING if name == "len" else numeric(t)
            if not wanted_ok or t.nullable:
                wanted = "a string" if name == "len" else "numbers"
                message = f"{name}() needs {wanted}, but {self.segment(arg_ast)} is {t.describe()}"
                self.report(expression_type.SLUG, arg_ast, message)
                ok = False
        if not ok:
            return None
        integral = name == "len" or all(x.type.base is BaseType.INTEGER for x in checked)
        result = INTEGER if integral else NUMBER
        return Call(func=CALL_FUNCS[name], args=tuple(checked), type=result)


def _did_you_mean(name: str, known: Mapping[str, object]) -> tuple[str, ...]:
    close = difflib.get_close_matches(name, list(known), n=1)
    return (f"did you mean '{close[0]}'?",) if close else ()
