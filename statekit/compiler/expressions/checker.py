"""The check of one expression: its Python AST against the allow-list and the declared types.

`Checker` reports every problem it finds, each at its own column, and builds the typed
tree (`statekit.compiler.expressions.tree`) when there is no problem.
"""

from __future__ import annotations

import ast
import difflib
import math
from collections.abc import Mapping
from typing import cast

from statekit.compiler.diagnostics import Diagnostic, Severity
from statekit.compiler.expressions.call_checks import CallChecks
from statekit.compiler.expressions.definition_checks import DefinitionChecks
from statekit.compiler.expressions.event_meta import ANY_EVENT_META_TYPES, META_TYPES, MetaField
from statekit.compiler.expressions.instance_reading import INSTANCE_NAME
from statekit.compiler.expressions.language import (
    FORBIDDEN,
    FUNCTIONS,
    MAX_DEPTH,
    MAX_SOURCE_LENGTH,
    NAME_LITERALS,
    depth_exceeds,
)
from statekit.compiler.expressions.operator_checks import OperatorChecks
from statekit.compiler.expressions.parsing import clean_parse, python_parse
from statekit.compiler.expressions.processors import PROCESSORS_FIELD, PROCESSORS_TYPE
from statekit.compiler.expressions.record_checks import RecordChecks
from statekit.compiler.expressions.scope import AnyEvent, NoEvent, TypedEvent
from statekit.compiler.expressions.table_checks import TableChecks
from statekit.compiler.expressions.time_checks import TimeChecks
from statekit.compiler.expressions.tree import (
    ContextRef,
    EventMeta,
    EventRef,
    ExprNode,
    InstanceId,
    Literal,
    LocalRef,
)
from statekit.compiler.expressions.type_relations import (
    literal_type,
)
from statekit.compiler.rules import expression_syntax, expression_type, expression_unsafe

SYSTEM_EVENT = "_event"
SYSTEM_EVENT_USE = (
    "'_event' is only allowed as _event.name, _event.type, _event.origin, _event.invokeid,"
    " _event.sendid, _event.origintype or _event.data.<field>"
)
PAYLOAD_OF_ANY_EVENT = (
    "which payload fields there are depends on which event it is: read the field in the"
    " transition on that event (an `assign` there), or test _event.name here"
)
"""What to do instead of reading a payload field where any event may be bound."""


class Checker(OperatorChecks, CallChecks, DefinitionChecks, TableChecks, TimeChecks, RecordChecks):
    """One expression's allow-list and type check; collects every diagnostic."""

    # -- entry ------------------------------------------------------------------

    def check(self) -> ExprNode | None:
        """Parse and check the whole expression: its typed tree, or None after a problem."""
        cached = clean_parse(self.text)
        if cached is not None:  # parsed before, with nothing to report
            self.durations, self.root = cached
            return self._checked(self.root)
        if len(self.text) > MAX_SOURCE_LENGTH:
            message = f"expression is too long ({len(self.text)} characters, at most "
            self.report(expression_unsafe.SLUG, None, message + f"{MAX_SOURCE_LENGTH})")
            return None
        text = self.parsable_text()
        if self.diagnostics:
            return None
        try:
            tree = python_parse(text)
        except SyntaxError as exc:
            if not self.duration_syntax_error(exc):
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
        return self._checked(tree.body)

    def _checked(self, body: ast.expr) -> ExprNode | None:
        """The typed tree of a parsed expression within the depth bound, or None."""
        node = self.visit(body)
        if node is not None and self.expanded and not self.bounded_expansion(node):
            return None
        return node

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
            case ast.Subscript():
                return self._subscript(node)
            case ast.List():
                return self._list_display(node)
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
        found = self.time_word(node)
        if found is not None:
            return found
        if name == SYSTEM_EVENT:
            self.report(expression_unsafe.SLUG, node, SYSTEM_EVENT_USE)
            return None
        local = self.scope.locals.get(name)
        if local is not None:
            return LocalRef(name=name, type=local)
        if name in ("ctx", "event"):
            self.report(expression_unsafe.SLUG, node, f"'{name}' is only allowed as {name}.<field>")
            return None
        if name in FUNCTIONS:
            self.report(expression_unsafe.SLUG, node, f"'{name}' can only be called: {name}(...)")
            return None
        if name in self.scope.definitions:
            return self._definition(node)
        if self.scope.no_definitions is not None:
            message = f"name '{name}' is not allowed: {self.scope.no_definitions}"
            self.report(expression_unsafe.SLUG, node, message)
            return None
        if name == "tables":
            self.report(
                expression_unsafe.SLUG, node, "'tables' is only allowed as tables.<name>[key]"
            )
            return None
        defined = self.scope.definitions.names()
        notes = list(_did_you_mean(name, dict.fromkeys(defined))) if len(defined) <= 1000 else []
        if name in self.scope.context:
            notes.append(f"did you mean ctx.{name}?")
        payload = self.scope.payload
        if payload is not None and name in payload:
            notes.append(f"did you mean event.{name}?")
        if not notes:
            notes.append(f"a string literal needs quotes inside the expression: \"'{name}'\"")
        message = (
            f"name '{name}' is not allowed: only event.<field>, ctx.<field>, literals"
            " and names from define:"
        )
        self.report(expression_unsafe.SLUG, node, message, tuple(notes))
        return None

    def _attribute(self, node: ast.Attribute) -> ExprNode | None:
        base = node.value
        attr = node.attr
        if _is_name(base, SYSTEM_EVENT) or (
            isinstance(base, ast.Attribute) and _is_name(base.value, SYSTEM_EVENT)
        ):
            return self._system_event(node)
        if _is_name(base, INSTANCE_NAME):
            if attr == "id":
                return InstanceId()
            if attr == PROCESSORS_FIELD:  # a record made from the ID
                return InstanceId(PROCESSORS_TYPE, PROCESSORS_FIELD)
            message = (
                "'instance' is only allowed as instance.id (the ID of the instance) and "
                "instance.processors (its event processors' locations)"
            )
            self.report(expression_unsafe.SLUG, node, message)
            return None
        if isinstance(base, ast.Name) and base.id == "tables" and not attr.startswith("__"):
            self._table_without_key(node)
            return None
        if not attr.startswith("__") and (
            isinstance(base, ast.Attribute | ast.Subscript)
            or (isinstance(base, ast.Name) and base.id in self.scope.locals)
        ):
            return self._record_field(node)  # `ctx.address.city`, `item.city`
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
        return self._event_field(node, attr, f"event.{attr}")

    def _system_event(self, node: ast.Attribute) -> ExprNode | None:
        """`_event.name`, `.type`, `.origin`, `.invokeid`, `.sendid`, `.origintype` (what
        the event is; nullable where any event or none may be bound) or
        `_event.data.<field>` (= `event.<field>`)."""
        base = node.value
        if isinstance(base, ast.Attribute):  # _event.<x>.<field>: only _event.data.<field>
            if base.attr == "data" and not node.attr.startswith("__"):
                return self._event_field(node, node.attr, f"_event.data.{node.attr}")
            self.report(expression_unsafe.SLUG, node, SYSTEM_EVENT_USE)
            return None
        declared = META_TYPES.get(node.attr)
        if declared is None:
            self.report(expression_unsafe.SLUG, node, SYSTEM_EVENT_USE)
            return None
        if isinstance(self.scope.event, AnyEvent):  # null before any event is bound
            field = cast(MetaField, node.attr)
            return EventMeta(field=field, type=ANY_EVENT_META_TYPES[field])
        if not self._event_in_scope(node, f"_event.{node.attr}"):
            return None
        return EventMeta(field=cast(MetaField, node.attr), type=declared)

    def _event_in_scope(self, node: ast.Attribute, written: str) -> bool:
        """Whether the event's payload can be read here (reported when it cannot; a
        deferred event is checked where the expression is used)."""
        scope_event = self.scope.event
        if isinstance(scope_event, NoEvent | AnyEvent):
            message = f"{written} is not available here: {scope_event.reason}"
            notes = (PAYLOAD_OF_ANY_EVENT,) if isinstance(scope_event, AnyEvent) else ()
            self.report(expression_type.SLUG, node, message, notes)
            return False
        return isinstance(scope_event, TypedEvent)

    def _event_field(self, node: ast.Attribute, attr: str, written: str) -> ExprNode | None:
        """A payload field of the triggering event (`event.<attr>`, `_event.data.<attr>`)."""
        if not self._event_in_scope(node, written):
            return None
        scope_event = self.scope.event
        assert isinstance(scope_event, TypedEvent)
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


def _is_name(node: ast.expr, name: str) -> bool:
    return isinstance(node, ast.Name) and node.id == name


def _did_you_mean(name: str, known: Mapping[str, object]) -> tuple[str, ...]:
    close = (
        difflib.get_close_matches(name, list(known), n=1)
        or sorted(known_name for known_name in known if _shares_a_word(name, known_name))[:1]
    )
    return (f"did you mean '{close[0]}'?",) if close else ()


def _shares_a_word(name: str, known: str) -> bool:
    """`budget` and `sla_budget`: one name is a whole `_`-separated word run of the other."""
    short, long = sorted((name.lower(), known.lower()), key=len)
    return len(short) >= 3 and f"_{short}_" in f"_{long}_"
