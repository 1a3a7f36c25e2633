"""The check of calls: `active('state')` and the allowed functions."""

from __future__ import annotations

import ast

from statekit.compiler.diagnostics import Diagnostic
from statekit.compiler.expressions.checker_core import CheckerCore
from statekit.compiler.expressions.language import CALL_FUNCS, CALLS_MESSAGE, FUNCTIONS
from statekit.compiler.expressions.tree import Active, Call, ExprNode
from statekit.compiler.expressions.type_relations import numeric
from statekit.compiler.rules import expression_type, expression_unsafe
from statekit.compiler.value_types import INTEGER, NUMBER, BaseType


class CallChecks(CheckerCore):
    """Function calls of the expression language."""

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
