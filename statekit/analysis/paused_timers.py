"""Which `after` timers are paused, whatever the path, while a state is active.

The exploration does not carry a timer's pause in its abstract states (that would
multiply them for every chart that pauses); it takes an `after` timer as armed
while its owning state is active (`statekit.analysis.timers`). One pattern is
exact from the chart alone, and it is the one pausing is for: a state P that
pauses its ancestor's named timer on entry (`entry: [{pause: sla}]`) while no
effect of the chart resumes it but P's own `exit:`. While P is active the timer
is then paused (or not armed at all): it was armed when its owner was entered,
before P (an ancestor's timers are armed before a descendant's entry effects
run), it is armed again only when its owner is entered again, which exits P, and
nothing resumes it before P is left. Such a timer is not deliverable in a
configuration containing P, so neither the exploration nor `explain` lets its
event occur there. Any other use of `pause:`/`resume:` leaves the timer
deliverable wherever its state is active: an over-approximation, as for timers
consumed by a delivery, so no reachable state or violation is missed.
"""

from __future__ import annotations

from collections.abc import Mapping

from statekit.analysis.report import transition_label
from statekit.compiler.effect_walk import leaf_effects
from statekit.compiler.ir import CompiledChart, Effect, Pause, Resume


def paused_while_active(chart: CompiledChart) -> Mapping[int, frozenset[str]]:
    """State id → the timer events (`after(sla)@ticket`) paused whenever it is active
    (see the module docstring); only states with some, empty for most charts."""
    resumed_in: dict[str, set[tuple[str, int]]] = {}  # name → places that resume it
    for transition in chart.transitions:
        for name in _names(transition.effects, Resume):
            resumed_in.setdefault(name, set()).add(("transition", transition.id))
    for state in chart.states:
        for name in _names(state.entry, Resume):
            resumed_in.setdefault(name, set()).add(("entry", state.id))
        for name in _names(state.exit, Resume):
            resumed_in.setdefault(name, set()).add(("exit", state.id))
    found: dict[int, frozenset[str]] = {}
    for state in chart.states:
        paused: set[str] = set()
        for name in _names(state.entry, Pause):
            if not resumed_in.get(name, set()) <= {("exit", state.id)}:
                continue
            paused.update(
                t.name for t in chart.timers if t.label == name and t.state in state.ancestors
            )
        if paused:
            found[state.id] = frozenset(paused)
    return found


def _names(effects: tuple[Effect, ...], kind: type[Pause] | type[Resume]) -> list[str]:
    """The names `effects` surely pause (not inside an `if`), or may resume (any branch)."""
    candidates = leaf_effects(effects) if kind is Resume else iter(effects)
    return [e.name for e in candidates if isinstance(e, kind)]


def timer_controls(chart: CompiledChart, label: str | None) -> tuple[str, ...]:
    """Where the chart pauses and resumes the timers named `label`, in words, in document
    order of the states then the transitions (`pause on entry of 'sla.clock.paused'`,
    `resume in 'a' --GO--> 'b' (line 12)`); none for an unnamed timer."""
    if label is None:
        return ()
    out: list[str] = []
    for state in chart.states:
        for where, effects in (("entry", state.entry), ("exit", state.exit)):
            for effect in leaf_effects(effects):
                if isinstance(effect, Pause | Resume) and effect.name == label:
                    verb = "pause" if isinstance(effect, Pause) else "resume"
                    out.append(f"{verb} on {where} of '{state.path}' (line {effect.span.line})")
    for transition in chart.transitions:
        for effect in leaf_effects(transition.effects):
            if isinstance(effect, Pause | Resume) and effect.name == label:
                verb = "pause" if isinstance(effect, Pause) else "resume"
                out.append(f"{verb} in {transition_label(chart, transition.id)}")
    return tuple(out)
