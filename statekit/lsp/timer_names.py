"""Timers in a chart document: the `after` entries that declare them and the places that
name them (a timer's name is its timer event's, `after(grace)@entitlement.grace`).

A timer is declared by its `after` entry: the `id:` value of a named one, else the
delay literal key (mapping form) or the `delay:` literal (list form), or the `delay`/`at`
key of an expression (whose text names context fields); its key is
the name the compiler gives it (`compiler.model.timers.timer_event_name`). It is named
by a `races:` entry's `events`, by a `pause:`/`resume:` effect (its `id:` alone, see
`resolve_timer_label`), and by a migration's `timers:` entries: their keys name
timers of the version migrated from (the same name when this version kept it), their
`to:` a timer of this version. A name resolves exactly, or with its state written as a
dotted suffix of the path (as a race's `in:` is).
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass

from statekit.compiler.ir import TimerKind
from statekit.compiler.model.declarations import mapping_items, scalar_list
from statekit.compiler.model.timers import parse_delay, timer_event_name
from statekit.compiler.source.nodes import MappingNode, Node, ScalarNode, SequenceNode
from statekit.lsp.names import Index, Kind, Role

TIMER_ID = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
"""A timer's `id:` (the schema's `timerId`)."""
TIMER_EVENT = re.compile(r"(after|at)\(.+\)@\S*")
"""A timer event's name, as the schema's `timerEventName` has it."""
_SPLIT = re.compile(r"((?:after|at)\(.+\))@(\S*)")


@dataclass(frozen=True, slots=True)
class TimerSite:
    """One timer an `after:` declares: its name (the key), the node whose text declares
    it, the entry's body (a transition or list item) and its `id:` when named."""

    key: str
    name_node: ScalarNode
    body: Node
    label: str | None


def timer_sites(after: Node | None, path: str) -> list[TimerSite]:
    """The timers a state's `after:` declares (first entry of each name), in order."""
    sites: dict[str, TimerSite] = {}
    for key, value in mapping_items(after):
        literal = parse_delay(str(key.value))
        if literal is not None:
            name = timer_event_name(TimerKind.AFTER, literal.normalised, path)
            sites.setdefault(name, TimerSite(name, key, value, None))
    items = after.items if isinstance(after, SequenceNode) else ()
    for item in items:
        if not isinstance(item, MappingNode):
            continue
        id_node, at, delay = item.get("id"), item.get("at"), item.get("delay")
        when = at if at is not None else delay
        if not isinstance(when, ScalarNode) or when.value is None:
            continue
        literal = parse_delay(str(when.value)) if at is None else None
        kind = TimerKind.AT if at is not None else TimerKind.AFTER
        if isinstance(id_node, ScalarNode) and id_node.value is not None:
            label = str(id_node.value)
            name = timer_event_name(kind, label, path)
            sites.setdefault(name, TimerSite(name, id_node, item, label))
            continue
        if literal is not None:
            name = timer_event_name(kind, literal.normalised, path)
            sites.setdefault(name, TimerSite(name, when, item, None))
            continue
        kind = TimerKind.AT if at is not None else TimerKind.DELAY
        name = timer_event_name(kind, str(when.value), path)
        word = "at" if at is not None else "delay"  # the expression holds other names
        key = next(k for k, _ in item.items if k.value == word)
        sites.setdefault(name, TimerSite(name, key, item, None))
    return list(sites.values())


def race_side_references(body: MappingNode) -> Iterator[tuple[Role, ScalarNode]]:
    """Each name a `races:` entry's `events` and `precedes` sides write (a side is a name
    or a list of names), with its role."""
    for key, role in (("events", Role.RACE_EVENTS), ("precedes", Role.PRECEDES)):
        sides = body.get(key)
        for side in sides.items if isinstance(sides, SequenceNode) else ():
            for ref in scalar_list(side):
                yield role, ref


def timer_references(root: MappingNode) -> list[tuple[Kind, Role, ScalarNode]]:
    """The timer events `races:` entries name, and the timers and states a migration
    names (`timers:` keys and `to:`, `enter:` and `rename:` targets), in document order."""
    found: list[tuple[Kind, Role, ScalarNode]] = []
    for _race, body in mapping_items(root.get("races")):
        if isinstance(body, MappingNode):
            for role, ref in race_side_references(body):
                if TIMER_EVENT.fullmatch(str(ref.value)):
                    found.append((Kind.TIMER, role, ref))
    migrations = root.get("migrations")
    for item in migrations.items if isinstance(migrations, SequenceNode) else ():
        if not isinstance(item, MappingNode):
            continue
        for key, value in mapping_items(item.get("timers")):
            found.append((Kind.TIMER, Role.MIGRATION_TIMER, key))
            to = value.get("to") if isinstance(value, MappingNode) else None
            if isinstance(to, ScalarNode):
                found.append((Kind.TIMER, Role.MIGRATION_TO, to))
        for _old, new in mapping_items(item.get("rename")):
            if isinstance(new, ScalarNode):
                found.append((Kind.STATE, Role.MIGRATION_STATE, new))
        for key, value in mapping_items(item.get("enter")):
            found.append((Kind.STATE, Role.MIGRATION_STATE, key))
            if isinstance(value, ScalarNode):
                found.append((Kind.STATE, Role.MIGRATION_STATE, value))
    return found


def send_ids(node: Node | None) -> list[str]:
    """The `id:` of every `send` effect under `node`, in document order, each once (what
    a `cancel:` names)."""
    found: dict[str, None] = {}
    if isinstance(node, MappingNode):
        for key, value in node.items:
            if key.value == "send" and isinstance(value, MappingNode):
                named = value.get("id")
                if isinstance(named, ScalarNode) and named.value is not None:
                    found.setdefault(str(named.value))
            found.update(dict.fromkeys(send_ids(value)))
    elif isinstance(node, SequenceNode):
        for item in node.items:
            found.update(dict.fromkeys(send_ids(item)))
    return list(found)


def resolve_timer(index: Index, name: str) -> str | None:
    """The declared timer `name` names (exactly, or with its state as a dotted suffix)."""
    timers = index.declared(Kind.TIMER)
    if name in timers:
        return name
    match = _SPLIT.fullmatch(name)
    if match is None:
        return None
    path = index.resolve_state(match.group(2)) if match.group(2) else ""
    if path is None:
        return None
    full = f"{match.group(1)}@{path}"
    return full if full in timers else None


def label_span(name: str) -> tuple[int, int] | None:
    """Where a named timer's id sits in its timer event's name (`after(<id>)@…`)."""
    match = _SPLIT.fullmatch(name)
    if match is None:
        return None
    start = match.group(1).index("(") + 1
    return start, len(match.group(1)) - 1


def timer_labels(index: Index) -> dict[str, str]:
    """Each named timer's `id:` → its key (`sla` → `after(sla)@sla.clock`), the first
    declared of each id."""
    found: dict[str, str] = {}
    for key in index.declared(Kind.TIMER):
        span = label_span(key)
        if span is not None and key.startswith(("after(", "at(")):
            label = key[span[0] : span[1]]
            if TIMER_ID.fullmatch(label):
                found.setdefault(label, key)
    return found


def resolve_timer_label(index: Index, label: str, scope: str) -> str | None:
    """The named timer a `pause:`/`resume:` in state `scope` names by its `id:`: the one
    owned by `scope` or its nearest ancestor, else the first declared; None for a name no
    `after` timer has (a delayed send's id)."""
    keys = [
        key
        for key in index.declared(Kind.TIMER)
        if (span := label_span(key)) is not None and key[span[0] : span[1]] == label
    ]
    if not keys:
        return None
    owners = {key.rsplit(")@", 1)[1]: key for key in keys}
    path = scope
    while True:
        if path in owners:
            return owners[path]
        if not path:
            return keys[0]
        path = path.rpartition(".")[0]


def control_names(index: Index) -> list[tuple[str, str]]:
    """What a `pause:`/`resume:` may name, each once: (name, what it is), the named
    `after` timers first, then the delayed sends' ids."""
    found = {label: f"the timer {key}" for label, key in timer_labels(index).items()}
    for name in send_ids(index.root):
        found.setdefault(name, "the id of a delayed send")
    return list(found.items())
