"""The check of calls: `active('state')` and the allowed functions."""

from __future__ import annotations

import ast

from statekit.compiler.diagnostics import Diagnostic
from statekit.compiler.expressions.language import (
    CALL_FUNCS,
    CALLS_MESSAGE,
    FUNCTIONS,
    MAX_FORMAT_ARGUMENTS,
)
from statekit.compiler.expressions.text_checks import TextChecks
from statekit.compiler.expressions.text_functions import TEXT_FUNCTIONS
from statekit.compiler.expressions.tree import Active, Call, ExprNode, Format
from statekit.compiler.expressions.type_relations import numeric
from statekit.compiler.rules import expression_type, expression_unsafe
from statekit.compiler.value_types import INTEGER, NUMBER, STRING, BaseType

_WRITABLE = (BaseType.INTEGER, BaseType.STRING, BaseType.BOOLEAN)
"""What `str()` and `format()` write: integers, strings and booleans (`true`, `false`)."""


class CallChecks(TextChecks):
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
        if name == "format":
            return self._format(node)
        if name in TEXT_FUNCTIONS:
            return self._text_call(node, name)
        args = [self.visit(x) for x in node.args]
        if any(x is None for x in args):
            return None
        checked = [x for x in args if x is not None]
        if name == "str":
            return self._str(node, checked)
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
            wanted_ok = t.base in (BaseType.STRING, BaseType.LIST) if name == "len" else numeric(t)
            if not wanted_ok or t.nullable:
                wanted = "a string or a list" if name == "len" else "numbers"
                message = f"{name}() needs {wanted}, but {self.segment(arg_ast)} is {t.describe()}"
                self.report(expression_type.SLUG, arg_ast, message)
                ok = False
        if not ok:
            return None
        integral = name == "len" or all(x.type.base is BaseType.INTEGER for x in checked)
        result = INTEGER if integral else NUMBER
        return Call(func=CALL_FUNCS[name], args=tuple(checked), type=result)

    def _str(self, node: ast.Call, checked: list[ExprNode]) -> ExprNode | None:
        if len(checked) != 1:
            message = f"str() takes exactly one argument ({len(checked)} given)"
            self.report(expression_type.SLUG, node, message)
            return None
        if not self._writable("str()", node.args[0], checked[0]):
            return None
        return Call(func="str", args=tuple(checked), type=STRING)

    def _format(self, node: ast.Call) -> ExprNode | None:
        template = node.args[0] if node.args else None
        if not (isinstance(template, ast.Constant) and isinstance(template.value, str)):
            message = "format() takes a string literal first, e.g. format('inv-{}', ctx.period)"
            self.report(expression_unsafe.SLUG, template or node, message)
            return None
        pieces = format_pieces(template.value)
        if isinstance(pieces, str):
            self.report(expression_unsafe.SLUG, template, f"format(): {pieces}")
            return None
        given = node.args[1:]
        if len(pieces) - 1 != len(given):
            message = (
                f"format(): the template has {len(pieces) - 1} placeholder(s) {{}} "
                f"but {len(given)} argument(s) follow it"
            )
            self.report(expression_type.SLUG, node, message)
            return None
        args = [self.visit(x) for x in given]
        checked = [x for x in args if x is not None]
        if len(checked) != len(args):
            return None
        ok = all(self._writable("format()", a, x) for a, x in zip(given, checked, strict=True))
        if not ok:
            return None
        return Format(template=template.value, pieces=pieces, args=tuple(checked))

    def _writable(self, name: str, arg: ast.expr, value: ExprNode) -> bool:
        t = value.type
        if t.base in _WRITABLE and not t.nullable:
            return True
        message = (
            f"{name} writes integers, strings and booleans, but {self.segment(arg)} is "
            f"{t.describe()}"
        )
        self.report(expression_type.SLUG, arg, message)
        return False


def format_pieces(template: str) -> tuple[str, ...] | str:
    """The text between a `format()` template's `{}` placeholders (`{{` and `}}` are
    literal braces), or why the template is refused."""
    pieces: list[str] = []
    current: list[str] = []
    i, n = 0, len(template)
    while i < n:
        c = template[i]
        pair = template[i : i + 2]
        if pair in ("{{", "}}"):
            current.append(c)
            i += 2
        elif pair == "{}":
            if len(pieces) == MAX_FORMAT_ARGUMENTS:
                return f"at most {MAX_FORMAT_ARGUMENTS} placeholders"
            pieces.append("".join(current))
            current = []
            i += 2
        elif c in "{}":
            return (
                f"only empty placeholders {{}} are allowed (write {{{{ and }}}} for braces),"
                f" found {c!r} at offset {i}"
            )
        else:
            current.append(c)
            i += 1
    pieces.append("".join(current))
    return tuple(pieces)
