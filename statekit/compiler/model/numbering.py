"""Pass 1 of the model: every state numbered in document order, with its path and kind.

Ids are pre-order, so a state's descendants are exactly the ids after it up to
its last descendant. The checks that depend on a state's kind alone (a history
state's keys, a final state's children, `done` where it never fires) are made
here, where the kind is decided.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field

from statekit.compiler.diagnostics import Diagnostic, Severity, SourceSpan
from statekit.compiler.ir import StateKind
from statekit.compiler.model.declarations import mapping_items
from statekit.compiler.rules import invalid_initial
from statekit.compiler.rules import schema as schema_rule
from statekit.compiler.schema.vocabulary import HISTORY_STATE_KEYS
from statekit.compiler.source.nodes import MappingNode, ScalarNode


@dataclass(slots=True)
class StateDraft:
    """A state while the chart is built: numbered in pass 1, completed in pass 2.

    Mutable on purpose (pass 2 fills `initial`, `history_default` and
    `transitions`); `statekit.compiler.model.freezing` turns it into a `StateNode`.
    """

    id: int
    name: str
    path: str
    kind: StateKind
    parent: int | None
    depth: int
    node: MappingNode
    span: SourceSpan
    children: list[int] = field(default_factory=list)
    history_children: list[int] = field(default_factory=list)
    initial: tuple[int, ...] = ()
    history_default: tuple[int, ...] = ()
    transitions: list[int] = field(default_factory=list)


def kind_of(node: MappingNode, *, is_root: bool) -> StateKind:
    """The kind a state mapping declares (the root is never history or final)."""
    if not is_root and node.get("history") is not None:
        return StateKind.HISTORY
    if not is_root and isinstance(node.get("final"), ScalarNode):
        return StateKind.FINAL
    parallel = node.get("parallel")
    if isinstance(parallel, ScalarNode) and parallel.value is True:
        return StateKind.PARALLEL
    if node.get("states") is not None:
        return StateKind.COMPOUND
    return StateKind.ATOMIC


@dataclass(frozen=True, slots=True)
class NumberedStates:
    """Every state of the chart in document order (the root first), and the kind checks' errors."""

    drafts: tuple[StateDraft, ...]
    problems: tuple[Diagnostic, ...]


def number_states(root: MappingNode, name: str) -> NumberedStates:
    """Number every state of the chart (pass 1), checking what each kind forbids."""
    drafts: list[StateDraft] = []
    problems: list[Diagnostic] = []
    _add_state(drafts, problems, name, root, None, root.span)
    return NumberedStates(drafts=tuple(drafts), problems=tuple(problems))


def _add_state(
    drafts: list[StateDraft],
    problems: list[Diagnostic],
    name: str,
    node: MappingNode,
    parent: StateDraft | None,
    span: SourceSpan,
) -> None:
    """Number a state (its span is its key's, where a reader looks for it)."""
    path = name if parent is None or parent.parent is None else f"{parent.path}.{name}"
    if parent is None:
        path = ""
    draft = StateDraft(
        id=len(drafts),
        name=name,
        path=path,
        kind=kind_of(node, is_root=parent is None),
        parent=None if parent is None else parent.id,
        depth=0 if parent is None else parent.depth + 1,
        node=node,
        span=span,
    )
    drafts.append(draft)
    if parent is not None:
        if draft.kind is StateKind.HISTORY:
            parent.history_children.append(draft.id)
        else:
            parent.children.append(draft.id)
    problems.extend(_shape_problems(draft))
    for key, child in mapping_items(node.get("states")):
        if isinstance(child, MappingNode):
            _add_state(drafts, problems, str(key.value), child, draft, key.span)
        elif isinstance(child, ScalarNode) and child.value is None:
            # `idle:` with nothing under it is an atomic state with no keys.
            empty = MappingNode(items=(), span=child.span)
            _add_state(drafts, problems, str(key.value), empty, draft, key.span)


def _error(slug: str, message: str, span: SourceSpan, *notes: str) -> Diagnostic:
    return Diagnostic(slug=slug, severity=Severity.ERROR, message=message, span=span, notes=notes)


def _shape_problems(draft: StateDraft) -> Iterator[Diagnostic]:
    """What a state's kind forbids of its keys (rules the JSON Schema cannot express)."""
    node = draft.node
    if draft.kind is StateKind.HISTORY:
        for key, _ in node.items:
            if key.value not in HISTORY_STATE_KEYS:
                yield _error(
                    schema_rule.SLUG,
                    f"history state '{draft.path}' may only have history, default and "
                    f"description, not '{key.value}'",
                    key.span,
                )
        if draft.depth <= 1:
            yield _error(
                schema_rule.SLUG,
                f"history state '{draft.path}' must be inside a compound or parallel "
                "state (the root is never exited, so it has no history)",
                node.span,
            )
    elif draft.kind is StateKind.FINAL:
        for forbidden in ("states", "initial", "parallel"):
            key_node = node.key_node(forbidden)
            if key_node is not None:
                yield _error(
                    schema_rule.SLUG,
                    f"final state '{draft.path}' cannot have '{forbidden}'",
                    key_node.span,
                )
    elif draft.kind is StateKind.PARALLEL:
        key_node = node.key_node("initial")
        if key_node is not None:
            yield _error(
                invalid_initial.SLUG,
                f"parallel state '{draft.path or 'root'}' enters all its regions: remove 'initial'",
                key_node.span,
            )
        if node.get("states") is None:
            yield _error(
                schema_rule.SLUG,
                f"parallel state '{draft.path or 'root'}' needs regions under 'states'",
                node.span,
            )
    done_key = node.key_node("done")
    if draft.kind is StateKind.ATOMIC and done_key is not None:
        yield _error(
            schema_rule.SLUG,
            f"'done' on '{draft.path or 'the root'}' never fires: it has no child states to finish",
            done_key.span,
            "`done` belongs on a compound state (a final child reached) or a parallel "
            "state (every region final)",
        )
    if draft.parent is None and done_key is not None:
        yield _error(
            schema_rule.SLUG,
            "'done' on the root is never taken: the chart stops when it reaches a "
            "top-level final state",
            done_key.span,
        )
