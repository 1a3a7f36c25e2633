"""Reading `invoke:` and a final state's `output:` (`statekit.compiler.invocations`).

Two steps, because the events an invocation declares are needed before any
transition is compiled: `declare_invocations` reads every state's invoke ids
and `output:` field specs (the events `done.invoke.<id>` and `error.invoke.<id>`),
and `compile_invocations` compiles the input expressions and every final
state's `output:` against the chart's context once the scopes exist.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from statekit.compiler.diagnostics import Diagnostic, Severity, SourceSpan
from statekit.compiler.expressions.expression import Expression, compile_expression
from statekit.compiler.expressions.scope import ExpressionScope
from statekit.compiler.invocations import (
    ERROR_REASON_FIELD,
    ChartChoice,
    Invocation,
    done_event,
    error_event,
)
from statekit.compiler.ir import EventDecl, FieldDecl, StateKind
from statekit.compiler.model.chart_choice import compile_chart_choice, first_case_chart
from statekit.compiler.model.declarations import mapping_items, parse_fields, text
from statekit.compiler.model.numbering import StateDraft
from statekit.compiler.rules import schema as schema_rule
from statekit.compiler.source.nodes import MappingNode, Node, ScalarNode, SequenceNode
from statekit.compiler.value_types import STRING

NO_EVENT_IN_INVOCATIONS = (
    "an invocation's input and a final state's output are evaluated without an event"
)


@dataclass(frozen=True, slots=True)
class DeclaredInvocation:
    """An `invoke:` entry read in step one: its id, chart, version and nodes."""

    id: str
    state: int
    chart: str
    version: int | None
    input: Node | None
    span: SourceSpan
    description: str | None
    finalize: Node | None = None
    choice: MappingNode | None = None
    forward: bool = False


@dataclass(slots=True)
class InvocationDeclarations:
    """Every `invoke:` entry of the chart, in document order, and the events they declare."""

    invocations: list[DeclaredInvocation] = field(default_factory=list)
    events: dict[str, EventDecl] = field(default_factory=dict)

    @property
    def ids(self) -> frozenset[str]:
        """The invoke ids of the chart."""
        return frozenset(i.id for i in self.invocations)


def _entries(node: Node | None) -> tuple[MappingNode, ...]:
    if isinstance(node, MappingNode):
        return (node,)
    if isinstance(node, SequenceNode):
        return tuple(item for item in node.items if isinstance(item, MappingNode))
    return ()


def _flag(node: Node | None) -> bool:
    """A boolean key's value (the schema checks its type)."""
    return isinstance(node, ScalarNode) and node.value is True


def _error(message: str, span: SourceSpan, *notes: str) -> Diagnostic:
    return Diagnostic(
        slug=schema_rule.SLUG, severity=Severity.ERROR, message=message, span=span, notes=notes
    )


def declare_invocations(
    drafts: tuple[StateDraft, ...], problems: list[Diagnostic]
) -> InvocationDeclarations:
    """Step one: the invoke ids (unique in the chart) and the events they declare."""
    declared = InvocationDeclarations()
    first: dict[str, SourceSpan] = {}
    for draft in drafts:
        entries = _entries(draft.node.get("invoke"))
        if entries and draft.kind is StateKind.FINAL:
            problems.append(
                _error(
                    f"final state '{draft.path}' cannot invoke a chart",
                    entries[0].span,
                    "a final state is left as soon as it is reached: invoke from the state "
                    "before it",
                )
            )
            continue
        for entry in entries:
            id_node = entry.get("id")
            invoke_id = text(id_node) or ""
            span = id_node.span if id_node is not None else entry.span
            if invoke_id in first:
                problems.append(
                    _error(
                        f"duplicate invoke id '{invoke_id}' "
                        f"(first at line {first[invoke_id].line})",
                        span,
                        "an invoke id names one child and its done.invoke/error.invoke events: "
                        "give each invocation its own id",
                    )
                )
                continue
            first[invoke_id] = span
            output = parse_fields(entry.get("output"), in_context=False)
            problems.extend(output.problems)
            version_node = entry.get("version")
            version = version_node.value if isinstance(version_node, ScalarNode) else None
            chart_node = entry.get("chart")
            choice = chart_node if isinstance(chart_node, MappingNode) else None
            if choice is not None and version_node is not None:
                problems.append(
                    _error(
                        f"invoke '{invoke_id}' chooses its chart: it cannot pin one 'version'",
                        version_node.span,
                        "each case starts the newest version of its chart: remove `version:`",
                    )
                )
            declared.invocations.append(
                DeclaredInvocation(
                    id=invoke_id,
                    state=draft.id,
                    chart=first_case_chart(choice) if choice else text(chart_node) or "",
                    version=version if isinstance(version, int) and choice is None else None,
                    input=entry.get("input"),
                    span=entry.span,
                    description=text(entry.get("description")),
                    finalize=entry.get("finalize"),
                    choice=choice,
                    forward=_flag(entry.get("forward")),
                )
            )
            declared.events[done_event(invoke_id)] = EventDecl(
                name=done_event(invoke_id), fields=tuple(output.fields), span=span
            )
            reason = FieldDecl(
                name=ERROR_REASON_FIELD,
                type=STRING,
                default=None,
                has_default=False,
                secret=False,
                description="why the child failed",
                span=span,
            )
            declared.events[error_event(invoke_id)] = EventDecl(
                name=error_event(invoke_id), fields=(reason,), span=span
            )
    return declared


@dataclass(frozen=True, slots=True)
class CompiledInvocations:
    """Step two: every invocation compiled, and each final state's `output:` by state id."""

    invocations: tuple[Invocation, ...]
    outputs: Mapping[int, tuple[tuple[str, Expression], ...]]


def compile_invocations(
    declared: InvocationDeclarations,
    drafts: tuple[StateDraft, ...],
    scope: ExpressionScope,
    problems: list[Diagnostic],
) -> CompiledInvocations:
    """Step two: input expressions and `output:` compiled in `scope` (no event); an
    `output:` on a state that is not final is an error at its key."""
    invocations = tuple(
        Invocation(
            id=d.id,
            state=d.state,
            chart=d.chart,
            version=d.version,
            input=_fields(d.input, scope, f"input of invoke '{d.id}' field", problems),
            span=d.span,
            description=d.description,
            choice=_choice(d, scope, problems),
            forward=d.forward,
        )
        for d in declared.invocations
    )
    outputs: dict[int, tuple[tuple[str, Expression], ...]] = {}
    for draft in drafts:
        key = _key_of(draft.node, "output")
        if key is None:
            continue
        if draft.kind is not StateKind.FINAL:
            problems.append(
                _error(
                    f"'output' on a state that is not final ('{draft.path or '(root)'}')",
                    key.span,
                    "a top-level final state's `output:` is the payload of the parent's "
                    "done.invoke.<id>; a nested one's, of done.state.<its parent>",
                )
            )
            continue
        outputs[draft.id] = _fields(draft.node.get("output"), scope, "output field", problems)
    return CompiledInvocations(invocations=invocations, outputs=outputs)


def _choice(
    declared: DeclaredInvocation, scope: ExpressionScope, problems: list[Diagnostic]
) -> ChartChoice | None:
    if declared.choice is None:
        return None
    return compile_chart_choice(declared.choice, declared.id, scope, problems)


def _key_of(node: MappingNode, name: str) -> ScalarNode | None:
    for key, _value in node.items:
        if key.value == name:
            return key
    return None


def _fields(
    node: Node | None, scope: ExpressionScope, what: str, problems: list[Diagnostic]
) -> tuple[tuple[str, Expression], ...]:
    out: list[tuple[str, Expression]] = []
    for key, value in mapping_items(node):
        if not isinstance(value, ScalarNode):
            continue  # the schema admits only an expression or a literal here
        result = compile_expression(value.value, value.span, scope, None, f"{what} '{key.value}'")
        if isinstance(result, tuple):
            problems.extend(result)
        else:
            out.append((str(key.value), result))
    return tuple(out)
