"""Rename of a state, event or guard (a named timer: `timer_rename`): every reference
rewritten, a collision refused.

A state reference is rewritten to name the same state under the new name with
as many dotted parts as it had, or more where that would now be ambiguous; any
other reference the new name would make ambiguous is lengthened too, so the
chart compiles to the same tables with the new name.
"""

from __future__ import annotations

import keyword
import re
from collections.abc import Callable

from statekit.compiler.model.definitions import RESERVED_NAMES
from statekit.compiler.model.relative_refs import explicit_anchor, is_explicit, relative_form
from statekit.compiler.source.loader import load_yaml
from statekit.compiler.source.nodes import MappingNode, ScalarNode
from statekit.lsp.document import ChartDocument
from statekit.lsp.names import (
    FULL_PATH_ROLES,
    RELATIVE_ROLES,
    SUFFIX_ROLES,
    Kind,
    Reference,
    resolve_target,
    suffix_table,
)
from statekit.lsp.records import Position, RenameOutcome, TextEdit
from statekit.lsp.timer_rename import rename_timer, timer_state_edit

NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_-]*$")
"""The names a rename accepts: plain YAML everywhere and a name in an expression."""

RENAMEABLE = (Kind.STATE, Kind.EVENT, Kind.GUARD, Kind.TIMER, Kind.DEFINITION, Kind.TABLE)
EXPRESSION_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
"""The names a definition or a table may take: names an expression can write."""


def refusal_for_name(new_name: str) -> str | None:
    """Why `new_name` cannot be a name, or None."""
    if not NAME.match(new_name):
        return (
            f"'{new_name}' is not a name a rename writes: letters, digits, '_' and '-', "
            "starting with a letter or '_'"
        )
    root, _ = load_yaml(f"k: {new_name}\n", "<name>")
    value = root.get("k") if isinstance(root, MappingNode) else None
    if not isinstance(value, ScalarNode) or value.value != new_name:
        return f"'{new_name}' reads as a YAML value other than the name itself"
    return None


def rename_at(doc: ChartDocument, position: Position, new_name: str) -> RenameOutcome:
    """The edits renaming the state, event or guard at `position` to `new_name`."""
    found = doc.at(position)
    if found is None or found[0] not in RENAMEABLE:
        return RenameOutcome(refusal="no state, event, guard, timer, definition or table here")
    kind, key, _ = found
    if key is None:
        return RenameOutcome(refusal="this name is not declared, so there is nothing to rename")
    if kind is Kind.TIMER:
        return rename_timer(doc, key, new_name)
    problem = refusal_for_name(new_name)
    if problem is None and kind in (Kind.DEFINITION, Kind.TABLE):
        problem = _expression_name_refusal(kind, new_name)
    if problem is not None:
        return RenameOutcome(refusal=problem)
    if kind is Kind.STATE:
        edits = _state_edits(doc, key, new_name)
    else:
        edits = _name_edits(doc, kind, key, new_name)
    if isinstance(edits, str):
        return RenameOutcome(refusal=edits)
    return RenameOutcome(edits=tuple(sorted(set(edits), key=lambda e: e.range)))


def _expression_name_refusal(kind: Kind, new_name: str) -> str | None:
    """Why an expression cannot use `new_name` for a definition or table, or None."""
    if not EXPRESSION_NAME.match(new_name):
        return f"'{new_name}' is not a {kind.value} name: letters, digits and '_' only"
    if kind is Kind.DEFINITION and (new_name in RESERVED_NAMES or keyword.iskeyword(new_name)):
        return f"'{new_name}' belongs to the expression language"
    return None


def _name_edits(doc: ChartDocument, kind: Kind, key: str, new_name: str) -> list[TextEdit] | str:
    if new_name == key:
        return []
    if doc.declaration(kind, new_name) is not None:
        return f"{kind.value} '{new_name}' already exists"
    decl = doc.declaration(kind, key)
    assert decl is not None
    edits = [TextEdit(decl.range, new_name)]
    for ref in doc.uses(kind, key):
        problem = _imprecise(doc, ref)
        if problem:
            return problem
        edits.append(TextEdit(ref.range, new_name))
    return edits


def _imprecise(doc: ChartDocument, ref: Reference) -> str | None:
    if ref.precise:
        return None
    line = ref.range.start.line + 1
    return (
        f"the reference '{ref.text}' on line {line} is in a scalar whose characters cannot be "
        "located (multi-line or escaped); write it on one line and rename again"
    )


def _state_edits(doc: ChartDocument, path: str, new_name: str) -> list[TextEdit] | str:
    index = doc.index
    info = index.states[path]
    if new_name == info.name:
        return []
    parent = index.states[info.parent or ""]
    siblings = {index.states[c].name for c in parent.children}
    if new_name in siblings:
        where = f"'{parent.path}'" if parent.path else "the root"
        return f"{where} already has a state named '{new_name}'"
    prefix = f"{info.parent}.{new_name}" if info.parent else new_name

    def renamed(p: str) -> str:
        if p == path:
            return prefix
        if p.startswith(path + "."):
            return prefix + p[len(path) :]
        return p

    new_paths = {renamed(p) for p in index.states}
    new_table = suffix_table(new_paths)
    edits: list[TextEdit] = []
    assert info.key_range is not None
    edits.append(TextEdit(info.key_range, new_name))
    for ref in index.references:
        if ref.kind is Kind.TIMER and ref.key is not None:
            moved = timer_state_edit(ref, renamed, lambda r: _rewritten(r, renamed, new_table))
            if isinstance(moved, str):
                return moved
            edits.extend(moved)
            continue
        if ref.kind is not Kind.STATE or ref.key is None:
            continue
        new_text: str | None
        if ref.role in RELATIVE_ROLES:
            new_text = _rewritten_target(ref, renamed, new_paths, new_table)
        else:
            new_text = _rewritten(ref, renamed, new_table)
        if new_text is None:
            target = renamed(ref.key)
            other = next(p for p in new_table[target] if p != target)
            return (
                f"after renaming, no reference could name '{target}' unambiguously "
                f"(it is also the end of '{other}')"
            )
        if new_text != ref.text:
            problem = _imprecise(doc, ref)
            if problem:
                return problem
            edits.append(TextEdit(ref.range, new_text))
    return edits


def _rewritten_target(
    ref: Reference, renamed: Callable[[str], str], paths: set[str], table: dict[str, list[str]]
) -> str:
    """The text of a target naming the same state from its (renamed) source after the
    rename: an explicit form keeps its form; a bare one keeps at least its dotted parts
    and lengthens until it resolves to the target from there, else turns explicit."""
    assert ref.key is not None
    target = renamed(ref.key)
    source = renamed(ref.scope)
    if is_explicit(ref.text):
        anchor, _ = explicit_anchor(ref.text, ref.scope)
        if anchor is not None:
            new_anchor = renamed(anchor)
            if target.startswith(new_anchor + ".") or not new_anchor:
                head = ref.text[: len(ref.text) - len(ref.text.lstrip("^."))]
                return head + (target[len(new_anchor) + 1 :] if new_anchor else target)
        return relative_form(target, source)
    parts = target.split(".")
    for count in range(len(ref.text.split(".")), len(parts) + 1):
        suffix = ".".join(parts[len(parts) - count :])
        if resolve_target(suffix, source, paths, table) == target:
            return suffix
    return relative_form(target, source)


def _rewritten(
    ref: Reference, renamed: Callable[[str], str], table: dict[str, list[str]]
) -> str | None:
    """The text naming the same state after the rename (None: no text can)."""
    assert ref.key is not None
    target = renamed(ref.key)
    if ref.role in FULL_PATH_ROLES:
        scope = renamed(ref.scope) if ref.scope else ""
        below = target[len(scope) + 1 :] if scope else target
        return "." + below if ref.text.startswith(".") else below
    assert ref.role in SUFFIX_ROLES
    parts = target.split(".")
    for count in range(len(ref.text.split(".")), len(parts) + 1):
        suffix = ".".join(parts[len(parts) - count :])
        if len(table.get(suffix, [])) == 1:
            return suffix
    return None
