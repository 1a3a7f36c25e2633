"""Delay literals and the names of timer events.

A delay literal is one or more `<digits><unit>` with the units `d h m s ms`,
each at most once and in that order (`250ms`, `30s`, `1h30m`, `7d`); its value
in milliseconds must fit a signed 64-bit integer. Its normalised form keeps the
units in that order, drops zero units and writes zero as `0ms`; it does not
carry (`90m` stays `90m`), so a literal is written back as its author wrote it
minus leading zeros and zero units.

A timer event is named after its `after` entry and owning state:
`after(<normalised literal>)@<path>`, `after(<expression source>)@<path>` for
`delay: expr`, `at(<expression source>)@<path>` for `at: expr` (the root's path
is ""). A list entry with `id: <identifier>` names its timer: `after(<id>)@<path>`
(`at(<id>)@<path>` for `at:`), whatever its delay, so changing the delay keeps
the timer's identity (an identifier starts with a letter or `_` and has no `.`,
so it is neither a literal nor an expression). Identifiers contain neither `(`
nor `@`, so a timer event never collides with a declared event.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from statekit.compiler.delay_literals import DELAY_LITERAL as _LITERAL
from statekit.compiler.delay_literals import DELAY_PATTERN as DELAY_PATTERN
from statekit.compiler.delay_literals import MAX_DELAY_MS as MAX_DELAY_MS
from statekit.compiler.delay_literals import UNIT_MS as UNIT_MS
from statekit.compiler.delay_literals import DelayLiteral as DelayLiteral
from statekit.compiler.delay_literals import parse_delay as parse_delay
from statekit.compiler.diagnostics import Diagnostic, Severity, SourceSpan
from statekit.compiler.expressions.expression import Expression, compile_expression
from statekit.compiler.expressions.scope import ExpressionScope
from statekit.compiler.ir import TimerDecl, TimerKind
from statekit.compiler.rules import schema as schema_rule
from statekit.compiler.source.nodes import MappingNode, Node, ScalarNode, SequenceNode
from statekit.compiler.value_types import INTEGER

DELAY_FORMS = "250ms, 30s, 15m, 2h, 7d and combinations such as 1h30m"
"""The accepted forms, as every diagnostic about a delay literal names them."""


def timer_event_name(kind: TimerKind, spec: str, path: str) -> str:
    """The timer event's name: `spec` is the timer's `id:`, the normalised literal (AFTER)
    or the expression's source with its white space collapsed (DELAY, AT)."""
    spec = spec if kind is TimerKind.AFTER else " ".join(spec.split())
    word = "at" if kind is TimerKind.AT else "after"
    return f"{word}({spec})@{path}"


def timer_spec(timer: TimerDecl, path: str) -> str:
    """The timer's delay or deadline as written: the normalised literal or the expression's
    source (`path` is the owning state's path; a named timer's literal is shown carried,
    `format_delay`)."""
    if timer.label is not None:
        if timer.delay_ms is not None:
            return format_delay(timer.delay_ms)
        assert timer.expression is not None
        return " ".join(timer.expression.source.split())
    word = "at(" if timer.kind is TimerKind.AT else "after("
    return timer.name[len(word) : len(timer.name) - len(path) - 2]


def timer_trigger(timer: TimerDecl, path: str) -> str:
    """How diagrams and tables name the timer: `after 15m`, `after ctx.backoff_ms`,
    `at ctx.lease_until_ms`; a named timer with its name first: `grace: after 7d`."""
    word = "at" if timer.kind is TimerKind.AT else "after"
    named = f"{timer.label}: " if timer.label is not None else ""
    return f"{named}{word} {timer_spec(timer, path)}"


def format_delay(ms: int) -> str:
    """A millisecond count as the shortest literal with carrying (`5400000` → `1h30m`),
    for people (diagrams of `send` delays written as literals use their own text)."""
    if ms == 0:
        return "0ms"
    parts: list[str] = []
    rest = ms
    for unit, length in UNIT_MS:
        value, rest = divmod(rest, length)
        if value:
            parts.append(f"{value}{unit}")
    return "".join(parts)


# Words that each start with a digit, the last ending in a letter (`15min`, `1.5h`, `1h 30m`),
# are meant as a literal: no expression has that shape, so they get the accepted forms.
_LOOKS_LIKE_LITERAL = re.compile(r"[0-9][0-9A-Za-z.]*(?: [0-9][0-9A-Za-z.]*)*(?<=[A-Za-z])")


def literal_problem(text: str, span: SourceSpan) -> Diagnostic:
    """The `schema` diagnostic of a malformed or out-of-range delay literal."""
    in_grammar = bool(text) and _LITERAL.fullmatch(text) is not None
    why = (
        f"delay literal {text!r} is longer than 2^63 - 1 ms"
        if in_grammar
        else f"invalid delay literal {text!r}"
    )
    return Diagnostic(
        slug=schema_rule.SLUG,
        severity=Severity.ERROR,
        message=f"{why}: the accepted forms are {DELAY_FORMS}",
        span=span,
        notes=("units d, h, m, s, ms, each at most once and in that order",),
    )


@dataclass(frozen=True, slots=True)
class ReadDelay:
    """A `delay:` value read: a literal (its milliseconds and normalised text), or an
    integer expression."""

    delay_ms: int | None
    normalised: str | None
    expression: Expression | None


def read_delay(
    node: Node, scope: ExpressionScope, what: str, problems: list[Diagnostic]
) -> ReadDelay | None:
    """A `delay:` value (a delay literal or an integer expression in ms); None on errors."""
    if not isinstance(node, ScalarNode) or not isinstance(node.value, str):
        return None  # the schema admits only a string here
    literal = parse_delay(node.value)
    if literal is not None:
        return ReadDelay(delay_ms=literal.ms, normalised=literal.normalised, expression=None)
    if _LOOKS_LIKE_LITERAL.fullmatch(node.value) or _LITERAL.fullmatch(node.value):
        problems.append(literal_problem(node.value, node.span))
        return None
    expression = integer_expression(node, scope, what, problems)
    if expression is None:
        return None
    return ReadDelay(delay_ms=None, normalised=None, expression=expression)


def integer_expression(
    node: Node, scope: ExpressionScope, what: str, problems: list[Diagnostic]
) -> Expression | None:
    """An integer expression (`delay:` or `at:`), its diagnostics collected; None on errors."""
    if not isinstance(node, ScalarNode) or not isinstance(node.value, str):
        return None  # the schema admits only an expression here
    result = compile_expression(node.value, node.span, scope, INTEGER, what)
    if isinstance(result, tuple):
        problems.extend(result)
        return None
    return result


@dataclass(frozen=True, slots=True)
class TimerEntry:
    """One entry of a state's `after:` read: its timer, and its transition alternatives.

    `span` is the mapping key or list item; `alternatives` are transition nodes
    (a target, a transition mapping, or the list item itself, whose `delay`/`at`
    keys the transition reader ignores).
    """

    name: str
    kind: TimerKind
    delay_ms: int | None
    expression: Expression | None
    span: SourceSpan
    alternatives: tuple[Node, ...]
    label: str | None = None


NO_EVENT_IN_TIMERS = "an `after` timer fires without an event payload"
"""Why `event.<field>` cannot be read in an `after` entry's expressions and transition."""


def read_timer_entries(
    node: Node | None, path: str, scope: ExpressionScope, problems: list[Diagnostic]
) -> list[TimerEntry]:
    """The entries of one state's `after:` (mapping or list form), in document order.

    Entries with errors are left out (their diagnostics are in `problems`).
    """
    entries: list[TimerEntry] = []
    if isinstance(node, MappingNode):
        for key, value in node.items:
            text = str(key.value)
            literal = parse_delay(text)
            if literal is None:
                problems.append(literal_problem(text, key.span))
                continue
            entries.append(
                TimerEntry(
                    name=timer_event_name(TimerKind.AFTER, literal.normalised, path),
                    kind=TimerKind.AFTER,
                    delay_ms=literal.ms,
                    expression=None,
                    span=key.span,
                    alternatives=value.items if isinstance(value, SequenceNode) else (value,),
                )
            )
    elif isinstance(node, SequenceNode):
        for item in node.items:
            if isinstance(item, MappingNode):
                entry = _list_entry(item, path, scope, problems)
                if entry is not None:
                    entries.append(entry)
    return entries


def _list_entry(
    item: MappingNode, path: str, scope: ExpressionScope, problems: list[Diagnostic]
) -> TimerEntry | None:
    delay_node, at_node = item.get("delay"), item.get("at")
    if at_node is not None:
        expression = integer_expression(at_node, scope, "timer 'at'", problems)
        if expression is None:
            return None
        kind, delay_ms, spec = TimerKind.AT, None, expression.source
    elif delay_node is not None:
        delay = read_delay(delay_node, scope, "timer 'delay'", problems)
        if delay is None:
            return None
        expression, delay_ms = delay.expression, delay.delay_ms
        if delay.normalised is not None:
            kind, spec = TimerKind.AFTER, delay.normalised
        else:
            assert expression is not None
            kind, spec = TimerKind.DELAY, expression.source
    else:
        problems.append(
            Diagnostic(
                slug=schema_rule.SLUG,
                severity=Severity.ERROR,
                message="a timer mapping needs 'delay' (a relative timer) or 'at' (an absolute "
                "timer)",
                span=item.span,
                notes=(f"delay: a delay literal ({DELAY_FORMS}) or an expression in ms",),
            )
        )
        return None
    id_node = item.get("id")
    label = str(id_node.value) if isinstance(id_node, ScalarNode) else None
    return TimerEntry(
        name=timer_event_name(kind, label if label is not None else spec, path),
        kind=kind,
        delay_ms=delay_ms,
        expression=expression,
        span=item.span,
        alternatives=(item,),
        label=label,
    )
