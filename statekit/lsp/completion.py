"""Completion: what the YAML around the cursor asks for, and the names that fit there.

The place is read from the text itself (the keys of the lines above with less
indentation, and the keys and flow brackets of the cursor's own line), because
a document being typed is often not YAML at that moment; the names come from
the index of the document, or of the document with the cursor's line cut back
to its key when the text does not parse.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from statekit.compiler.source.nodes import MappingNode, ScalarNode
from statekit.lsp.completion_items import (
    child_items,
    documentation,
    item,
    state_items,
    target_items,
)
from statekit.lsp.document import ChartDocument
from statekit.lsp.done_event_items import done_event_items, done_payload_items
from statekit.lsp.expression_words import expression_word_items
from statekit.lsp.hover import field_type
from statekit.lsp.index import Index, Kind, build_index
from statekit.lsp.named_completion import definition_items, table_items
from statekit.lsp.records import CompletionItem, CompletionKind, Position, Range, TextEdit
from statekit.lsp.timer_names import control_names, send_ids

_WORD_BEFORE = re.compile(r"[^\s\[\]{},:'\"()#]*$")
_WORD_AFTER = re.compile(r"^[^\s\[\]{},:'\"()#]*")
_KEY_LINE = re.compile(r"^(\s*(?:-\s+)*)(\"[^\"]*\"|'[^']*'|[^\s#'\"\[\]{},][^:#]*?)\s*:(?=\s|$)")
_EXPRESSION_KEYS = frozenset({"if", "assert", "delay", "at"})  # a delay may be an expression
_ACTIVE_OPEN = re.compile(r"""active\(\s*['"][^'"]*$""")
_FIELD_OPEN = re.compile(r"\b(ctx|event)\s*\.\s*\w*$")


@dataclass(frozen=True, slots=True)
class Place:
    """Where the cursor is: the chain of keys above it, and whether it is typing a key."""

    keys: tuple[str, ...]
    key_position: bool
    before: str


def complete(doc: ChartDocument, position: Position) -> tuple[CompletionItem, ...]:
    """The completion items at `position` (empty where statekit has nothing to offer)."""
    lines = doc.text.split("\n")
    if position.line >= len(lines):
        return ()
    line = lines[position.line]
    before = line[: position.character]
    place = _place(lines, position.line, before)
    if place is None:
        return ()
    index = doc.index
    if index.root is None or doc.blanked:  # the cursor's own line may be the one blanked
        patched = _patched_index(lines, position.line)
        index = patched if patched.root is not None else index
    if index.root is None:
        return ()
    word = _WORD_BEFORE.search(before)
    after = _WORD_AFTER.match(line[position.character :])
    start = position.character - (len(word.group(0)) if word else 0)
    end = position.character + (len(after.group(0)) if after else 0)
    rng = Range(Position(position.line, start), Position(position.line, end))
    typed = line[start : position.character]
    return tuple(_items(doc, index, place, rng, typed))


def _patched_index(lines: list[str], line_no: int) -> Index:
    """The index of the text with the cursor's line cut back to its key, or dropped."""
    line = lines[line_no]
    match = _KEY_LINE.match(line)
    variants = []
    if match is not None:
        variants.append(line[: match.end()])
    variants.append("")
    for variant in variants:
        index = build_index("\n".join([*lines[:line_no], variant, *lines[line_no + 1 :]]))
        if index.root is not None:
            return index
    return Index(text="", root=None)


def _indent(line: str) -> int:
    """The column where a line's key starts (after indentation and `- ` markers)."""
    match = re.match(r"^(\s*(?:-\s+)*)", line)
    return len(match.group(1)) if match else 0


def _key(line: str) -> str | None:
    match = _KEY_LINE.match(line)
    if match is None:
        return None
    return match.group(2).strip("'\"")


def _place(lines: list[str], line_no: int, before: str) -> Place | None:
    if before.lstrip().startswith("#"):
        return None
    own = _line_keys(before)
    if own is None:
        return None
    line_keys, key_position = own
    if not line_keys and re.match(r"^\s*-(\s|$)", before):
        key_position = False  # a block sequence item: a value of the key above
    current = _indent(before) if before.strip() else len(before)
    ancestors: list[str] = []
    for above in reversed(lines[:line_no]):
        if not above.strip() or above.lstrip().startswith("#"):
            continue
        indent = _indent(above)
        if indent < current:
            key = _key(above)
            if key is not None:
                ancestors.append(key)
                current = indent
            if indent == 0:
                break
    return Place(keys=(*reversed(ancestors), *line_keys), key_position=key_position, before=before)


def _line_keys(before: str) -> tuple[list[str], bool] | None:
    """The keys open at the end of `before` on its own line, and whether a key is being typed.

    None inside a quoted YAML string that is not an expression position.
    """
    body = before[_indent(before) :]
    keys: list[str] = []
    stack: list[tuple[str, int]] = []  # (bracket, len(keys) when it opened)
    token = ""
    expecting_key = True  # at the start of a block line or after `{` / `,` in a flow mapping
    i = 0
    while i < len(body):
        char = body[i]
        if char in "'\"" and not token.strip():
            close = body.find(char, i + 1)
            if close == -1:
                # an open quote: an expression or a quoted name is being typed
                return keys, False
            token = body[i + 1 : close]
            i = close + 1
            continue
        if char == ":" and (i + 1 == len(body) or body[i + 1] in " \t") and token.strip():
            keys.append(token.strip())
            token = ""
            expecting_key = False
        elif char in "[{" and not token.strip():
            stack.append((char, len(keys)))
            expecting_key = char == "{"
            token = ""
        elif char in "]}" and stack:
            _, depth = stack.pop()
            del keys[depth:]
            token = ""
        elif char == "," and stack:
            bracket, depth = stack[-1]
            if bracket == "{":
                del keys[depth:]
                expecting_key = True
            token = ""
        elif char == "#" and (i == 0 or body[i - 1] in " \t") and not stack:
            return None
        else:
            token += char
        i += 1
    return keys, expecting_key and not (stack and stack[-1][0] == "[")


def _state_scope(keys: tuple[str, ...]) -> str:
    """The state path a key chain is inside (the names after each `states` key)."""
    parts = [keys[i + 1] for i in range(len(keys) - 1) if keys[i] == "states"]
    return ".".join(parts)


def _events_in_scope(index: Index, keys: tuple[str, ...]) -> list[str]:
    for i in range(len(keys) - 1, -1, -1):
        if keys[i] == "on" and i + 1 < len(keys):
            return [keys[i + 1]]
    if len(keys) >= 2 and keys[0] == "guards":
        return sorted(index.guard_events.get(keys[1], set()))
    return []


def _items(
    doc: ChartDocument, index: Index, place: Place, rng: Range, typed: str
) -> list[CompletionItem]:
    keys = place.keys
    last = keys[-1] if keys else ""
    parent = keys[-2] if len(keys) >= 2 else ""
    expression = _expression_place(keys)
    if expression:
        if _ACTIVE_OPEN.search(place.before):
            return state_items(doc, index, rng, typed, activatable=True)
        named = table_items(doc, index, place.before, rng, typed)
        if named is not None:
            return named
        field = _FIELD_OPEN.search(place.before)
        events = _events_in_scope(index, keys)
        if field is not None:
            # replace only the field name after the dot
            after_dot = Position(rng.start.line, rng.start.character + typed.rfind(".") + 1)
            name_range = Range(after_dot, rng.end)
            if field.group(1) == "ctx":
                return _context(doc, index, name_range)
            return _payload(doc, index, events, name_range) + done_payload_items(
                doc, events, name_range
            )
        if typed and "." not in typed:
            # a bare word: the fields with their prefix, `now`, `str(`, `format(`, units
            words = expression_word_items(typed, rng)
            if typed[0].isdigit():
                return words
            return [
                *(_prefixed(item, "ctx.") for item in _context(doc, index, rng)),
                *(_prefixed(item, "event.") for item in _payload(doc, index, events, rng)),
                *definition_items(doc, index, rng),
                *words,
            ]
        return []
    migration = _migration_items(doc, index, place, rng)
    if migration is not None:
        return migration
    if place.key_position:
        if last in ("on", "reject"):
            present = _present_keys(index, keys, _word(doc, rng))
            items = _events(doc, index, rng)
            if last == "on" and typed and "done.state.".startswith(typed[:11]):
                items += done_event_items(index, rng)  # once `d...` is typed
            if last == "reject":
                items.append(item("*", CompletionKind.CONSTANT, "every event", rng))
            return [i for i in items if i.label not in present]
        if last == "assign":
            return _context(doc, index, rng)
        return []
    if last == "to" or (parent in ("on", "after") and len(keys) >= 2) or last in ("always", "done"):
        return target_items(doc, index, rng, typed, _state_scope(keys), activatable=False)
    if last == "initial":
        return child_items(doc, index, _state_scope(keys), rng)
    if last == "default":
        return target_items(doc, index, rng, typed, _state_scope(keys), activatable=True)
    if last in ("when", "require", "forbid") and keys[:1] == ("invariants",):
        return state_items(doc, index, rng, typed, activatable=True)
    if last == "guard":
        return _guards(doc, index, rng)
    if last == "cancel":
        return [
            item(name, CompletionKind.CONSTANT, "the id of a delayed send", rng)
            for name in send_ids(index.root)
        ]
    if last in ("pause", "resume"):
        return [
            item(name, CompletionKind.CONSTANT, what, rng) for name, what in control_names(index)
        ]
    if last in ("already", "raise", "send") or (last == "event" and parent in ("raise", "send")):
        return _events(doc, index, rng)
    if last == "else" or parent == "reject":
        return [
            item(reason, CompletionKind.CONSTANT, f"reason code, used {len(uses)} times", rng)
            for reason, uses in index.reasons.items()
        ]
    if keys[:1] == ("producers",) and (len(keys) == 2 or keys[2:] == ("events",)):
        return _events(doc, index, rng)
    return []


def _any_event(before: str, key: str, rng: Range) -> list[CompletionItem]:
    """`"*"` (any event) where a race side is typed, not inside a side's own list."""
    written = before.rsplit(f"{key}:", 1)[-1]
    if written.count("[") - written.count("]") > 1:
        return []
    return [item('"*"', CompletionKind.CONSTANT, "any event", rng)]


def _migration_items(
    doc: ChartDocument, index: Index, place: Place, word: Range
) -> list[CompletionItem] | None:
    """Timer names where a timer event is written (`races:` events and `precedes`, a migration's
    `timers:` keys and `to:`), full state paths in a migration's `enter:` and `rename:`
    targets; None elsewhere. A timer name replaces the whole token (it holds brackets)."""
    keys = place.keys
    head = keys[0] if keys else ""
    last = keys[-1] if keys else ""
    timers = (
        (head == "races" and last in ("events", "precedes") and not place.key_position)
        or (head == "migrations" and last == "timers")
        or (head == "migrations" and "timers" in keys and last == "to")
    )
    paths = head == "migrations" and (
        (last == "enter") or (len(keys) >= 2 and keys[-2] in ("enter", "rename"))
    )
    if not timers and not paths:
        return None
    rng = _token_range(doc, place, word.start.line)
    if timers:
        items = [
            item(
                d.key,
                CompletionKind.EVENT,
                "timer",
                rng,
                documentation(doc, index, Kind.TIMER, d.key),
            )
            for d in index.declarations
            if d.kind is Kind.TIMER
        ]
        if head == "races":
            items += _events(doc, index, rng) + _any_event(place.before, last, rng)
        return items
    return [
        item(path, CompletionKind.CLASS, "state", rng, documentation(doc, index, Kind.STATE, path))
        for path, info in index.states.items()
        if path and not info.history
    ]


_TOKEN_BEFORE = re.compile(r"""[^\s\[\]{},:'"]*$""")
_TOKEN_AFTER = re.compile(r"""^[^\s\[\]{},:'"]*""")


def _token_range(doc: ChartDocument, place: Place, line_no: int) -> Range:
    """The range of the token at the cursor, at the end of `place.before` (between
    quotes, brackets, commas, colons or blanks), on line `line_no`."""
    cursor = len(place.before)
    line = doc.text.split("\n")[line_no]
    before = _TOKEN_BEFORE.search(place.before)
    after = _TOKEN_AFTER.match(line[cursor:])
    start = cursor - (len(before.group(0)) if before else 0)
    end = cursor + (len(after.group(0)) if after else 0)
    return Range(Position(line_no, start), Position(line_no, end))


def _word(doc: ChartDocument, rng: Range) -> str:
    """The whole word the completion replaces (before and after the cursor)."""
    return doc.lines.slice(rng, doc.text)


def _present_keys(index: Index, keys: tuple[str, ...], typed: str) -> set[str]:
    """The keys the state's `on`/`reject` map already has (but the one being typed)."""
    state = index.states.get(_state_scope(keys[:-1]))
    node = None if state is None else state.node.get(keys[-1])
    if not isinstance(node, MappingNode):
        return set()
    return {str(k.value) for k, _ in node.items} - {typed}


def _prefixed(item: CompletionItem, prefix: str) -> CompletionItem:
    return CompletionItem(
        label=prefix + item.label,
        kind=item.kind,
        detail=item.detail,
        edit=TextEdit(range=item.edit.range, new_text=prefix + item.edit.new_text),
        documentation=item.documentation,
    )


def _expression_place(keys: tuple[str, ...]) -> bool:
    if not keys:
        return False
    last, parent = keys[-1], keys[-2] if len(keys) >= 2 else ""
    if last in _EXPRESSION_KEYS:
        return True
    if parent in ("assign", "payload"):
        return True
    return len(keys) == 2 and keys[0] in ("guards", "define")


def _events(doc: ChartDocument, index: Index, rng: Range) -> list[CompletionItem]:
    return [
        item(
            d.key, CompletionKind.EVENT, "event", rng, documentation(doc, index, Kind.EVENT, d.key)
        )
        for d in index.declarations
        if d.kind is Kind.EVENT
    ]


def _guards(doc: ChartDocument, index: Index, rng: Range) -> list[CompletionItem]:
    items = []
    for d in index.declarations:
        if d.kind is Kind.GUARD:
            node = d.node.get("if") if isinstance(d.node, MappingNode) else d.node
            detail = str(node.value) if isinstance(node, ScalarNode) else "guard"
            items.append(
                item(
                    d.key,
                    CompletionKind.FUNCTION,
                    detail,
                    rng,
                    documentation(doc, index, Kind.GUARD, d.key),
                )
            )
    return items


def _context(doc: ChartDocument, index: Index, rng: Range) -> list[CompletionItem]:
    return [
        item(
            d.key,
            CompletionKind.FIELD,
            field_type(d.node),
            rng,
            documentation(doc, index, Kind.CONTEXT, d.key),
        )
        for d in index.declarations
        if d.kind is Kind.CONTEXT
    ]


def _payload(
    doc: ChartDocument, index: Index, events: list[str], rng: Range
) -> list[CompletionItem]:
    items: dict[str, CompletionItem] = {}
    for d in index.declarations:
        event = d.key.split(".", 1)[0]
        if d.kind is Kind.PAYLOAD and event in events and d.name not in items:
            items[d.name] = item(
                d.name,
                CompletionKind.FIELD,
                f"{field_type(d.node)} (payload of {event})",
                rng,
                documentation(doc, index, Kind.PAYLOAD, d.key),
            )
    return list(items.values())
