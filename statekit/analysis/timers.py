"""Timer events in the exploration: which timer events an abstract state has armed.

A timer event (`after(15m)@processing`, see `CompiledChart.timers`) can occur
in any reachable configuration in which it is armed, in any order relative to
the declared events. An `after` timer is armed when its owning state is
entered and cancelled when that state is exited, so the analysis takes it as
armed exactly when its state is active: the configuration alone says which
timer events an abstract state has, and charts without timers cost nothing. A
timer that a state keeps paused while it is active (`statekit.analysis.paused_timers`)
is not armed there.

This is an over-approximation in one respect: the engine consumes a timer
when it delivers it, so after a delivery that leaves the owning state active
(a targetless or internal timer transition, or one whose guards all failed)
the timer is no longer armed until the state is re-entered, while the
analysis still lets it occur. Every sequence of the engine is thus among the
explored ones (no reachable state or invariant violation is missed), but a
path may deliver such a timer twice where the engine would not, and a state
that only such a timer leaves (its guard failed once: the engine stays there
for good) is not reported as dead or as a trap.

Delayed `send`s deliver declared events, which the exploration already lets
arrive in every abstract state, so which of them are armed cannot change
what is reachable: the abstract state does not carry them (that would only
multiply the states). `armed_sends` computes afterwards, over the explored
graph, which send timers *may* be armed in each abstract state: armed by a
delayed `send` on some path to it and not cancelled by id since (a timer
without `id:` is named `send(EVENT)` here; several may be armed at once).
A delivery is an arrival of the declared event; a may-analysis keeps the
timer, since the same event may also come from outside. The events sends
deliver count as mentioned (`static.mentioned_events`): they must be
classified wherever they can arrive.
"""

from __future__ import annotations

from collections.abc import Iterable

from statekit.analysis.exploration import Exploration
from statekit.analysis.macrostep_branches import Step
from statekit.analysis.paused_timers import paused_while_active
from statekit.compiler.diagnostics import SourceSpan
from statekit.compiler.effect_walk import leaf_effects
from statekit.compiler.ir import Cancel, CompiledChart, Conditional, Effect, Foreach, Send
from statekit.engine.tables import Configuration


class ArmedTimers:
    """The timer events armed in each configuration, in the chart's timer order."""

    __slots__ = ("_by_config", "_owned", "_paused")

    def __init__(self, chart: CompiledChart) -> None:
        self._owned = tuple((t.state, t.name) for t in chart.timers)
        self._paused = paused_while_active(chart) if self._owned else {}
        self._by_config: dict[Configuration, tuple[str, ...]] = {}

    def events(self, config: Configuration) -> tuple[str, ...]:
        """The timer events that can occur in `config`: those whose owning state is
        active, but for those an active state keeps paused (`paused_timers`; none for a
        chart without timers)."""
        if not self._owned:
            return ()
        found = self._by_config.get(config)
        if found is None:
            ids = config.ids
            found = tuple(n for s, n in self._owned if s in ids)
            if self._paused:
                paused = {n for s, names in self._paused.items() if s in ids for n in names}
                found = tuple(n for n in found if n not in paused)
            self._by_config[config] = found
        return found


def _sends(effects: tuple[Effect, ...]) -> list[Send]:
    return [e for e in leaf_effects(effects) if isinstance(e, Send)]


def sends_of(chart: CompiledChart) -> list[Send]:
    """Every `send` effect of the chart (transitions, `entry`, `exit`), in document order
    within each place."""
    found: list[Send] = []
    for transition in chart.transitions:
        found.extend(_sends(transition.effects))
    for state in chart.states:
        found.extend(_sends(state.entry + state.exit))
    return found


def event_span(chart: CompiledChart, event: str) -> SourceSpan:
    """Where `event` is declared: its `events:` entry, or a timer event's `after` entry."""
    declared = chart.events.get(event)
    if declared is not None:
        return declared.span
    timer = chart.timer(event)
    return timer.span if timer is not None else chart.span


def send_timer_id(send: Send) -> str:
    """The name the analysis gives the timer a delayed `send` arms: its `id:`, or
    `send(EVENT)` without one."""
    return send.id if send.id is not None else f"send({send.event})"


def _after_steps(armed: frozenset[str], steps: Iterable[Step]) -> frozenset[str]:
    """The send timers armed after running `steps` from `armed` (effects in the
    engine's order: exit effects, transition effects, entry effects)."""
    out = set(armed)
    for step in steps:
        for effect in step.effects:
            if isinstance(effect, Send) and effect.delayed:
                out.add(send_timer_id(effect))
            elif isinstance(effect, Cancel):
                out.discard(effect.id)
            elif isinstance(effect, Conditional | Foreach):  # may run; none surely cancels
                out.update(send_timer_id(e) for e in _sends((effect,)) if e.delayed)
    return frozenset(out)


def armed_sends(exploration: Exploration) -> list[frozenset[str]]:
    """Node id → the send timers that may be armed there (see the module docstring):
    the least solution of "the initial macrostep's, and every applied outcome's from a
    predecessor", found by a worklist over the explored graph. All empty when the
    chart has no delayed `send` (then nothing is computed)."""
    nodes = exploration.nodes
    found: list[frozenset[str]] = [frozenset()] * len(nodes)
    if not any(s.delayed for s in sends_of(exploration.chart)):
        return found
    work: list[int] = []

    def join(node: int, armed: frozenset[str]) -> None:
        if node >= 0 and not armed <= found[node]:
            found[node] |= armed
            work.append(node)

    for outcome in exploration.initial:
        if outcome.fired and outcome.target >= 0:
            found[outcome.target] |= _after_steps(frozenset(), outcome.steps)
            work.append(outcome.target)
    while work:
        node = nodes[work.pop()]
        for outcome in node.outcomes or ():
            if outcome.fired:
                join(outcome.target, _after_steps(found[node.id], outcome.steps))
    return found
