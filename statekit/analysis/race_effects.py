"""What one event's branch does to the data, and whether two orders of a pair end alike.

The exploration tracks configurations and history, not the context, so
whether "A then B" and "B then A" leave the same context, the same armed
timers and the same messages is decided from the effects each order ran
(`EffectSummary`, made once per branch), conservatively: `same_end_data`
says True only when one of two sufficient conditions holds, and names
what may differ otherwise.

- *Replayed alike*: the two orders run the same sequence of data effects
  (`assign`, `emit`, `raise`, `send`, `cancel`, `if` (with all its branches), compared by their
  expressions, not their place in the chart; an expression that reads
  `event` counts as the event whose payload it reads). The same effects
  from the same context with the same payloads give the same context,
  outbox and queue.
- *Commuting*: each event runs the same data effects in both orders, and
  neither writes a context field the other reads or writes; at most one of
  them sends an event to the instance's own queue (two would be queued in
  either order), and they arm or cancel no `send` id in common. The outbox
  then holds the same messages; their order in it follows the order of
  arrival and is no difference.

Either way no expression may test `active()` (its value depends on the
configuration it runs in, which differs between the orders). The `after`
timers compare by the last thing each order did to each state's timers
(armed, cancelled, or nothing; nothing is cancelled for a state inactive at
the start, whose timers are not armed): a timer re-armed by one order but
not the other has another due time. A timer armed in both is due at the
same time (both events arrive at one instant of the clock) when its delay is
a literal, or when the same event arms it in both orders after the same
effects and neither its `delay:`/`at:` nor those effects read a field the
other event writes. The arming counter and the generation-numbered id of an
unnamed delayed `send` are bookkeeping of the arming order, not part of the
comparison.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from collections.abc import Set as AbstractSet
from dataclasses import dataclass

from statekit.compiler.expressions.expression import Expression
from statekit.compiler.expressions.tree import (
    Active,
    ContextRef,
    EventMeta,
    EventRef,
    iter_nodes,
)
from statekit.compiler.ir import (
    Assign,
    Cancel,
    Conditional,
    Emit,
    Foreach,
    Pause,
    Raise,
    Resume,
    Send,
    TimerKind,
)
from statekit.engine.timers import ArmTimers, CancelTimers

CONTEXT = "context"
MESSAGES = "messages"
TIMERS = "timers"

EffectKey = tuple[object, ...]
"""An effect as the comparison sees it: its kind, its content, and the event whose
payload it reads (None when it reads none)."""


@dataclass(frozen=True, slots=True)
class EffectSummary:
    """The data effects of one event's branch: `keys` in the order they run, the
    context fields it `writes` and `reads` (effects and timer delays), whether an
    expression tests `active()`, how many events it sends to the instance's own queue,
    the timer ids it arms, cancels, pauses or resumes, the events it raises, and the last
    action on each state's `after` timers (`arm` or `cancel`, with the context fields the
    `delay:` or `at:` of the timers it arms read)."""

    keys: tuple[EffectKey, ...] = ()
    writes: frozenset[str] = frozenset()
    reads: frozenset[str] = frozenset()
    tests_active: bool = False
    queued: int = 0
    ids: frozenset[str] = frozenset()
    raises: frozenset[str] = frozenset()
    timers: tuple[tuple[str, str, frozenset[str]], ...] = ()

    @property
    def assigns(self) -> tuple[EffectKey, ...]:
        """The keys of its `assign` effects, in order."""
        return tuple(k for k in self.keys if k[0] == "assign")


NOTHING = EffectSummary()
"""The summary of a branch that changes nothing (a rejection, a stale timer)."""


class _Reads:
    """Collects what a branch's expressions read."""

    def __init__(self) -> None:
        self.fields: set[str] = set()
        self.active = False

    def of(self, expressions: Iterable[Expression | None]) -> bool:
        """Record the reads of `expressions`; whether one of them reads `event`."""
        reads_event = False
        for expression in expressions:
            if expression is None:
                continue
            for node in iter_nodes(expression.tree):
                if isinstance(node, ContextRef):
                    self.fields.add(node.field)
                elif isinstance(node, EventRef | EventMeta):
                    reads_event = True
                elif isinstance(node, Active):
                    self.active = True
        return reads_event


def summarize(event: str, effects: Sequence[object]) -> EffectSummary:
    """The summary of the effects one delivered `event` ran, in order."""
    if not effects:
        return NOTHING
    reads = _Reads()
    keys: list[EffectKey] = []
    writes: set[str] = set()
    queued = 0
    ids: set[str] = set()
    raises: set[str] = set()
    timers: dict[str, tuple[str, frozenset[str]]] = {}
    for effect in effects:
        match effect:
            case Assign(assignments=assignments):
                tag = event if reads.of(e for _f, e in assignments) else None
                keys.append(("assign", tuple((f, e.tree) for f, e in assignments), tag))
                writes.update(f for f, _e in assignments)
            case Emit(type=kind, payload=payload):
                tag = event if reads.of(e for _f, e in payload) else None
                keys.append(("emit", kind, tuple((f, e.tree) for f, e in payload), tag))
            case Raise(event=raised, payload=payload):
                tag = event if reads.of(e for _f, e in payload) else None
                keys.append(("raise", raised, tuple((f, e.tree) for f, e in payload), tag))
                raises.add(raised)
            case Send() as send:
                expressions = [e for _f, e in send.payload] + [send.delay, send.at]
                tag = event if reads.of(expressions) else None
                trees = tuple(None if e is None else e.tree for e in expressions)
                keys.append(("send", send.event, send.delay_ms, send.id, trees, tag))
                queued += 0 if send.delayed else 1
                if send.id is not None:
                    ids.add(send.id)
            case Cancel(id=name):
                keys.append(("cancel", name))
                ids.add(name)
            case Pause(name=name) | Resume(name=name):  # order matters as a cancel's does
                keys.append(("pause" if isinstance(effect, Pause) else "resume", name))
                ids.add(name)
            case ArmTimers(state=state, timers=declared):
                delays = _Reads()
                delays.of(t.expression for t in declared if t.kind is not TimerKind.AFTER)
                reads.active = reads.active or delays.active
                reads.fields.update(delays.fields)
                timers[state] = ("arm", frozenset(delays.fields))
            case CancelTimers(state=state):
                timers[state] = ("cancel", frozenset())
            case Foreach(array=array, effects=body):
                # deterministic on the context and payload it starts from: one effect; its
                # body may run any number of times, so what it sends counts as more than one
                part = summarize(event, body)
                tag = (
                    event
                    if reads.of([array]) or any(k[-1] is not None for k in part.keys)
                    else None
                )
                keys.append(("foreach", array.tree, part.keys, tag))
                writes.update(part.writes)
                reads.fields.update(part.reads)
                reads.active = reads.active or part.tests_active
                queued += 2 * part.queued
                ids.update(part.ids)
                raises.update(part.raises)
            case Conditional(branches=branches, otherwise=otherwise):
                # deterministic on the context and payload it starts from, so it replays
                # alike as one effect; every branch counts for what it may write or send
                conditions = [b.check.expression for b in branches]
                parts = [summarize(event, b.effects) for b in branches]
                parts.append(summarize(event, otherwise))
                reads_event = reads.of(conditions) or any(
                    key[-1] is not None for part in parts for key in part.keys
                )
                trees = tuple(e.tree for e in conditions)
                tag = event if reads_event else None
                keys.append(("if", trees, tuple(part.keys for part in parts), tag))
                for part in parts:
                    writes.update(part.writes)
                    reads.fields.update(part.reads)
                    reads.active = reads.active or part.tests_active
                    queued = max(queued, part.queued) if queued else part.queued
                    ids.update(part.ids)
                    raises.update(part.raises)
    return EffectSummary(
        keys=tuple(keys),
        writes=frozenset(writes),
        reads=frozenset(reads.fields),
        tests_active=reads.active,
        queued=queued,
        ids=frozenset(ids),
        raises=frozenset(raises),
        timers=tuple((state, action, fields) for state, (action, fields) in timers.items()),
    )


def same_end_data(
    ab: tuple[EffectSummary, EffectSummary],
    ba: tuple[EffectSummary, EffectSummary],
    active: AbstractSet[str],
) -> str | None:
    """None when "A then B" (A's summary, then B's) and "B then A" (B's, then A's), from
    a configuration whose active states have the paths `active`, leave the same context,
    timers and messages (see the module docstring); otherwise what may differ:
    `context`, `messages` or `timers`."""
    a1, b2 = ab
    b1, a2 = ba
    if a1 is b2 is b1 is a2 is NOTHING:
        return None  # nothing ran (the common case: rejections)
    if any(p.tests_active for p in (a1, b2, b1, a2)):
        return CONTEXT
    data = _data_differs(ab, ba)
    if data is not None:
        return data
    return None if _timers_agree(ab, ba, active) else TIMERS


def _data_differs(
    ab: tuple[EffectSummary, EffectSummary], ba: tuple[EffectSummary, EffectSummary]
) -> str | None:
    """None when the orders are replayed alike or commute (see the module docstring),
    else `context` or `messages`."""
    a1, b2 = ab
    b1, a2 = ba
    if a1.keys + b2.keys == b1.keys + a2.keys:
        return None  # replayed alike
    if a1.keys != a2.keys or b1.keys != b2.keys:
        return CONTEXT if a1.assigns + b2.assigns != b1.assigns + a2.assigns else MESSAGES
    a, b = a1, b1
    if a.writes & (b.reads | b.writes) or b.writes & a.reads:
        return CONTEXT
    if (a.queued and b.queued) or a.ids & b.ids:
        return MESSAGES
    return None  # commuting


def _timers_agree(
    ab: tuple[EffectSummary, EffectSummary],
    ba: tuple[EffectSummary, EffectSummary],
    active: AbstractSet[str],
) -> bool:
    """Whether both orders leave every state's `after` timers alike: the same last action
    on each, and a timer armed by both due at the same time (armed by the same event,
    which ran the same effects in both orders, and whose delay and effects read no field
    the other event writes)."""
    if not (ab[0].timers or ab[1].timers or ba[0].timers or ba[1].timers):
        return True
    last_ab = _last_actions(ab, ("A", "B"))
    last_ba = _last_actions(ba, ("B", "A"))
    for state in last_ab.keys() | last_ba.keys():
        # a state inactive at the start has no timer armed: left alone is cancelled
        untouched = "none" if state in active else "cancel"
        if last_ab.get(state, (untouched,))[0] != last_ba.get(state, (untouched,))[0]:
            return False
    effects = {"A": (ab[0], ba[1]), "B": (ab[1], ba[0])}
    for state, (action, fields, actor) in last_ab.items():
        if action != "arm" or not fields:
            continue  # cancelled alike, or a literal delay: due now + delay either way
        if last_ba[state][2] != actor:
            return False
        own, other = effects[actor], effects["B" if actor == "A" else "A"]
        written = other[0].writes | other[1].writes
        if own[0].keys != own[1].keys or (fields | own[0].reads) & written:
            return False
    return True


def _last_actions(
    order: tuple[EffectSummary, EffectSummary], names: tuple[str, str]
) -> dict[str, tuple[str, frozenset[str], str]]:
    """State → (its timers' last action in the order, the fields their delays read, "A"
    or "B": the event whose effects took it)."""
    out: dict[str, tuple[str, frozenset[str], str]] = {}
    for part, name in zip(order, names, strict=True):
        for state, action, fields in part.timers:
            out[state] = (action, fields, name)
    return out
