"""One selected step of an instance's timeline: the states before and after it, the
transitions it took, the context diff, its effects and the messages it emitted.

Step 0 is the creation (no state before it); step N the N-th timeline entry.
An accepted event's step goes from the state after the previous sequence to
the state after its own; a rejection's (or a conflict's) step changes nothing:
before and after are the state at the version it was answered at. The
transitions and effects are the event's stored evidence (what the runner
recorded when it applied the event), the states are the replay's
(`instance_story`): where the replay stopped, the step has no state and says so.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from statekit.engine.chart import Chart
from statekit.engine.state import State
from statekit.inspect.context_diff import ContextChange, context_diff
from statekit.inspect.instance_story import InstanceStory
from statekit.inspect.timeline import TimelineEntry
from statekit.runner.store.rows import OutboxRow


@dataclass(frozen=True, slots=True)
class EffectStep:
    """One microstep of the step's evidence, as text: what triggered it, the transitions
    (`source --trigger--> targets`), the states exited and entered, the assignments
    (`field: old → new` data), emitted message IDs, raised events, timers armed and
    cancelled and events sent."""

    trigger: str
    transitions: tuple[str, ...]
    exited: tuple[str, ...]
    entered: tuple[str, ...]
    changes: tuple[tuple[str, Any, Any], ...]
    emitted: tuple[str, ...]
    raised: tuple[str, ...]
    armed: tuple[str, ...]
    cancelled: tuple[str, ...]
    sent: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class StepView:
    """The selected step (see the module docstring). `chart` is the chart version the
    diagram shows (the one the state after the step is on); `before_ids`/`after_ids`
    the active state ids to highlight on it (empty where that state is unknown or on
    another version), `taken` the transition ids it took (on that chart);
    `missing` says why a state cannot be shown (None: both are known)."""

    number: int
    count: int
    entry: TimelineEntry | None
    before: State | None
    after: State | None
    chart: Chart | None
    before_ids: frozenset[int]
    after_ids: frozenset[int]
    taken: frozenset[int]
    changes: tuple[ContextChange, ...]
    effects: tuple[EffectStep, ...]
    messages: tuple[OutboxRow, ...]
    missing: str | None


def step_view(story: InstanceStory, number: int) -> StepView:
    """The view of step `number` (clamped to 0..the timeline's length)."""
    count = len(story.timeline)
    number = max(0, min(number, count))
    entry = story.timeline[number - 1] if number else None
    start = story.pruned_through
    if entry is None:
        before, after = None, story.states.get(start)
        messages = story.messages_by_sequence.get(0, ()) if not start else ()
    elif entry.accepted:
        before, after = story.states.get(entry.version - 1), story.states.get(entry.version)
        messages = story.messages_by_sequence.get(entry.version, ())
    else:
        before = after = story.states.get(entry.version)
        messages = ()
    chart = story.chart_of(after) or story.chart_of(before)
    before_ids = _ids_on(before, chart)
    after_ids = _ids_on(after, chart)
    microsteps = entry.evidence.get("microsteps", ()) if entry is not None else ()
    effects = _effects(microsteps)
    taken: frozenset[int] = frozenset()
    if entry is not None and chart is not None and entry.chart_version == chart.version:
        taken = frozenset(_transition_ids(microsteps))
    changes: tuple[ContextChange, ...] = ()
    if after is not None:
        changes = context_diff({} if before is None else dict(before.context), dict(after.context))
    return StepView(
        number=number,
        count=count,
        entry=entry,
        before=before,
        after=after,
        chart=chart,
        before_ids=before_ids,
        after_ids=after_ids,
        taken=taken,
        changes=changes,
        effects=effects,
        messages=tuple(messages),
        missing=_missing(story, entry, before, after),
    )


def _ids_on(state: State | None, chart: Chart | None) -> frozenset[int]:
    if state is None or chart is None or state.chart_digest != chart.digest:
        return frozenset()
    return state.active_ids


def _missing(
    story: InstanceStory, entry: TimelineEntry | None, before: State | None, after: State | None
) -> str | None:
    needs_before = entry is not None and (
        entry.accepted and entry.version - 1 >= story.pruned_through
    )
    if after is not None and (before is not None or not needs_before):
        return None
    why = "; ".join(story.replay_problems) or "the replay did not reach this step"
    return f"the state at this step cannot be shown: {why}"


def _transition_ids(microsteps: Sequence[Any]) -> list[int]:
    ids: list[int] = []
    for step in microsteps:
        if not isinstance(step, Mapping):
            continue
        for t in step.get("transitions") or ():
            if isinstance(t, Mapping) and type(t.get("id")) is int:
                ids.append(t["id"])
    return ids


def _effects(microsteps: Sequence[Any]) -> tuple[EffectStep, ...]:
    out: list[EffectStep] = []
    for step in microsteps:
        if not isinstance(step, Mapping):
            continue
        event = step.get("event")
        transitions = tuple(_transition_text(t, event) for t in _list(step.get("transitions")))
        changes = tuple(
            (str(c[0]), c[1], c[2])
            for c in _list(step.get("changes"))
            if isinstance(c, list) and len(c) == 3
        )
        out.append(
            EffectStep(
                trigger="(eventless)" if event is None else str(event),
                transitions=transitions,
                exited=_texts(step.get("exited")),
                entered=_texts(step.get("entered")),
                changes=changes,
                emitted=_texts(step.get("emitted")),
                raised=_texts(step.get("raised")),
                armed=_texts(step.get("armed")),
                cancelled=_texts(step.get("cancelled")),
                sent=_texts(step.get("sent")),
            )
        )
    return tuple(out)


def _transition_text(t: Any, event: Any) -> str:
    if not isinstance(t, Mapping):
        return str(t)
    kind = t.get("kind")
    trigger = str(event) if kind == "event" and event is not None else str(kind)
    targets = ", ".join(map(str, _list(t.get("targets")))) or "(targetless)"
    return f"{t.get('source')} --{trigger}--> {targets}"


def _list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


def _texts(value: Any) -> tuple[str, ...]:
    return tuple(str(v) for v in _list(value))
