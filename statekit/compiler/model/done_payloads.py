"""The payload of `done.state.<path>`: the `output:` of the compound state's final children.

A final state that is not top-level may give an `output:` (field → expression over
the context, as a top-level one does for its invoking parent): entering it raises
`done.state.<parent>` with those fields, and the parent's `done:` transitions read
them as `event.<field>` (SCXML's `<donedata>`). The fields are typed from their
expressions, so every final child of one state must give the same fields with the
same types (or none of them any): a `done:` transition cannot tell which child ended
its state. A parallel state's `done.state.<path>` carries nothing (as in SCXML).
"""

from __future__ import annotations

from collections.abc import Mapping

from statekit.compiler.diagnostics import Diagnostic, Severity
from statekit.compiler.expressions.expression import Expression
from statekit.compiler.ir import EventDecl, FieldDecl, StateKind
from statekit.compiler.model.numbering import StateDraft
from statekit.compiler.rules import schema as schema_rule

Outputs = Mapping[int, tuple[tuple[str, Expression], ...]]


def done_payloads(
    drafts: tuple[StateDraft, ...], outputs: Outputs, problems: list[Diagnostic]
) -> dict[int, EventDecl]:
    """State id → the declaration of its `done.state.<path>` when its final children
    give an `output:`; a disagreement between them is an error at the child's `output`."""
    by_id = {d.id: d for d in drafts}
    payloads: dict[int, EventDecl] = {}
    for draft in drafts:
        if draft.parent is None or draft.kind is not StateKind.COMPOUND:
            continue
        finals = [by_id[c] for c in draft.children if by_id[c].kind is StateKind.FINAL]
        giving = [f for f in finals if f.id in outputs]
        if not giving:
            continue
        first = giving[0]
        fields = _typed(outputs[first.id])
        for final in finals[1:] if finals[0] is first else finals:
            if final is first:
                continue
            theirs = _typed(outputs.get(final.id, ()))
            if theirs != fields:
                problems.append(_disagreement(draft, first, final, fields, theirs))
        payloads[draft.id] = EventDecl(
            name=f"done.state.{draft.path}",
            fields=tuple(
                FieldDecl(
                    name=name,
                    type=expression.type,
                    default=None,
                    has_default=False,
                    secret=False,
                    description=None,
                    span=expression.span,
                )
                for name, expression in outputs[first.id]
            ),
            span=first.span,
        )
    return payloads


def _typed(output: tuple[tuple[str, Expression], ...]) -> dict[str, str]:
    return {name: expression.type.describe() for name, expression in output}


def _disagreement(
    parent: StateDraft,
    first: StateDraft,
    other: StateDraft,
    fields: dict[str, str],
    theirs: dict[str, str],
) -> Diagnostic:
    def shown(typed: dict[str, str]) -> str:
        return "{" + ", ".join(f"{k}: {v}" for k, v in typed.items()) + "}" if typed else "none"

    return Diagnostic(
        slug=schema_rule.SLUG,
        severity=Severity.ERROR,
        message=(
            f"final state '{other.path}' gives the output {shown(theirs)}, but "
            f"'{first.path}' gives {shown(fields)}"
        ),
        span=other.span,
        notes=(
            f"every final child of '{parent.path}' gives the payload of "
            f"done.state.{parent.path}: the same fields with the same types",
        ),
    )
