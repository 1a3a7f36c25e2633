"""Rename of a named timer's `id:`: its declaration and the timer events that name it in
the same document (`races:` events, a migration's `timers:` `to:`) rewritten.

A migration's `timers:` keys are left as they are: they name timers of the version
migrated from, which keep their names. An unnamed timer has no name to rename (its
name is its delay: give it an `id:`).
"""

from __future__ import annotations

import re

from statekit.compiler.source.nodes import MappingNode, ScalarNode
from statekit.lsp.document import ChartDocument
from statekit.lsp.names import Kind, Reference, Role
from statekit.lsp.records import Position, Range, RenameOutcome, TextEdit
from statekit.lsp.timer_names import label_span

TIMER_ID = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
"""A timer's `id:` (the schema's `timerId`)."""
RENAMED_ROLES = frozenset({Role.RACE_EVENTS, Role.MIGRATION_TO})
"""The references a timer rename rewrites (a migration's `timers:` keys name old timers)."""


def timer_label(doc: ChartDocument, key: str) -> str | None:
    """The `id:` of the declared timer `key`, or None when it is unnamed."""
    decl = doc.declaration(Kind.TIMER, key)
    if decl is None or not isinstance(decl.node, MappingNode):
        return None
    id_node = decl.node.get("id")
    return str(id_node.value) if isinstance(id_node, ScalarNode) else None


def label_range(ref_text: str, rng: Range) -> Range | None:
    """The range of the id inside a one-line timer event name written at `rng`."""
    span = label_span(ref_text)
    if span is None or rng.start.line != rng.end.line:
        return None
    line, start = rng.start.line, rng.start.character
    return Range(Position(line, start + span[0]), Position(line, start + span[1]))


def rename_timer(doc: ChartDocument, key: str, new_name: str) -> RenameOutcome:
    """The edits renaming the named timer `key` to `new_name`, or why not."""
    label = timer_label(doc, key)
    if label is None:
        return RenameOutcome(
            refusal="an unnamed timer's name is its delay: give it an `id:` to name it"
        )
    if not TIMER_ID.match(new_name):
        return RenameOutcome(
            refusal=f"'{new_name}' is not a timer id: letters, digits and '_', not starting "
            "with a digit"
        )
    span = label_span(key)
    assert span is not None
    renamed = key[: span[0]] + new_name + key[span[1] :]
    if new_name != label and doc.declaration(Kind.TIMER, renamed) is not None:
        return RenameOutcome(refusal=f"timer '{renamed}' already exists")
    decl = doc.declaration(Kind.TIMER, key)
    assert decl is not None
    edits = [TextEdit(decl.range, new_name)]
    for ref in doc.uses(Kind.TIMER, key):
        if ref.role not in RENAMED_ROLES:
            continue
        where = _where(ref)
        if where is None:
            line = ref.range.start.line + 1
            return RenameOutcome(
                refusal=f"the timer event '{ref.text}' on line {line} is in a scalar whose "
                "characters cannot be located (multi-line or escaped); write it on one line"
            )
        edits.append(TextEdit(where, new_name))
    return RenameOutcome(edits=tuple(sorted(edits, key=lambda e: e.range)))


def _where(ref: Reference) -> Range | None:
    return label_range(ref.text, ref.range) if ref.precise else None
