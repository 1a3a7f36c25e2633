"""Every declaration and every reference of a chart document, with the range of its name.

The index is read from the positioned YAML tree (`compiler/source`), not from
the IR, so that a document the compiler refuses (an unknown target, a schema
error) still has names to navigate; the IR adds what only compiling knows
(the events a state answers) where there is one. State references resolve as
the compiler resolves them: a target (and a history `default:`) from its source
state outward, then as a dotted suffix of a path (`StateIndex`), and `initial`
relative to its state.
"""

from __future__ import annotations

import ast
import re

from statekit.compiler.expressions.durations import find_durations
from statekit.compiler.model.declarations import mapping_items, scalar_list, text
from statekit.compiler.source.loader import load_yaml
from statekit.compiler.source.nodes import MappingNode, Node, ScalarNode, SequenceNode
from statekit.lsp.line_map import LineMap
from statekit.lsp.named_expressions import bare_name, named_uses
from statekit.lsp.names import (
    FULL_PATH_ROLES,
    SUFFIX_ROLES,
    Declaration,
    Index,
    Kind,
    Reference,
    Role,
    StateInfo,
    suffix_table,
)
from statekit.lsp.records import Position, Range
from statekit.lsp.timer_names import (
    TIMER_EVENT,
    race_side_references,
    resolve_timer,
    resolve_timer_label,
    timer_references,
    timer_sites,
)

__all__ = [
    "DELAY_LITERAL",
    "FULL_PATH_ROLES",
    "SUFFIX_ROLES",
    "Declaration",
    "Index",
    "Kind",
    "LineMap",
    "Reference",
    "Role",
    "StateInfo",
    "build_index",
    "suffix_table",
]

DELAY_LITERAL = re.compile(r"(\d+(d|h|m|s|ms))+")
"""A delay literal's shape (`1h30m`); any other `delay:` value is an expression."""


_ACTIVE = re.compile(r"""active\s*\(\s*(['"])""")
_FIELD = r"\b{base}\s*\.\s*({name})\b"


class _Builder:
    def __init__(self, source: str, root: MappingNode) -> None:
        self.source = source
        self.lines = LineMap(source)
        self.index = Index(text=source, root=root)
        self._pending_guards: list[tuple[str, Node]] = []

    # ---- names ----------------------------------------------------------------------
    def name_range(self, node: ScalarNode) -> tuple[Range, bool]:
        whole = self.lines.range_of(node.span)
        value = "" if node.value is None else str(node.value)
        if node.span.line != node.span.end_line:
            return whole, False
        raw = self.lines.slice(whole, self.source)
        if raw == value:
            return whole, True
        if len(raw) == len(value) + 2 and raw[0] in "'\"" and raw[-1] == raw[0]:
            start = Position(whole.start.line, whole.start.character + 1)
            end = Position(whole.end.line, whole.end.character - 1)
            return Range(start, end), True
        return whole, False

    def declare(self, kind: Kind, key: str, name_node: ScalarNode, body: Node) -> None:
        rng, _ = self.name_range(name_node)
        whole = Range(rng.start, self.lines.range_of(body.span).end)
        self.index.declarations.append(
            Declaration(
                kind=kind, key=key, name=str(name_node.value), range=rng, node=body, whole=whole
            )
        )

    def refer(
        self,
        kind: Kind,
        role: Role,
        node: ScalarNode,
        *,
        scope: str = "",
        events: tuple[str, ...] = (),
    ) -> None:
        if node.value is None:
            return
        rng, precise = self.name_range(node)
        self.index.references.append(
            Reference(
                kind=kind,
                role=role,
                text=str(node.value),
                key=None,
                range=rng,
                precise=precise,
                scope=scope,
                events=events,
            )
        )

    # ---- the walk --------------------------------------------------------------------
    def build(self) -> Index:
        root = self.index.root
        assert root is not None
        for key, spec in mapping_items(root.get("context")):
            self.declare(Kind.CONTEXT, str(key.value), key, spec)
        for key, fields in mapping_items(root.get("events")):
            self.declare(Kind.EVENT, str(key.value), key, fields)
            for fkey, spec in mapping_items(fields):
                self.declare(Kind.PAYLOAD, f"{key.value}.{fkey.value}", fkey, spec)
        for key, body in mapping_items(root.get("guards")):
            self.declare(Kind.GUARD, str(key.value), key, body)
            self.index.guard_events.setdefault(str(key.value), set())
        for section, kind in (("define", Kind.DEFINITION), ("tables", Kind.TABLE)):
            for key, body in mapping_items(root.get(section)):
                self.declare(kind, str(key.value), key, body)
        for _key, body in mapping_items(root.get("define")):
            self._expression(body, ())
        self._state(root, "", None, None)
        for key, body in mapping_items(root.get("guards")):
            expr = body.get("if") if isinstance(body, MappingNode) else body
            events = tuple(sorted(self.index.guard_events.get(str(key.value), set())))
            if isinstance(expr, ScalarNode):
                self._expression(expr, events)
            if isinstance(body, MappingNode):
                self._reason(body.get("else"))
        for key, body in mapping_items(root.get("invariants")):
            self.declare(Kind.INVARIANT, str(key.value), key, body)
            if isinstance(body, MappingNode):
                for role in (Role.WHEN, Role.REQUIRE, Role.FORBID):
                    for ref in scalar_list(body.get(role.value)):
                        self.refer(Kind.STATE, role, ref)
                assertion = body.get("assert")
                if isinstance(assertion, ScalarNode):
                    self._expression(assertion, ())
        self._concurrency(root)
        self._resolve()
        return self.index

    def _concurrency(self, root: MappingNode) -> None:
        """The events `producers:` lists (a list, or a producer mapping's `events`) and the
        events and state `races:` entries name (each side of `events` and `precedes` a name
        or a list; `"*"` and a timer event, `after(15m)@processing`, are no reference)."""
        for _producer, spec in mapping_items(root.get("producers")):
            events = spec.get("events") if isinstance(spec, MappingNode) else spec
            for ref in scalar_list(events):
                self.refer(Kind.EVENT, Role.PRODUCER, ref)
        for _race, body in mapping_items(root.get("races")):
            if isinstance(body, MappingNode):
                for role, ref in race_side_references(body):
                    name = str(ref.value)
                    if name != "*" and not TIMER_EVENT.fullmatch(name):  # a timer's: timer_names
                        self.refer(Kind.EVENT, role, ref)
                for ref in scalar_list(body.get("in")):
                    self.refer(Kind.STATE, Role.RACE_IN, ref)
        for kind, role, ref in timer_references(root):
            self.refer(kind, role, ref)

    def _state(
        self, node: MappingNode, path: str, parent: str | None, key: ScalarNode | None
    ) -> None:
        children: list[str] = []
        for child_key, child in mapping_items(node.get("states")):
            if isinstance(child, MappingNode):
                name = str(child_key.value)
                children.append(f"{path}.{name}" if path else name)
        self.index.states[path] = StateInfo(
            path=path,
            name=path.rsplit(".", 1)[-1],
            parent=parent,
            node=node,
            key_range=None if key is None else self.name_range(key)[0],
            children=tuple(children),
            history=node.get("history") is not None,
        )
        if key is not None:
            self.declare(Kind.STATE, path, key, node)
        for child_key, child in mapping_items(node.get("states")):
            if isinstance(child, MappingNode):
                name = str(child_key.value)
                self._state(child, f"{path}.{name}" if path else name, path, child_key)
        initial = node.get("initial")
        if isinstance(initial, ScalarNode) and node.get("states") is not None:
            self.refer(Kind.STATE, Role.INITIAL, initial, scope=path)
        for ref in scalar_list(node.get("default")):
            self.refer(Kind.STATE, Role.DEFAULT, ref, scope=path)
        for event_key, value in mapping_items(node.get("on")):
            self.refer(Kind.EVENT, Role.ON, event_key)
            for alternative in _alternatives(value):
                self._transition(alternative, (str(event_key.value),), path)
        self._timers(node.get("after"), path)
        for site in timer_sites(node.get("after"), path):
            self.declare(Kind.TIMER, site.key, site.name_node, site.body)
        for keyword in ("always", "done"):
            for alternative in _alternatives(node.get(keyword)):
                self._transition(alternative, (), path)
        for keyword in ("entry", "exit"):
            self._effects(node.get(keyword), (), path)
        for ref in scalar_list(node.get("already")):
            self.refer(Kind.EVENT, Role.ALREADY, ref)
        for event_key, reason in mapping_items(node.get("reject")):
            if event_key.value != "*":
                self.refer(Kind.EVENT, Role.REJECT, event_key)
            self._reason(reason)

    def _timers(self, node: Node | None, path: str) -> None:
        """`after:`: delay literal → transition(s), or timer mappings whose `delay:`/`at:`
        may be expressions over `ctx` (a timer's transitions see no event)."""
        for _delay, value in mapping_items(node):
            for alternative in _alternatives(value):
                self._transition(alternative, (), path)
        if isinstance(node, SequenceNode):
            for item in node.items:
                if not isinstance(item, MappingNode):
                    continue
                for keyword in ("delay", "at"):
                    when = item.get(keyword)
                    if isinstance(when, ScalarNode) and not DELAY_LITERAL.fullmatch(
                        str(when.value)
                    ):
                        self._expression(when, ())
                self._transition(item, (), path)

    def _transition(self, node: Node, events: tuple[str, ...], source: str) -> None:
        if isinstance(node, ScalarNode):
            self.refer(Kind.STATE, Role.TARGET, node, scope=source)
            return
        if not isinstance(node, MappingNode):
            return
        for ref in scalar_list(node.get("to")):
            self.refer(Kind.STATE, Role.TARGET, ref, scope=source)
        for ref in scalar_list(node.get("guard")):
            self.refer(Kind.GUARD, Role.GUARD, ref, events=events)
            if ref.value is not None:
                self.index.guard_events.setdefault(str(ref.value), set()).update(events)
        condition = node.get("if")
        if isinstance(condition, ScalarNode):
            self._expression(condition, events)
        self._reason(node.get("else"))
        self._effects(node.get("do"), events, source)

    def _effects(self, node: Node | None, events: tuple[str, ...], scope: str) -> None:
        if not isinstance(node, SequenceNode):
            return
        for item in node.items:
            for kind, value in mapping_items(item):
                if kind.value == "assign":
                    for target, expr in mapping_items(value):
                        self.refer(Kind.CONTEXT, Role.ASSIGN, target)
                        self._expression(expr, events)
                elif kind.value == "emit" and isinstance(value, MappingNode):
                    for _, expr in mapping_items(value.get("payload")):
                        self._expression(expr, events)
                elif kind.value in ("pause", "resume") and isinstance(value, ScalarNode):
                    self.refer(Kind.TIMER, Role.TIMER_CONTROL, value, scope=scope)
                elif kind.value in ("raise", "send"):  # a sent event is referred to alike
                    name = value.get("event") if isinstance(value, MappingNode) else value
                    if isinstance(name, ScalarNode):
                        self.refer(Kind.EVENT, Role.RAISE, name)
                    if isinstance(value, MappingNode):
                        for _, expr in mapping_items(value.get("payload")):
                            self._expression(expr, events)
                        for keyword in ("delay", "at"):
                            if (timing := value.get(keyword)) is not None:
                                self._expression(timing, events)

    def _reason(self, node: Node | None) -> None:
        reason = text(node)
        if reason is not None and node is not None:
            self.index.reasons.setdefault(reason, []).append(self.lines.range_of(node.span))

    def _expression(self, node: Node, events: tuple[str, ...]) -> None:
        if not isinstance(node, ScalarNode) or not isinstance(node.value, str):
            return
        self.index.expressions.append(self.lines.range_of(node.span))
        try:  # duration literals (`now + 15m`) replaced as the compiler does, columns kept
            tree = ast.parse(find_durations(node.value.strip()).text, mode="eval")
        except (SyntaxError, ValueError):
            return
        found: list[tuple[tuple[int, int], Kind, Role, str, str]] = named_uses(tree)
        for sub in ast.walk(tree):
            where = (getattr(sub, "lineno", 0), getattr(sub, "col_offset", 0))
            if (
                isinstance(sub, ast.Call)
                and isinstance(sub.func, ast.Name)
                and sub.func.id == "active"
                and len(sub.args) == 1
                and isinstance(sub.args[0], ast.Constant)
                and isinstance(sub.args[0].value, str)
            ):
                found.append((where, Kind.STATE, Role.ACTIVE, sub.args[0].value, "active"))
            elif (
                isinstance(sub, ast.Attribute)
                and isinstance(sub.value, ast.Name)
                and sub.value.id in ("ctx", "event")
            ):
                if sub.value.id == "ctx":
                    found.append((where, Kind.CONTEXT, Role.CTX, sub.attr, "ctx"))
                else:
                    found.append((where, Kind.PAYLOAD, Role.EVENT_FIELD, sub.attr, "event"))
        whole = self.lines.range_of(node.span)
        raw_start = self.lines.offset(whole.start)
        raw = self.source[raw_start : self.lines.offset(whole.end)]
        cursor = 0
        for _, kind, role, name, base in sorted(found, key=lambda f: f[0]):
            start = end = -1
            if base == "active":
                match = _ACTIVE.search(raw, cursor)
                if match is not None and raw.startswith(name + match.group(1), match.end()):
                    start, end = match.end(), match.end() + len(name)
            elif base == "":
                match = bare_name(name).search(raw, cursor)
                if match is not None:
                    start, end = match.start(1), match.end(1)
            else:
                match = re.compile(_FIELD.format(base=base, name=re.escape(name))).search(
                    raw, cursor
                )
                if match is not None:
                    start, end = match.start(1), match.end(1)
            precise = start >= 0
            if precise:
                cursor = end
                rng = Range(
                    self.lines.position(raw_start + start), self.lines.position(raw_start + end)
                )
            else:
                rng = whole
            self.index.references.append(
                Reference(
                    kind=kind,
                    role=role,
                    text=name,
                    key=None,
                    range=rng,
                    precise=precise,
                    events=events,
                )
            )

    # ---- resolution ------------------------------------------------------------------
    def _resolve(self) -> None:
        index = self.index
        index.suffixes = suffix_table(index.states)
        events = index.declared(Kind.EVENT)
        guards = index.declared(Kind.GUARD)
        context = index.declared(Kind.CONTEXT)
        payload = index.declared(Kind.PAYLOAD)
        resolved: list[Reference] = []
        for ref in index.references:
            key: str | None = None
            if ref.kind is Kind.STATE:
                key = index.resolve_reference(ref.text, ref.role, ref.scope)
            elif ref.kind is Kind.EVENT:
                key = ref.text if ref.text in events else None
            elif ref.kind is Kind.GUARD:
                key = ref.text if ref.text in guards else None
            elif ref.kind is Kind.CONTEXT:
                key = ref.text if ref.text in context else None
            elif ref.kind is Kind.TIMER and ref.role is Role.TIMER_CONTROL:
                key = resolve_timer_label(index, ref.text, ref.scope)
            elif ref.kind is Kind.TIMER:
                key = resolve_timer(index, ref.text)
            elif ref.kind in (Kind.DEFINITION, Kind.TABLE):
                key = ref.text if index.declaration_of(ref.kind, ref.text) else None
            else:
                key = next(
                    (f"{e}.{ref.text}" for e in ref.events if f"{e}.{ref.text}" in payload), None
                )
            resolved.append(
                Reference(
                    kind=ref.kind,
                    role=ref.role,
                    text=ref.text,
                    key=key,
                    range=ref.range,
                    precise=ref.precise,
                    scope=ref.scope,
                    events=ref.events,
                )
            )
        index.references = sorted(resolved, key=lambda r: r.range)


def _alternatives(node: Node | None) -> tuple[Node, ...]:
    if node is None:
        return ()
    if isinstance(node, SequenceNode):
        return node.items
    return (node,)


def build_index(source: str) -> Index:
    """The index of a document's text; an empty one when the text is not a YAML mapping."""
    root, problems = load_yaml(source, "<document>")
    if not isinstance(root, MappingNode) or any(p.severity.value == "error" for p in problems):
        return Index(text=source, root=None)
    return _Builder(source, root).build()
