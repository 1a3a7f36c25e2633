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
from statekit.lint.rules import invoke_unclassified, undefined_pair
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
"""One reason a new `reject` entry may give: this and the state's name."""
MAX_REASON_CHOICES = 8
"""Quick fixes offered per unclassified event, one per reason."""


def actions_for(
    doc: ChartDocument, range_: Range, diagnostics: Sequence[Diagnostic]
) -> tuple[CodeAction, ...]:
    """The quick fixes of the findings on the lines of `range_` (wherever on the line the
    cursor is: an editor asks at the cursor, often column 0), in the order given."""
    actions: list[CodeAction] = []
    if doc.index.root is None:
        return ()
    for diagnostic in diagnostics:
        where = doc.lines.range_of(diagnostic.span)
        if not on_lines(where, range_):
            continue
        actions.extend(_fixes(doc, diagnostic, where))
    return tuple(dict.fromkeys(actions))


def on_lines(finding: Range, asked: Range) -> bool:
    """Whether the lines of `asked` and those of `finding` share one."""
    return finding.start.line <= asked.end.line and asked.start.line <= finding.end.line


def _fixes(doc: ChartDocument, diagnostic: Diagnostic, where: Range) -> Iterator[CodeAction]:
    if diagnostic.slug in (undefined_pair.SLUG, invoke_unclassified.SLUG):
        yield from _classify(doc, diagnostic)
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


def _classify(doc: ChartDocument, diagnostic: Diagnostic) -> Iterator[CodeAction]:
    match = _UNCLASSIFIED.match(diagnostic.message)
    if match is None:
        return
    event, name = match.group(1), match.group(2)
    states = doc.index.states
    path = next((p for p, s in states.items() if _same_place(s.node.span, diagnostic.span)), None)
    if path is None:
        path = doc.index.resolve_state(name)
    if path is None or path not in states:
        return
    where = f"'{path}'" if path else "the root"
    for reason in plausible_reasons(doc, event, path):
        yield CodeAction(
            title=f"Reject {event} in {where} ({reason})",
            edits=(_add_entry(doc, states[path].node, "reject", f"{event}: {reason}"),),
            fixes=diagnostic.slug,
        )


def plausible_reasons(doc: ChartDocument, event: str, path: str) -> tuple[str, ...]:
    """The reason codes a new `reject` entry for `event` in state `path` may give, each a
    quick fix of its own (which is right is the author's call, not a guess of ours): the
    reasons the chart gives `event` elsewhere (most used first), those `path` and its
    ancestors give other events, then `NOT_IN_<STATE>` and `NOT_ALLOWED`. At most
    `MAX_REASON_CHOICES`."""
    for_event: Counter[str] = Counter()
    for_state: list[str] = []
    lineage = {path, *_ancestors(path)}
    for state, info in doc.index.states.items():
        for key, value in _items(info.node.get("reject")):
            reason = text(value)
            if reason is None:
                continue
            if key.value == event:
                for_event[reason] += 1
            elif state in lineage:
                for_state.append(reason)
    standard = ["NOT_ALLOWED"]
    if path:
        code = re.sub(r"[^A-Z0-9]+", "_", doc.index.states[path].name.upper()).strip("_")
        if code:
            standard.insert(0, DEFAULT_REASON_PREFIX + code)
    ranked = [reason for reason, _ in for_event.most_common()] + for_state + standard
    return tuple(dict.fromkeys(ranked))[:MAX_REASON_CHOICES]


def _ancestors(path: str) -> list[str]:
    parts = path.split(".")
    return [".".join(parts[:i]) for i in range(len(parts))]


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
