"""Charts that invoke charts, read as a set: which chart an invoke names, what comes back.

A *chart set* is the charts a command reads together (`statekit lint FOLDER`,
several files, `statekit races`, `statekit docs`). An invoke names its child
by the child's `statechart:` name and, optionally, `version:`; without a
version it means the newest version of that name in the set. Where files in
several folders hold charts of one name (unrelated charts of a repository
linted as a whole), the one nearest to the invoking chart's file is meant
(the most folders in common). What the parent
can receive from an invocation (`child_events`) is `done.invoke.<id>` (the
child reached a top-level final state), `error.invoke.<id>` (it could not
start, or failed) and every event the child sends with `send: {to: parent}`.

These are the facts the family lint rules, the race analysis (a child is a
producer of its own, `invocation_producers`) and the docs' links between
pages read. Nothing here explores a chart: each chart is explored alone
(`statekit.analysis.facts`), and the set only says how they connect.
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType

from statekit.compiler.diagnostics import SourceSpan
from statekit.compiler.effect_walk import leaf_effects
from statekit.compiler.invocations import Invocation, ToInstance, ToParent
from statekit.compiler.ir import CompiledChart, Effect, Producer, Send

DONE = "done"
ERROR = "error"
SENT = "send"
"""The kinds of `ChildEvent`: the child finished, failed, or sent the event to its parent."""

INVOKE_PRODUCER_PREFIX = "invoke."
"""The name of the producer an invocation stands for in the race analysis: `invoke.<id>`."""


@dataclass(frozen=True, slots=True)
class ChildEvent:
    """An event a parent can receive from one of its invocations.

    `kind` is `DONE`, `ERROR` or `SENT`; `span` is where it comes from: the
    invocation for `done.invoke.<id>` and `error.invoke.<id>`, the child's
    `send` (in the child's file) for an event the child sends to its parent.
    """

    event: str
    invocation: Invocation
    kind: str
    span: SourceSpan


@dataclass(frozen=True, slots=True)
class InvokedChart:
    """One invocation of `parent` and a chart of the set it may start (None when the set
    has no chart of that name and version): `chart` is that name, the invocation's
    chart or, for `chart: {by, cases}`, one case's (each case is an `InvokedChart`)."""

    parent: CompiledChart
    invocation: Invocation
    child: CompiledChart | None
    chart: str = ""

    @property
    def chart_name(self) -> str:
        """The chart name this pairing stands for."""
        return self.chart or self.invocation.chart


@dataclass(frozen=True, slots=True)
class ChartSet:
    """The charts read together, by name; each name's versions, newest first."""

    charts: tuple[CompiledChart, ...]
    _by_name: Mapping[str, tuple[CompiledChart, ...]] = field(
        init=False, repr=False, compare=False, default_factory=lambda: MappingProxyType({})
    )

    def __post_init__(self) -> None:
        by_name: dict[str, list[CompiledChart]] = {}
        for chart in self.charts:
            by_name.setdefault(chart.name, []).append(chart)
        index = {
            name: tuple(sorted(found, key=lambda c: -c.version)) for name, found in by_name.items()
        }
        object.__setattr__(self, "_by_name", MappingProxyType(index))

    @property
    def names(self) -> tuple[str, ...]:
        """Every chart name of the set, sorted."""
        return tuple(sorted(self._by_name))

    def versions(self, name: str) -> tuple[int, ...]:
        """The versions of chart `name` in the set, newest first (none: no such chart)."""
        return tuple(c.version for c in self._by_name.get(name, ()))

    def resolve(
        self, name: str, version: int | None = None, near: str | None = None
    ) -> CompiledChart | None:
        """The chart `name` at `version` (None: its newest version), or None. When
        several files of the set hold such a chart (unrelated charts that share a name
        in different folders of a repository), the one nearest to the file `near` (the
        most folders in common) is meant, then the newest."""
        found = self._by_name.get(name, ())
        if version is not None:
            found = tuple(c for c in found if c.version == version)
        if not found:
            return None
        if near is None or len(found) == 1:
            return found[0]
        here = _folders(near)
        return max(found, key=lambda c: (_shared(here, _folders(c.file)), c.version))

    def closest_name(self, name: str) -> str | None:
        """The chart name of the set most like `name` (a likely typo), or None."""
        close = difflib.get_close_matches(name, self.names, n=1, cutoff=0.6)
        return close[0] if close else None

    def invoked(self, parent: CompiledChart) -> tuple[InvokedChart, ...]:
        """`parent`'s invocations in document order, each with the chart it names (an
        invocation that chooses its chart: once per chart its cases name)."""
        return tuple(
            InvokedChart(parent, inv, self.resolve(name, inv.version, parent.file), name)
            for inv in parent.invocations
            for name in inv.charts
        )

    def invokers(self, child: CompiledChart) -> tuple[InvokedChart, ...]:
        """Every invocation in the set that names `child` (its name, and its version
        when one is pinned; an unpinned one only names the newest version)."""
        return tuple(
            found for chart in self.charts for found in self.invoked(chart) if found.child is child
        )


def _folders(file: str) -> tuple[str, ...]:
    """The folders of a chart's file, from the top (absolute, so that two spellings of
    one folder agree)."""
    return Path(file).absolute().parent.parts


def _shared(a: tuple[str, ...], b: tuple[str, ...]) -> int:
    """How many leading folders `a` and `b` have in common."""
    count = 0
    for x, y in zip(a, b, strict=False):
        if x != y:
            break
        count += 1
    return count


def chart_effects(chart: CompiledChart) -> Iterator[Effect]:
    """Every effect the chart writes that may run: transitions' effects, then states'
    entry and exit, each branch of an `if` included (`leaf_effects`)."""
    for transition in chart.transitions:
        yield from leaf_effects(transition.effects)
    for state in chart.states:
        yield from leaf_effects(state.entry)
        yield from leaf_effects(state.exit)


def sends_to_parent(child: CompiledChart) -> tuple[Send, ...]:
    """The child's `send: {to: parent}` effects, in document order."""
    return tuple(
        e for e in chart_effects(child) if isinstance(e, Send) and isinstance(e.to, ToParent)
    )


def sends_to_charts(chart: CompiledChart) -> tuple[tuple[Send, ToInstance], ...]:
    """The chart's `send: {to: {chart, instance}}` effects with their targets."""
    return tuple(
        (e, e.to)
        for e in chart_effects(chart)
        if isinstance(e, Send) and isinstance(e.to, ToInstance)
    )


def named_charts(chart: CompiledChart) -> tuple[str, ...]:
    """The chart names the chart's invokes and `send`s to other instances name."""
    named = [name for inv in chart.invocations for name in inv.charts]
    named += [target.chart for _, target in sends_to_charts(chart)]
    return tuple(dict.fromkeys(named))


def talks_to_charts(chart: CompiledChart) -> bool:
    """Whether the chart invokes charts, sends to its parent or to other instances (the
    family rules have something to check)."""
    return bool(chart.invocations) or any(
        isinstance(e, Send) and e.to is not None for e in chart_effects(chart)
    )


def invoking_states(chart: CompiledChart) -> dict[str, int]:
    """`done.invoke.<id>` and `error.invoke.<id>` → the state whose invocation sends it
    (the only states where they can arrive: the child runs while its state is active)."""
    return {
        event: inv.state for inv in chart.invocations for event in (inv.done_event, inv.error_event)
    }


def arrival_states(
    chart: CompiledChart, chart_set: ChartSet | None = None
) -> dict[str, frozenset[int]]:
    """Event → the states of which one is active wherever it can arrive: an invocation's
    `done.invoke.<id>` and `error.invoke.<id>` → its state; an event only children send
    (their `send: {to: parent}`, with the children in `chart_set`; none of the chart's
    `producers:` lists it) → the states of the invocations whose children send it. A
    child runs only while its state is active: before, it does not exist, and leaving
    the state cancels it. (A send the child made before the parent left the state and
    still queued is delivered after, in the same family step; the analysis, as the
    author, pairs it where the invocation is active.)"""
    found: dict[str, set[int]] = {event: {state} for event, state in invoking_states(chart).items()}
    if chart_set is not None:
        listed = {event for p in chart.producers for event in p.events}
        for invoked in chart_set.invoked(chart):
            for sent in child_events(invoked):
                if sent.kind == SENT and sent.event not in listed:
                    found.setdefault(sent.event, set()).add(invoked.invocation.state)
    return {event: frozenset(states) for event, states in found.items()}


def child_events(invoked: InvokedChart) -> tuple[ChildEvent, ...]:
    """What the parent can receive from the invocation: `done.invoke.<id>`,
    `error.invoke.<id>`, then each event the child sends to its parent (once, at its
    first `send`; none when the child is not in the set)."""
    inv = invoked.invocation
    found = [
        ChildEvent(inv.done_event, inv, DONE, inv.span),
        ChildEvent(inv.error_event, inv, ERROR, inv.span),
    ]
    if invoked.child is not None:
        seen: set[str] = set()
        for send in sends_to_parent(invoked.child):
            if send.event not in seen:
                seen.add(send.event)
                found.append(ChildEvent(send.event, inv, SENT, send.span))
    return tuple(found)


def invocation_producers(
    parent: CompiledChart, chart_set: ChartSet | None = None
) -> tuple[Producer, ...]:
    """Each invocation of `parent` as a producer of its own, `invoke.<id>`, for the race
    analysis: the child sends its events to the parent in order, then finishes or fails
    (one of `done.invoke.<id>` and `error.invoke.<id>`), so its events never race with
    each other, and race with every other producer's. An event the chart's own
    `producers:` lists keeps the author's producer; the child's sends are known only
    when `chart_set` holds the child."""
    listed = {event for p in parent.producers for event in p.events}
    produced: list[Producer] = []
    invocations: Iterable[InvokedChart] = (
        chart_set.invoked(parent)
        if chart_set is not None
        else (InvokedChart(parent, inv, None) for inv in parent.invocations)
    )
    by_invocation: dict[str, tuple[Invocation, list[str]]] = {}
    for invoked in invocations:  # a chosen chart: each case's child sends in one producer
        sent = [c for c in child_events(invoked) if c.kind == SENT]
        _inv, events = by_invocation.setdefault(invoked.invocation.id, (invoked.invocation, []))
        events += [c.event for c in sent if c.event in parent.events and c.event not in listed]
    for inv, events in by_invocation.values():
        own = child_events(InvokedChart(parent, inv, None))
        events += [c.event for c in own if c.event in parent.events and c.event not in listed]
        if events:
            produced.append(
                Producer(
                    name=INVOKE_PRODUCER_PREFIX + inv.id,
                    events=tuple(dict.fromkeys(events)),
                    span=inv.span,
                )
            )
    return tuple(produced)
