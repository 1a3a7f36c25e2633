"""Hover text: what a state, event, guard or field is, in Markdown (every name and
description of the chart through `statekit.compiler.markdown_text`)."""

from __future__ import annotations

from statekit.compiler.ir import TransitionKind
from statekit.compiler.markdown_text import markdown_code as code
from statekit.compiler.markdown_text import markdown_text
from statekit.compiler.model.declarations import text as scalar_text
from statekit.compiler.model.timers import timer_trigger
from statekit.compiler.source.nodes import MappingNode, Node, ScalarNode, SequenceNode
from statekit.lsp.document import ChartDocument
from statekit.lsp.index import Declaration, Kind
from statekit.lsp.named_hover import describe_definition, describe_table


def describe(doc: ChartDocument, kind: Kind, key: str) -> str | None:
    """Markdown describing a declared name (hover text and completion documentation)."""
    decl = doc.declaration(kind, key)
    if kind is Kind.STATE:
        return _describe_state(doc, key)
    if decl is None:
        return None
    if kind is Kind.GUARD:
        return _describe_guard(decl)
    if kind is Kind.EVENT:
        return _describe_event(doc, decl)
    if kind in (Kind.CONTEXT, Kind.PAYLOAD):
        title = "context field" if kind is Kind.CONTEXT else "payload field"
        name = f"ctx.{key}" if kind is Kind.CONTEXT else key
        lines = [f"**{title}** {code(name)}: {markdown_text(field_type(decl.node))}"]
        default = _default(decl.node)
        if default is not None:
            lines.append(f"default: {code(default)}")
        description = _description(decl.node)
        if description:
            lines += ["", description]
        return "\n".join(lines)
    if kind is Kind.TIMER:
        return _describe_timer(doc, decl)
    if kind is Kind.DEFINITION:
        return describe_definition(doc, decl)
    if kind is Kind.TABLE:
        return describe_table(doc, decl)
    if kind is Kind.INVARIANT:
        description = _description(decl.node)
        return f"**invariant** {code(key)}" + (f"\n\n{description}" if description else "")
    return None


def _describe_state(doc: ChartDocument, path: str) -> str | None:
    info = doc.index.states.get(path)
    if info is None:
        return None
    node = info.node
    kind = (
        "history"
        if info.history
        else "parallel"
        if _true(node.get("parallel"))
        else "final"
        if _true(node.get("final"))
        else "compound"
        if info.children
        else "atomic"
    )
    lines = [
        f"**state** {code(path)} ({kind})",
        f"reference: {code(doc.index.shortest_reference(path))}",
    ]
    description = _description(node)
    if description:
        lines += ["", description]
    answers = _answers(doc, path)
    for label, names in answers:
        if names:
            lines.append(f"{label}: {markdown_text(', '.join(names))}")
    return "\n".join(lines)


def _answers(doc: ChartDocument, path: str) -> list[tuple[str, list[str]]]:
    """The events a state answers: by its own transition, `already` and `reject`, and
    (from the compiled tables) by those of its ancestors while it is active."""
    chart = doc.chart
    if chart is not None and path in chart.path_index:
        state_id = chart.path_index[path]
        state = chart.states[state_id]
        events = [chart.transitions[t] for t in state.transitions]  # not its own `done:`
        on = list(
            dict.fromkeys(t.event for t in events if t.event and t.kind is TransitionKind.EVENT)
        )
        already = [c.event for c in state.already]
        reject = [f"{c.event} → {c.reason}" for c in state.reject]
        inherited_on = [
            f"{event} ({chart.states[chart.transitions[ids[0]].source].path or 'the root'})"
            for event, ids in chart.candidates[state_id].items()
            if event not in on
        ]
        inherited = [
            f"{c.event} → {c.reason or 'ALREADY_APPLIED'} ({chart.states[a].path or 'the root'})"
            for a in state.ancestors
            for c in chart.states[a].already + chart.states[a].reject
        ]
        return [
            ("transitions on", on),
            ("already", already),
            ("reject", reject),
            ("transitions of ancestors on", inherited_on),
            ("already/reject of ancestors", inherited),
        ]
    else:
        node = doc.index.states[path].node
        on = list(_keys(node.get("on")))
        already = [str(n.value) for n in _scalars(node.get("already"))]
        reject = [
            f"{k.value} → {scalar_text(v) or 'REJECTED'}" for k, v in _items(node.get("reject"))
        ]
    return [("transitions on", on), ("already", already), ("reject", reject)]


def _describe_timer(doc: ChartDocument, decl: Declaration) -> str:
    """A timer: its name, state, delay or deadline and targets (from the compiled chart
    when there is one, else the name and state alone)."""
    state = decl.key.rsplit(")@", 1)[-1]
    lines = [
        f"**timer** {code(decl.key)}",
        f"state: {code(state) if state else 'the root'}",
    ]
    chart = doc.chart
    timer = None if chart is None else chart.timer(decl.key)
    if chart is not None and timer is not None:
        lines.append(f"fires: {code(timer_trigger(timer, state))}")
        targets = [
            ", ".join(chart.states[t].path for t in transition.targets) or "(no target)"
            for transition in chart.transitions
            if transition.event == decl.key
        ]
        if targets:
            lines.append(f"to: {markdown_text(' | '.join(targets))}")
    description = _description(decl.node)
    if description:
        lines += ["", description]
    return "\n".join(lines)


def _describe_guard(decl: Declaration) -> str:
    node = decl.node
    expression = node if isinstance(node, ScalarNode) else _get(node, "if")
    lines = [f"**guard** {code(decl.key)}"]
    if isinstance(expression, ScalarNode) and expression.value is not None:
        lines.append(f"if: {code(str(expression.value))}")
    reason = scalar_text(_get(node, "else")) or "GUARD_FAILED"
    lines.append(f"else: {code(reason)}")
    description = _description(node)
    if description:
        lines += ["", description]
    return "\n".join(lines)


def _describe_event(doc: ChartDocument, decl: Declaration) -> str:
    lines = [f"**event** {code(decl.key)}"]
    fields = [d for d in doc.index.declarations if d.kind is Kind.PAYLOAD]
    own = [d for d in fields if d.key.startswith(decl.key + ".")]
    if not own:
        lines.append("no payload")
    for d in own:
        description = _description(d.node)
        suffix = f": {description}" if description else ""
        lines.append(f"- {code(d.name)} ({markdown_text(field_type(d.node))}){suffix}")
    return "\n".join(lines)


def field_type(node: Node) -> str:
    """A field spec's type in words (`integer`, `string or null`, `one of 'a', 'b'`)."""
    if isinstance(node, ScalarNode):
        return str(node.value)
    if not isinstance(node, MappingNode):
        return "unknown"
    enum_node = node.get("enum")
    if isinstance(enum_node, SequenceNode):
        base = "one of " + ", ".join(
            repr(i.value) for i in enum_node.items if isinstance(i, ScalarNode)
        )
    else:
        base = scalar_text(node.get("type")) or "unknown"
    return f"{base} or null" if _true(node.get("nullable")) else base


def _default(node: Node) -> str | None:
    if isinstance(node, ScalarNode):
        return None
    default = _get(node, "default")
    if not isinstance(default, ScalarNode):
        return None
    value = default.value
    return "null" if value is None else repr(value) if isinstance(value, str) else str(value)


def _description(node: Node) -> str | None:
    """The node's description as Markdown that shows its text (`markdown_text`)."""
    return markdown_text(scalar_text(_get(node, "description"))) or None


def _get(node: Node | None, key: str) -> Node | None:
    return node.get(key) if isinstance(node, MappingNode) else None


def _true(node: Node | None) -> bool:
    return isinstance(node, ScalarNode) and node.value is True


def _keys(node: Node | None) -> list[str]:
    return [str(k.value) for k, _ in _items(node)]


def _items(node: Node | None) -> tuple[tuple[ScalarNode, Node], ...]:
    return node.items if isinstance(node, MappingNode) else ()


def _scalars(node: Node | None) -> list[ScalarNode]:
    if isinstance(node, ScalarNode):
        return [node]
    if isinstance(node, SequenceNode):
        return [i for i in node.items if isinstance(i, ScalarNode)]
    return []
