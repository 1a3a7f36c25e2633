"""Rename of a named timer's `id:`: its declaration, the timer events that name it in
the same document (`races:` events, a migration's `timers:` `to:`) and the `pause:` and
`resume:` effects that name it (`index.resolve_timer_label`) rewritten.

A migration's `timers:` keys are left as they are: they name timers of the version
migrated from, which keep their names. An unnamed timer has no name to rename (its
name is its delay: give it an `id:`). A renamed state's timers are named by its new
path: `timer_state_edit` rewrites the state part of the timer events that name them
(as many dotted parts as they had, more where that would be ambiguous).
"""

from __future__ import annotations

from collections.abc import Callable

from statekit.compiler.source.nodes import MappingNode, ScalarNode
from statekit.lsp.document import ChartDocument
from statekit.lsp.names import Kind, Reference, Role
from statekit.lsp.records import Position, Range, RenameOutcome, TextEdit
from statekit.lsp.timer_names import TIMER_ID, label_span

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
    if not TIMER_ID.fullmatch(new_name):
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
        if ref.role not in RENAMED_ROLES and ref.role is not Role.TIMER_CONTROL:
            continue
        # `pause: sla` writes the id alone; a timer event, the id inside its name
        where = (
            (ref.range if ref.precise else None) if ref.role is Role.TIMER_CONTROL else _where(ref)
        )
        if where is None:
            line = ref.range.start.line + 1
            return RenameOutcome(
                refusal=f"the timer event '{ref.text}' on line {line} is in a scalar whose "
                "characters cannot be located (multi-line or escaped); write it on one line"
            )
        edits.append(TextEdit(where, new_name))
    return RenameOutcome(edits=tuple(sorted(edits, key=lambda e: e.range)))


def timer_state_edit(
    ref: Reference,
    renamed: Callable[[str], str],
    rewrite: Callable[[Reference], str | None],
) -> list[TextEdit] | str:
    """The edit moving the timer event `ref` to its state's renamed path (`renamed`: old
    path → new; `rewrite`: a state reference's new text), none when its state keeps its
    path or `ref` names a timer of an earlier version; why not when it cannot be written."""
    assert ref.key is not None
    if ref.role not in RENAMED_ROLES:
        return []
    state = ref.key.rsplit(")@", 1)[1]
    if renamed(state) == state:
        return []
    head, written = ref.text.rsplit(")@", 1)
    as_state = Reference(Kind.STATE, Role.RACE_IN, written, state, ref.range, ref.precise)
    new_text = rewrite(as_state)
    if new_text is None or not ref.precise or ref.range.start.line != ref.range.end.line:
        line = ref.range.start.line + 1
        return f"the timer event '{ref.text}' on line {line} cannot be rewritten; edit it by hand"
    line, start = ref.range.start.line, ref.range.start.character + len(head) + 2
    where = Range(Position(line, start), Position(line, start + len(written)))
    return [TextEdit(where, new_text)]


def _where(ref: Reference) -> Range | None:
    return label_range(ref.text, ref.range) if ref.precise else None
