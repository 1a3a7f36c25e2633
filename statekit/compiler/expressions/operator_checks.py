"""The check of operators: `and`/`or`, `not`, unary and binary arithmetic, comparisons,
`in` lists, `is None` and conditional expressions."""

from __future__ import annotations

import ast
import typing

from statekit.compiler.expressions.language import ARITH_OPS, COMPARE_OPS, MAX_EXPONENT, OTHER_OPS
from statekit.compiler.expressions.list_checks import ListChecks
from statekit.compiler.expressions.null_tests import not_null_in, not_null_tests
from statekit.compiler.expressions.tree import (
    BinOp,
    BoolOp,
    Compare,
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
    joined_list,
    numeric,
    plain,
    power_degree,
    unify,
)
from statekit.compiler.rules import expression_type, expression_unsafe
from statekit.compiler.value_types import INTEGER, NUMBER, STRING, BaseType


class OperatorChecks(ListChecks):
    """The operator constructs of the expression language."""

    def _bool_op(self, node: ast.BoolOp) -> ExprNode | None:
        op: typing.Literal["and", "or"] = "and" if isinstance(node.op, ast.And) else "or"
        values: list[ExprNode | None] = []
        outer = self.scope
        try:  # an `and` reads each operand where those before it hold: `x is not None and x > 1`
            for child in node.values:
                values.append(value := self.visit(child))
                if op == "and" and value is not None:
                    self.scope = not_null_in(self.scope, not_null_tests(value))
        finally:
            self.scope = outer
        ok = True
        for child, value in zip(node.values, values, strict=True):
            ok = self.require_boolean(child, value, f"'{op}'") and ok
        if not ok:
            return None
        return BoolOp(op=op, values=tuple(v for v in values if v is not None))

    def _unary(self, node: ast.UnaryOp) -> ExprNode | None:
        if isinstance(node.op, ast.Not):
            operand = self.visit(node.operand)
            if not self.require_boolean(node.operand, operand, "'not'"):
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
        if op == "+" and lt.base is BaseType.LIST and rt.base is BaseType.LIST:
            joined = joined_list(lt, rt)
            if joined is None:
                message = (
                    f"'+' joins two lists of one item type, got {lt.describe()} and {rt.describe()}"
                )
                self.report(expression_type.SLUG, node, message)
                return None
            return BinOp(op=op, left=left, right=right, type=joined)
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
        if not isinstance(container, ast.List | ast.Tuple):
            return self._in_container(node, negated)
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
        test_ok = self.require_boolean(node.test, test, "a conditional expression")
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
