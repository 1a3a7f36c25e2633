"""Quick fixes for the common findings: classify an unclassified event where the finding
says, change a misspelt name to a suggested one, declare an undeclared event."""

from __future__ import annotations

import difflib
import re
from collections import Counter
from collections.abc import Iterator, Sequence

from statekit.compiler.diagnostics import Diagnostic, SourceSpan
from statekit.compiler.model.declarations import text
from statekit.compiler.rules import invalid_initial, unknown_event, unknown_guard, unknown_state
from statekit.compiler.source.nodes import MappingNode, Node, ScalarNode
from statekit.lint.rules import undefined_pair
from statekit.lsp.document import ChartDocument
from statekit.lsp.index import Kind, Reference, Role
from statekit.lsp.records import CodeAction, Position, Range, TextEdit

_UNCLASSIFIED = re.compile(r"^event (\S+) is not classified under '([^']*)'")
_UNDECLARED = re.compile(r"undeclared event '([^']+)'")
_SUGGESTION = re.compile(r"did you mean (.+)\?$")
_QUOTED = re.compile(r"'([^']+)'")

RESPELLED = frozenset(
    {unknown_state.SLUG, unknown_event.SLUG, unknown_guard.SLUG, invalid_initial.SLUG}
)
"""The findings about a name that may be misspelt (others qualify by a `did you mean`)."""

DEFAULT_REASON_PREFIX = "NOT_IN_"
"""A new `reject` entry's reason code is this and the state's name (the user edits it)."""


def actions_for(
    doc: ChartDocument, range_: Range, diagnostics: Sequence[Diagnostic]
) -> tuple[CodeAction, ...]:
    """The quick fixes of the findings that overlap `range_`, in the order given."""
    actions: list[CodeAction] = []
    if doc.index.root is None:
        return ()
    for diagnostic in diagnostics:
        where = doc.lines.range_of(diagnostic.span)
        if where.end < range_.start or range_.end < where.start:
            continue
        actions.extend(_fixes(doc, diagnostic, where))
    return tuple(dict.fromkeys(actions))


def _fixes(doc: ChartDocument, diagnostic: Diagnostic, where: Range) -> Iterator[CodeAction]:
    if diagnostic.slug == undefined_pair.SLUG:
        action = _classify(doc, diagnostic)
        if action is not None:
            yield action
        return
    yield from _respell(doc, diagnostic, where)
    if diagnostic.slug == unknown_event.SLUG:
        match = _UNDECLARED.search(diagnostic.message)
        if match is not None:
            action = _declare_event(doc, match.group(1), diagnostic.slug)
            if action is not None:
                yield action


# ---- undefined-pair: a reject entry where the finding sits -----------------------------
def _same_place(a: SourceSpan, b: SourceSpan) -> bool:
    return (a.line, a.column, a.end_line, a.end_column) == (
        b.line,
        b.column,
        b.end_line,
        b.end_column,
    )


def _classify(doc: ChartDocument, diagnostic: Diagnostic) -> CodeAction | None:
    match = _UNCLASSIFIED.match(diagnostic.message)
    if match is None:
        return None
    event, name = match.group(1), match.group(2)
    states = doc.index.states
    path = next((p for p, s in states.items() if _same_place(s.node.span, diagnostic.span)), None)
    if path is None:
        path = doc.index.resolve_state(name)
    if path is None or path not in states:
        return None
    reason = _reason_for(doc, event, path)
    edit = _add_entry(doc, states[path].node, "reject", f"{event}: {reason}")
    where = f"'{path}'" if path else "the root"
    return CodeAction(
        title=f"Reject {event} in {where} ({reason})",
        edits=(edit,),
        fixes=diagnostic.slug,
        preferred=True,
    )


def _reason_for(doc: ChartDocument, event: str, path: str) -> str:
    """The reason the chart gives most often when rejecting `event` elsewhere, else
    `NOT_IN_<STATE>` (`NOT_ALLOWED` at the root): a start the user edits."""
    used = Counter(
        reason
        for info in doc.index.states.values()
        for key, value in _items(info.node.get("reject"))
        if key.value == event and (reason := text(value)) is not None
    )
    if used:
        return used.most_common(1)[0][0]
    if not path:
        return "NOT_ALLOWED"
    name = doc.index.states[path].name
    code = re.sub(r"[^A-Z0-9]+", "_", name.upper()).strip("_")
    return DEFAULT_REASON_PREFIX + code if code else "NOT_ALLOWED"


def _items(node: Node | None) -> tuple[tuple[ScalarNode, Node], ...]:
    return node.items if isinstance(node, MappingNode) else ()


def _is_flow(doc: ChartDocument, node: Node) -> bool:
    start = doc.lines.offset(doc.lines.range_of(node.span).start)
    return doc.text[start : start + 1] in ("{", "[")


def _key_column(doc: ChartDocument, node: MappingNode) -> int:
    if node.items:
        return node.items[0][0].span.column - 1
    return doc.lines.range_of(node.span).start.character


def _add_entry(doc: ChartDocument, mapping: MappingNode, key: str, entry: str) -> TextEdit:
    """Add `entry` (`name: value`) to the `key` map of `mapping`, creating the map if needed."""
    inner = mapping.get(key)
    if isinstance(inner, MappingNode):
        return _append(doc, inner, entry)
    if inner is not None:  # `key:` with no map (null): put one after the key
        end = doc.lines.range_of(inner.span).end
        return TextEdit(Range(end, end), f" {{{entry}}}")
    return _append(doc, mapping, f"{key}:\n  {entry}", flow_form=f"{key}: {{{entry}}}")


def _append(
    doc: ChartDocument, mapping: MappingNode, entry: str, *, flow_form: str | None = None
) -> TextEdit:
    end = doc.lines.range_of(mapping.span).end
    if _is_flow(doc, mapping):
        close = Position(end.line, end.character - 1)
        separator = ", " if mapping.items else ""
        return TextEdit(Range(close, close), separator + (flow_form or entry))
    indent = " " * _key_column(doc, mapping)
    body = "\n".join(indent + line for line in entry.split("\n"))
    if end.character == 0:
        return TextEdit(Range(end, end), body + "\n")
    return TextEdit(Range(end, end), "\n" + body)


# ---- misspelt names --------------------------------------------------------------------
def _suggestions(
    doc: ChartDocument, diagnostic: Diagnostic, old: str, target: Reference | None
) -> list[str]:
    """The finding's own suggestions, else the declared names closest to the misspelling."""
    for note in diagnostic.notes:
        match = _SUGGESTION.search(note)
        if match is not None:
            quoted = _QUOTED.findall(match.group(1))
            return quoted or [match.group(1).strip()]
    if target is None or target.key is not None:
        return []
    index = doc.index
    if target.role is Role.INITIAL:
        prefix = f"{target.scope}." if target.scope else ""
        names = [
            p[len(prefix) :] for p in index.states if p.startswith(prefix) and p != target.scope
        ]
    elif target.kind is Kind.STATE:
        names = [index.shortest_reference(p) for p in index.states if p]
    else:
        names = [d.key for d in index.declarations if d.kind is target.kind]
    return difflib.get_close_matches(old, names, n=3)


def _respell(doc: ChartDocument, diagnostic: Diagnostic, where: Range) -> Iterator[CodeAction]:
    if diagnostic.slug not in RESPELLED and not any(
        _SUGGESTION.search(n) for n in diagnostic.notes
    ):
        return
    target = next(
        (
            r
            for r in doc.index.references
            if r.precise and where.start <= r.range.start and r.range.end <= where.end
        ),
        None,
    )
    if target is not None:
        old, rng = target.text, target.range
    elif where.start.line == where.end.line:
        old, rng = doc.lines.slice(where, doc.text), where
        if len(old) >= 2 and old[0] in "'\"" and old[-1] == old[0]:
            old = old[1:-1]
            rng = Range(
                Position(where.start.line, where.start.character + 1),
                Position(where.end.line, where.end.character - 1),
            )
    else:
        return
    for suggestion in _suggestions(doc, diagnostic, old, target):
        new = suggestion
        if target is not None and target.kind in (Kind.CONTEXT, Kind.PAYLOAD):
            new = suggestion.split(".", 1)[-1]
        if new != old:
            yield CodeAction(
                title=f"Change '{old}' to '{new}'",
                edits=(TextEdit(rng, new),),
                fixes=diagnostic.slug,
                preferred=True,
            )


# ---- undeclared events -----------------------------------------------------------------
def _declare_event(doc: ChartDocument, name: str, slug: str) -> CodeAction | None:
    root = doc.index.root
    if root is None or doc.declaration(Kind.EVENT, name) is not None:
        return None
    events = root.get("events")
    if isinstance(events, MappingNode):
        edit = _append(doc, events, f"{name}: {{}}")
    elif events is not None:
        end = doc.lines.range_of(events.span).end
        edit = TextEdit(Range(end, end), f" {{{name}: {{}}}}")
    else:
        states_key = root.key_node("states")
        if states_key is not None:
            at = Position(states_key.span.line - 1, 0)
            edit = TextEdit(Range(at, at), f"events:\n  {name}: {{}}\n\n")
        else:
            edit = _append(doc, root, f"events:\n  {name}: {{}}")
    return CodeAction(title=f"Declare event '{name}'", edits=(edit,), fixes=slug)
