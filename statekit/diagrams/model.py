"""The diagram model: a small frozen picture of a compiled chart, made for drawing and docs.

`extract(chart)` reads the IR once and keeps only what renderers need, as text:
state names and kinds, the tree, transitions with their guards and effects
already summarised, the declarations and the invariants. Renderers
(`statekit.diagrams.dot`, `.mermaid`, `.markdown`) are pure functions over it.
Every collection is in document order (ascending state and transition ids),
so output built from the model is deterministic.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass

from statekit.compiler.expressions.expression import Expression
from statekit.compiler.invariant_ir import ExpressionInvariant, Invariant
from statekit.compiler.invocations import MessageTarget, ToAddress, ToChild, ToParent
from statekit.compiler.ir import (
    Assign,
    Cancel,
    CompiledChart,
    Conditional,
    Effect,
    Emit,
    FieldDecl,
    Foreach,
    HistoryKind,
    Pause,
    Raise,
    Resume,
    Send,
    StateKind,
    StateNode,
    Transition,
    TransitionKind,
)
from statekit.compiler.model.state_index import StateIndex
from statekit.compiler.model.timers import format_delay, timer_trigger
from statekit.diagrams.invocations import DInvocation, diagram_invocations


class EffectDetail(enum.Enum):
    """How much of the effects a diagram shows (`--effects`): `none`; `short`, summarised
    (`assign 2; emit InvoiceRequested`: how many fields are assigned, which events go
    out); `full`, every effect with the fields it assigns."""

    NONE = "none"
    SHORT = "short"
    FULL = "full"


@dataclass(frozen=True, slots=True)
class EffectText:
    """One effect as text: `short` for diagram labels, `full` for tables; `assigned` counts
    the fields an `assign` sets (0 for any other effect)."""

    short: str
    full: str
    assigned: int = 0


def effects_label(effects: tuple[EffectText, ...], detail: EffectDetail) -> str:
    """Effects as a diagram label shows them at `detail`: the `assign`s of a run summed into
    one `assign N` when summarised, the others by name; "" for `none`."""
    if detail is EffectDetail.NONE:
        return ""
    if detail is EffectDetail.FULL:
        return "; ".join(e.short for e in effects)
    parts: list[str] = []
    assigned = 0
    for effect in effects:
        if effect.assigned:
            assigned += effect.assigned
            continue
        if assigned:
            parts.append(f"assign {assigned}")
            assigned = 0
        parts.append(effect.short)
    if assigned:
        parts.append(f"assign {assigned}")
    return "; ".join(parts)


@dataclass(frozen=True, slots=True)
class GuardText:
    """One condition of a transition: a guard name or an inline `if` source, and its reason."""

    text: str
    reason: str
    inline: bool


@dataclass(frozen=True, slots=True)
class DState:
    """A state as drawn. `children` include history pseudo-states; `initial` holds the
    default targets (of a compound state, or of a history state when none is recorded).
    `ref` is the shortest unique reference, as a chart author would write it."""

    id: int
    name: str
    path: str
    ref: str
    kind: StateKind
    history: HistoryKind | None
    parent: int | None
    children: tuple[int, ...]
    last_descendant: int
    region: bool
    initial: tuple[int, ...]
    description: str | None
    entry: tuple[EffectText, ...]
    exit: tuple[EffectText, ...]
    already: tuple[str, ...]
    reject: tuple[tuple[str, str], ...]
    transitions: tuple[int, ...]
    line: int

    @property
    def is_composite(self) -> bool:
        """Compound or parallel: drawn as a cluster (or collapsed into one node)."""
        return self.kind in (StateKind.COMPOUND, StateKind.PARALLEL)

    def contains(self, other: int) -> bool:
        """Whether `other` is a proper descendant."""
        return self.id < other <= self.last_descendant


@dataclass(frozen=True, slots=True)
class DTransition:
    """A transition as drawn: `trigger` is the event, `always`, `done`, or for a timer's
    transition `after 15m` / `at <expression>` (`timer` is then the timer event's name)."""

    id: int
    source: int
    targets: tuple[int, ...]
    kind: TransitionKind
    trigger: str
    guards: tuple[GuardText, ...]
    effects: tuple[EffectText, ...]
    description: str | None
    line: int
    timer: str | None = None

    @property
    def guarded(self) -> bool:
        """Whether the transition can fail to fire."""
        return bool(self.guards)

    def guard_text(self) -> str:
        """The conditions joined with `and` (empty when unguarded)."""
        return " and ".join(g.text for g in self.guards)

    def effects_text(self, full: bool = False) -> str:
        """The effects joined with `; `."""
        return "; ".join(e.full if full else e.short for e in self.effects)

    def effects_label(self, detail: EffectDetail) -> str:
        """The effects as a diagram label shows them at `detail` (`effects_label`)."""
        return effects_label(self.effects, detail)


@dataclass(frozen=True, slots=True)
class DTimer:
    """A timer of a state: its timer event's name, owner and how it is labelled."""

    name: str
    state: int
    trigger: str


@dataclass(frozen=True, slots=True)
class DField:
    """A context or payload field: name, type, default (as text) and description."""

    name: str
    type: str
    default: str | None
    secret: bool
    description: str | None


@dataclass(frozen=True, slots=True)
class DEvent:
    """A declared event and its payload fields."""

    name: str
    fields: tuple[DField, ...]


@dataclass(frozen=True, slots=True)
class DGuard:
    """A declared guard."""

    name: str
    source: str
    reason: str
    description: str | None


@dataclass(frozen=True, slots=True)
class DInvariant:
    """An invariant as text; `static` for the state form (proven), else runtime (`assert`)."""

    name: str
    static: bool
    text: str
    description: str | None


@dataclass(frozen=True, slots=True)
class Diagram:
    """Everything the renderers draw, extracted from one compiled chart."""

    name: str
    version: int
    description: str | None
    file: str
    digest: str
    states: tuple[DState, ...]
    transitions: tuple[DTransition, ...]
    events: tuple[DEvent, ...]
    context: tuple[DField, ...]
    guards: tuple[DGuard, ...]
    invariants: tuple[DInvariant, ...]
    timers: tuple[DTimer, ...] = ()
    invocations: tuple[DInvocation, ...] = ()

    @property
    def root(self) -> DState:
        """The root state (id 0)."""
        return self.states[0]

    def invocations_of(self, state_id: int) -> tuple[DInvocation, ...]:
        """The invocations of one state, in document order."""
        return tuple(i for i in self.invocations if i.state == state_id)

    def ancestry(self, state_id: int) -> tuple[int, ...]:
        """`state_id` and its ancestors, innermost first."""
        chain = [state_id]
        parent = self.states[state_id].parent
        while parent is not None:
            chain.append(parent)
            parent = self.states[parent].parent
        return tuple(chain)

    def common_ancestor(self, a: int, b: int) -> int:
        """The innermost state that is `a` or `b` or contains both."""
        state = self.states[a]
        while not (state.id == b or state.contains(b)):
            assert state.parent is not None
            state = self.states[state.parent]
        return state.id

    def crosses_regions(self, a: int, b: int) -> bool:
        """Whether `a` and `b` lie in different regions of one parallel state."""
        common = self.common_ancestor(a, b)
        return self.states[common].kind is StateKind.PARALLEL and common not in (a, b)


def _expression(source: Expression) -> str:
    return " ".join(source.source.split())


def _effect(effect: Effect) -> EffectText:
    if isinstance(effect, Assign):
        names = ", ".join(name for name, _ in effect.assignments)
        full = ", ".join(f"{name} := {_expression(e)}" for name, e in effect.assignments)
        return EffectText(f"assign {names}", full, len(effect.assignments))
    if isinstance(effect, Emit):
        payload = ", ".join(f"{k}: {_expression(e)}" for k, e in effect.payload)
        return EffectText(
            f"emit {effect.type}", f"emit {effect.type}" + (f" {{{payload}}}" if payload else "")
        )
    if isinstance(effect, Cancel):
        return EffectText(f"cancel {effect.id}", f"cancel {effect.id}")
    if isinstance(effect, Pause | Resume):
        word = "pause" if isinstance(effect, Pause) else "resume"
        return EffectText(f"{word} {effect.name}", f"{word} {effect.name}")
    if isinstance(effect, Conditional):
        return _conditional(effect)
    if isinstance(effect, Foreach):
        inner = "; ".join(_effect(e).full for e in effect.effects) or "nothing"
        head = f"foreach {effect.item} in {_expression(effect.array)}"
        return EffectText(head, f"{head}: {inner}")
    payload = ", ".join(f"{k}: {_expression(e)}" for k, e in effect.payload)
    word = "raise" if isinstance(effect, Raise) else "send"
    full = f"{word} {effect.event}" + (f" {{{payload}}}" if payload else "")
    short = f"{word} {effect.event}"
    if isinstance(effect, Send):
        full += _send_timing(effect)
        if effect.to is not None:
            short += f" → {_send_target(effect.to, False)}"
            full += f" → {_send_target(effect.to, True)}"
    return EffectText(short, full)


def _send_target(to: MessageTarget, full: bool) -> str:
    """Where a `send` with `to:` goes, as its label shows it: `parent`, the invoke id
    of a child, or another instance's chart (in full: with the instance expression and
    the `reply:` event)."""
    if isinstance(to, ToParent):
        return "parent"
    if isinstance(to, ToChild):
        return to.invoke_id
    if isinstance(to, ToAddress):  # some member of the family, known when it runs
        return f"address {_expression(to.address)}" if full else "address"
    if not full:
        return to.chart
    reply = f", reply {to.reply}" if to.reply is not None else ""
    return f"{to.chart} ({_expression(to.instance)}){reply}"


def _conditional(effect: Conditional) -> EffectText:
    """`if ctx.total > 100` and, in full, every branch: `if c: a; elif d: b; else: c`."""
    parts = []
    for number, branch in enumerate(effect.branches):
        word = "if" if number == 0 else "elif"
        inner = "; ".join(_effect(e).full for e in branch.effects) or "nothing"
        parts.append(f"{word} {_expression(branch.check.expression)}: {inner}")
    if effect.otherwise:
        parts.append("else: " + "; ".join(_effect(e).full for e in effect.otherwise))
    return EffectText(f"if {_expression(effect.branches[0].check.expression)}", "; ".join(parts))


def _send_timing(effect: Send) -> str:
    """` after 30s`, ` after ctx.backoff_ms`, ` at ctx.deadline_ms` and ` as id` of a `send`."""
    out = ""
    if effect.delay_ms:
        out = f" after {format_delay(effect.delay_ms)}"
    elif effect.delay is not None:
        out = f" after {_expression(effect.delay)}"
    elif effect.at is not None:
        out = f" at {_expression(effect.at)}"
    if effect.id is not None:
        out += f" as {effect.id}"
    return out


def _field(decl: FieldDecl, with_default: bool) -> DField:
    default = None
    if with_default or decl.has_default:
        default = "null" if decl.default is None else repr(decl.default)
        if isinstance(decl.default, bool):
            default = str(decl.default).lower()
    return DField(decl.name, decl.type.describe(), default, decl.secret, decl.description)


def _trigger(chart: CompiledChart, transition: Transition) -> str:
    if transition.kind is TransitionKind.EVENT:
        timer = chart.timer(transition.event or "")
        if timer is not None:  # `after 15m`, not the timer event's name
            return timer_trigger(timer, chart.states[timer.state].path)
        return transition.event or ""
    return str(transition.kind.value)


def _state(chart: CompiledChart, node: StateNode, index: StateIndex) -> DState:
    initial = node.initial
    if node.kind is StateKind.HISTORY:
        parent = chart.states[node.parent] if node.parent is not None else None
        initial = node.history_default or (parent.initial if parent is not None else ())
    children = tuple(sorted((*node.children, *node.history_children)))
    parent_kind = chart.states[node.parent].kind if node.parent is not None else None
    return DState(
        id=node.id,
        name=node.name,
        path=node.path,
        ref=index.shortest_reference(node.id) if node.path else "",
        kind=node.kind,
        history=node.history,
        parent=node.parent,
        children=children,
        last_descendant=node.last_descendant,
        region=parent_kind is StateKind.PARALLEL,
        initial=initial,
        description=node.description,
        entry=tuple(_effect(e) for e in node.entry),
        exit=tuple(_effect(e) for e in node.exit),
        already=tuple(c.event for c in node.already),
        reject=tuple((c.event, c.reason or "") for c in node.reject),
        transitions=node.transitions,
        line=node.span.line,
    )


def _invariant(index: StateIndex, inv: Invariant) -> DInvariant:
    def refs(ids: tuple[int, ...]) -> str:
        return ", ".join(index.shortest_reference(i) for i in ids)

    if isinstance(inv, ExpressionInvariant):
        return DInvariant(inv.name, False, f"assert {_expression(inv.expression)}", inv.description)
    rule = [f"require {refs(inv.require)}"] if inv.require else []
    rule += [f"forbid {refs(inv.forbid)}"] if inv.forbid else []
    return DInvariant(inv.name, True, f"when {refs(inv.when)}: {', '.join(rule)}", inv.description)


def extract(chart: CompiledChart) -> Diagram:
    """The diagram model of a compiled chart (pure; reads the IR only)."""
    index = StateIndex((s.id, s.path) for s in chart.states)
    states = tuple(_state(chart, node, index) for node in chart.states)
    transitions = tuple(
        DTransition(
            id=t.id,
            source=t.source,
            targets=t.targets,
            kind=t.kind,
            trigger=_trigger(chart, t),
            timer=t.event if t.event is not None and chart.timer(t.event) else None,
            guards=tuple(
                GuardText(g.name or _expression(g.expression), g.reason, g.name is None)
                for g in t.guards
            ),
            effects=tuple(_effect(e) for e in t.effects),
            description=t.description,
            line=t.span.line,
        )
        for t in chart.transitions
    )
    return Diagram(
        name=chart.name,
        version=chart.version,
        description=chart.description,
        file=chart.file,
        digest=chart.digest,
        states=states,
        transitions=transitions,
        events=tuple(
            DEvent(e.name, tuple(_field(f, False) for f in e.fields)) for e in chart.events.values()
        ),
        context=tuple(_field(f, True) for f in chart.context.values()),
        guards=tuple(
            DGuard(g.name, " ".join(g.source.split()), g.reason, g.description)
            for g in chart.guards.values()
        ),
        invariants=tuple(_invariant(index, inv) for inv in chart.invariants),
        timers=tuple(
            DTimer(t.name, t.state, timer_trigger(t, chart.states[t.state].path))
            for t in chart.timers
        ),
        invocations=diagram_invocations(chart),
    )
