"""`done.state.<path>` as an event any state's `on:` handles.

Entering a compound state's final child, or the last final state of a parallel
state's regions, raises `done.state.<path>` (`statekit.engine.plans`) on the internal
queue, after the events raised before it in the same macrostep. A state's own `done:`
transitions are the transitions of that state on its own done event; an `on:` entry
named `done.state.<path>` is a transition on the same event written on any state: an
ancestor of the state that is done, a sibling the state's `done:` moved to, a state
of another region. It is processed like any internal event, by whatever
configuration is active when it is dequeued, so it may be handled after the state
that is done was left (SCXML's semantics), or by no state at all.

`<path>` is the full dotted path of a compound or parallel state, the name the event
has in evidence; anything else is an `unknown-event` error at the key. The payload is
the one the state's `done:` transitions see: its final children's `output:` fields
(`statekit.compiler.model.done_payloads`), none for a parallel state.
"""

from __future__ import annotations

from collections.abc import Mapping

from statekit.compiler.diagnostics import Diagnostic, Severity, SourceSpan
from statekit.compiler.ir import EventDecl, StateKind
from statekit.compiler.model.numbering import StateDraft
from statekit.compiler.rules import schema as schema_rule
from statekit.compiler.rules import unknown_event

DONE_STATE = "done.state."
"""The prefix of the done event of a compound or parallel state (then its dotted path)."""


def is_done_event(name: str) -> bool:
    """Whether an `on:` key names a state's done event."""
    return name.startswith(DONE_STATE)


def done_event(
    name: str,
    span: SourceSpan,
    source: StateDraft,
    drafts: tuple[StateDraft, ...],
    payloads: Mapping[int, EventDecl],
) -> EventDecl | Diagnostic:
    """The declaration of the done event `name` (`done.state.<path>`) in `source`'s `on:`:
    its payload is the state's final children's `output:`; a diagnostic at `span` when
    `<path>` is no compound or parallel state of the chart, or is `source` itself when
    it also has `done:` (two lists of transitions on one event: write one)."""
    path = name.removeprefix(DONE_STATE)
    for draft in drafts:
        if draft.path == path and draft.parent is not None:
            if draft is source and source.node.get("done") is not None:
                return Diagnostic(
                    slug=schema_rule.SLUG,
                    severity=Severity.ERROR,
                    message=f"state '{path}' handles its own done event in `done:` and in `on:`",
                    span=span,
                    notes=("write its transitions in one of them (`done:` is the same event)",),
                )
            if draft.kind in (StateKind.COMPOUND, StateKind.PARALLEL):
                found = payloads.get(draft.id)
                return found if found is not None else EventDecl(name, (), draft.span)
            kind = "an atomic" if draft.kind is StateKind.ATOMIC else f"a {draft.kind.value}"
            return _unknown(name, span, f"'{path}' is {kind} state: it is never done")
    suffix = [d.path for d in drafts if d.path.endswith("." + path) and _completes(d)]
    hint = (
        f"the event has the state's full path: {DONE_STATE}{suffix[0]}"
        if len(suffix) == 1
        else "name a compound or parallel state by its full dotted path"
    )
    return _unknown(name, span, hint)


def _completes(draft: StateDraft) -> bool:
    return draft.parent is not None and draft.kind in (StateKind.COMPOUND, StateKind.PARALLEL)


def _unknown(name: str, span: SourceSpan, hint: str) -> Diagnostic:
    return Diagnostic(
        slug=unknown_event.SLUG,
        severity=Severity.ERROR,
        message=f"'{name}' names no compound or parallel state of the chart",
        span=span,
        notes=(hint,),
    )
