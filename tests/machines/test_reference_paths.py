"""Every transition and every rejection reason of the reference machines (`machines/`),
reached by deterministic tests: the covering paths of `statekit.testing.paths`
replayed step by step, plus an unknown event and an invalid payload per chart.

The paths name each step's event, classification, configuration and fired
transitions, but no payloads: `replay` finds them by a small deterministic
search (candidate values from each field's declared type and the instance's
context, backtracking over the path, with a bounded number of sends), and a
step counts only when the chart answers it with exactly the path's status,
reason, fired transitions and configuration. A timer step
(`after(15m)@processing`) is sent by its timer event's name, which delivers the
armed timer. A path the search cannot replay fails its test, unless the step it
stops at is listed in `OUT_OF_REACH` with the reason no data can take it (a test
checks each entry still is). `make test`'s coverage gate
(`--statekit-cov=machines --statekit-cov-fail-under=transition:100,rejection:100`)
is met by this file alone (`tests/testing/test_machines_coverage.py` checks that).
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

import statekit
from statekit.analysis.paths import PathStep
from statekit.analysis.witness import configuration_text
from statekit.compiler.ir import FieldDecl
from statekit.compiler.value_types import BaseType
from statekit.engine.chart import Chart
from statekit.engine.result import INVALID_PAYLOAD, UNKNOWN_EVENT, Result, Status
from statekit.engine.state import State
from statekit.testing import CoveringPath, paths

MACHINES = Path(__file__).resolve().parents[2] / "machines"
CHARTS = {file.stem: statekit.load(file) for file in sorted(MACHINES.glob("*.yaml"))}

SEND_BUDGET = 50_000
"""How many sends one path's search may make before the path counts as not replayable."""

BASE_INTEGERS = (1, 0, 2, 3, 100, 101, -1, 1_000_000)
BASE_STRINGS = ("a", "")


@dataclass(frozen=True, slots=True)
class Segment:
    """One instance's part of a replay: the context it started with, the indexes of the
    path's steps it took (in order) and their results."""

    context: Mapping[str, Any]
    steps: tuple[int, ...]
    results: tuple[Result, ...]


class NotReplayable(AssertionError):
    """No payloads make the chart take step `step` (0-based) of the path."""

    def __init__(self, path: CoveringPath, step: int, sends: int) -> None:
        event = path.steps[step].event
        super().__init__(
            f"no payloads make the chart take step {step + 1} ({event}) of path {path.id} "
            f"({sends} sends tried)"
        )
        self.step = step


def replay(
    chart: Chart, path: CoveringPath, out_of_reach: frozenset[int] = frozenset()
) -> tuple[Segment, ...]:
    """Replay `path` on as few instances as it needs; raise `NotReplayable` when it cannot.

    One instance takes the steps as far as some payloads let it. When it is stuck at
    step k, the steps before k that it took were rejections or repeats that left the
    state as it was, or applied steps: a new instance takes the applied steps before
    k again (its trunk, with data of its own) and goes on from step k. A refusal the
    path sends between two applied steps reads the same configuration either way, so
    only the data differ: e.g. POWER_ON refused for a low battery and then applied
    from the same state. A new instance that is stuck at step k again fails.

    The steps of `out_of_reach` (0-based) are left out: a refusal or repeat (it
    leaves the state as it was) alone, an applied step with the rest of the path.
    """
    steps = path.steps
    kept = []
    for i, step in enumerate(path.steps):
        if i in out_of_reach:
            if step.status == Status.APPLIED.value:
                break
            continue
        kept.append(i)
    segments: list[Segment] = []
    start = kept[0] if kept else 0
    sends = 0
    while kept:
        trunk = [i for i in kept if i < start and steps[i].status == Status.APPLIED.value]
        indexes = (*trunk, *(i for i in kept if i >= start))
        search = Search(chart, tuple(steps[i] for i in indexes))
        found = search.run()
        sends += search.sends
        context, results = found if found is not None else search.best
        if found is None and indexes[len(results)] <= start:
            raise NotReplayable(path, indexes[len(results)], sends)
        segments.append(Segment(context, indexes[: len(results)], tuple(results)))
        if found is not None:
            break
        start = indexes[len(results)]
    return tuple(segments)


class Search:
    """A depth-first search for payloads (and, when the defaults do not do, a start
    context) that make `chart` take each of `steps` exactly as the path says."""

    def __init__(self, chart: Chart, steps: tuple[PathStep, ...]) -> None:
        self.chart = chart
        self.steps = steps
        self.sends = 0
        self.best: tuple[Mapping[str, Any], list[Result]] = ({}, [])
        self._failed: set[tuple[int, State]] = set()
        self._context: Mapping[str, Any] = {}
        self._taken: list[Result] = []

    def run(self) -> tuple[Mapping[str, Any], list[Result]] | None:
        """The first start context and results that take every step, or None (`best`
        then holds the longest prefix taken)."""
        for context in self._start_contexts():
            try:
                state = self.chart.start(context)
            except statekit.StartError:
                continue
            self._context = context
            if self._from(0, state):
                return context, list(self._taken)
            if self.sends >= SEND_BUDGET:
                return None
        return None

    def _from(self, index: int, state: State) -> bool:
        if len(self._taken) > len(self.best[1]):
            self.best = (self._context, list(self._taken))
        if index == len(self.steps):
            return True
        if (index, state) in self._failed:
            return False
        step = self.steps[index]
        assert step.event is not None
        for payload in self._payloads(step.event, state.context):
            if self.sends >= SEND_BUDGET:
                return False
            self.sends += 1
            result = self.chart.send(state, step.event, payload)
            if not takes(result, step):
                continue
            self._taken.append(result)
            if self._from(index + 1, result.state):
                return True
            self._taken.pop()
        self._failed.add((index, state))
        return False

    def _payloads(self, event: str, context: Mapping[str, Any]) -> Iterator[dict[str, Any]]:
        declared = self.chart.ir.events.get(event)
        if declared is None:  # a timer's event: delivered by name, without a payload
            yield {}
            return
        names = [f.name for f in declared.fields]
        choices = [candidates(f, context) for f in declared.fields]
        for values in itertools.product(*choices):
            yield dict(zip(names, values, strict=True))

    def _start_contexts(self) -> Iterator[dict[str, Any]]:
        """The declared defaults, then each single field set to one of its candidates."""
        yield {}
        defaults = self.chart.start().context
        for decl in self.chart.ir.context.values():
            for value in candidates(decl, defaults):
                if value != defaults[decl.name] or type(value) is not type(defaults[decl.name]):
                    yield {decl.name: value}


def candidates(decl: FieldDecl, context: Mapping[str, Any]) -> list[Any]:
    """The values tried for a field, first to last: its enum values, both booleans, a few
    integers and strings plus the context's own values (and its integers ± 1, for
    guards that compare with the context), and null when nullable."""
    kind = decl.type
    values: list[Any]
    if kind.enum is not None:
        values = list(kind.enum)
    elif kind.base is BaseType.BOOLEAN:
        values = [True, False]
    elif kind.base in (BaseType.INTEGER, BaseType.NUMBER):
        known = sorted({v for v in context.values() if type(v) is int})
        values = [*BASE_INTEGERS, *(v + d for v in known for d in (0, 1, -1))]
    elif kind.base is BaseType.STRING:
        values = [*BASE_STRINGS, *sorted({v for v in context.values() if type(v) is str})]
    else:
        values = []
    if kind.nullable or kind.base is BaseType.NULL:
        values.append(None)
    unique: dict[tuple[type, Any], Any] = {}
    for value in values:
        unique.setdefault((type(value), value), value)
    return list(unique.values())


def takes(result: Result, step: PathStep) -> bool:
    """Whether `result` is the step of the path: its classification, the transitions it
    fired and the configuration it leads to."""
    if (result.status.value, result.reason) != (step.status, step.reason):
        return False
    fired = sorted(t.id for microstep in result.evidence for t in microstep.transitions)
    if fired != sorted(step.transitions):
        return False
    return not step.configuration or step.configuration == configuration_text(result.state)


OUT_OF_REACH: dict[tuple[str, int, int, str], str] = {
    # (chart, path number, step number, event): why no data make the chart take that
    # step. The analysis takes every data guard both ways; these outcomes the charts'
    # own assignments rule out. `test_the_steps_out_of_reach_are_out_of_reach` keeps
    # the list true; the transitions only such paths fire are fired below
    # (`test_what_only_steps_out_of_reach_lead_to_is_reached_another_way`).
    ("media_player", 4, 3, "PLAY_QUEUE"): "it sets track 0 of tracks > 0, so the session's "
    "queue_finished cannot hold right after it",
    ("media_player", 9, 3, "UNMUTE"): "leaving muted sets the volume to 10 or more, so silent "
    "cannot hold right after it",
    ("media_player", 13, 3, "STALLED"): "entering buffering sets buffer_pct 0, so buffered "
    "cannot hold right after it",
    ("task", 15, 37, "ArtifactRecovered"): "an upload records the current attempt, so a "
    "verified artifact is always the current attempt's",
}


def _number(path: CoveringPath) -> int:
    return int(path.id.split("-", 1)[0])


def out_of_reach(name: str, path: CoveringPath) -> frozenset[int]:
    """The 0-based indexes of the path's steps listed in `OUT_OF_REACH`."""
    number = _number(path)
    return frozenset(step - 1 for chart, n, step, _ in OUT_OF_REACH if (chart, n) == (name, number))


CASES = [
    pytest.param(name, path, id=f"{name}:{path.id}")
    for name, chart in CHARTS.items()
    for path in paths(chart)
]


@pytest.mark.parametrize(("name", "path"), CASES)
def test_each_covering_path_replays_step_by_step(name: str, path: CoveringPath) -> None:
    skipped = out_of_reach(name, path)
    segments = replay(CHARTS[name], path, skipped)
    taken = {i for segment in segments for i in segment.steps}
    applied_out = [i for i in skipped if path.steps[i].status == Status.APPLIED.value]
    assert taken == set(range(min(applied_out, default=len(path.steps)))) - skipped
    for segment in segments:
        for i, result in zip(segment.steps, segment.results, strict=True):
            step = path.steps[i]
            assert (result.status.value, result.reason) == (step.status, step.reason), step
            if step.configuration:
                assert configuration_text(result.state) == step.configuration, step


@pytest.mark.parametrize(("name", "number", "step", "event"), sorted(OUT_OF_REACH))
def test_the_steps_out_of_reach_are_out_of_reach(
    name: str, number: int, step: int, event: str
) -> None:
    (path,) = (p for p in paths(CHARTS[name]) if _number(p) == number)
    assert path.steps[step - 1].event == event
    earlier = out_of_reach(name, path) - {step - 1}
    prefix = CoveringPath(path.id, path.steps[:step], path.transitions, path.rejections)
    with pytest.raises(NotReplayable) as stuck:
        replay(CHARTS[name], prefix, earlier)
    assert stuck.value.step == step - 1


def test_what_only_steps_out_of_reach_lead_to_is_reached_another_way() -> None:
    """media_player's paths 4, 9 and 13 alone fire replacing the queue while playing,
    unmuting, and stepping the quality back up: here they are, with buffering done."""
    chart = CHARTS["media_player"]
    state = chart.start()
    fired: list[tuple[str, str | None, tuple[str, ...]]] = []
    for event, payload in [
        ("POWER_ON", {}),
        ("PLAY_QUEUE", {"tracks": 2}),
        ("PLAY_QUEUE", {"tracks": 3}),
        ("MUTE", {}),
        ("UNMUTE", {}),
        ("STALLED", {}),
        ("BUFFER_PROGRESS", {"pct": 100}),
        ("QUALITY_UP", {}),
    ]:
        result = chart.send(state, event, payload)
        assert result.status is Status.APPLIED, (event, result.reason)
        fired += [(t.source, t.event, t.targets) for m in result.evidence for t in m.transitions]
        state = result.state
    playback, session = "powered.main.playback", "powered.main.playback.session"
    assert (playback, "PLAY_QUEUE", (playback,)) in fired
    assert (f"{session}.volume.muted", "UNMUTE", (f"{session}.volume.audible",)) in fired
    assert (f"{session}.quality.sd", "QUALITY_UP", (f"{session}.quality.hd",)) in fired
    assert state.leaves == tuple(
        f"{session}.{leaf}" for leaf in ("transport.playing", "volume.audible", "quality.hd")
    )


@pytest.mark.parametrize("name", sorted(CHARTS))
def test_an_unknown_event_and_an_invalid_payload_are_rejected(name: str) -> None:
    chart = CHARTS[name]
    start = chart.start()
    unknown = chart.send(start, "NOT_AN_EVENT_OF_" + name.upper())
    assert (unknown.status, unknown.reason) == (Status.REJECTED, UNKNOWN_EVENT)
    event = sorted(chart.ir.events)[0]
    invalid = chart.send(start, event, {"not_a_declared_field": True})
    assert (invalid.status, invalid.reason) == (Status.REJECTED, INVALID_PAYLOAD)
    assert invalid.state == start and unknown.state == start
