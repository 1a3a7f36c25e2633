"""`on_evaluation_error: raise` (SCXML's `error.execution`): the chart key, and the event it
declares.

By default an expression that fails at run time rejects the event with
`EVALUATION_ERROR` and nothing is kept. A chart that sets `on_evaluation_error: raise`
asks for SCXML's behaviour instead: the engine raises the internal event
`error.execution` with payload `{reason: string}` in the same macrostep (see
`statekit.engine.effect_interpreter` and docs/semantics.md). The event is declared for
the chart (no `events:` entry), so `on: {error.execution: ...}` is typed like any event.
"""

from __future__ import annotations

from typing import Final

from statekit.compiler.diagnostics import SourceSpan
from statekit.compiler.ir import EventDecl, FieldDecl
from statekit.compiler.model.declarations import text
from statekit.compiler.source.nodes import MappingNode
from statekit.compiler.value_types import STRING

ERROR_EXECUTION: Final = "error.execution"
"""The internal event an evaluation error raises in a chart that opts in."""
REASON_FIELD: Final = "reason"
"""Its payload field: the error's message (the expression's role, source, position)."""
ON_EVALUATION_ERROR: Final = "on_evaluation_error"
"""The chart key."""
RAISE: Final = "raise"


def raises_evaluation_errors(root: MappingNode) -> bool:
    """Whether the chart sets `on_evaluation_error: raise`."""
    return text(root.get(ON_EVALUATION_ERROR)) == RAISE


def error_execution_decl(root: MappingNode) -> EventDecl | None:
    """The declaration of `error.execution` when the chart opts in (at the key), else None."""
    node = root.get(ON_EVALUATION_ERROR)
    if node is None or not raises_evaluation_errors(root):
        return None
    return reason_event(
        ERROR_EXECUTION,
        "What failed: the expression's role, its source and its position.",
        node.span,
    )


def reason_event(name: str, description: str, span: SourceSpan) -> EventDecl:
    """An error event the engine raises itself (`error.execution`, `error.communication`):
    its one payload field `reason`, a string `description` explains, declared at `span`."""
    reason = FieldDecl(
        name=REASON_FIELD,
        type=STRING,
        default=None,
        has_default=False,
        secret=False,
        description=description,
        span=span,
    )
    return EventDecl(name=name, fields=(reason,), span=span)
