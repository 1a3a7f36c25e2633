"""Every transition and every rejection reason of the reference machines (`machines/`),
reached by deterministic tests: the covering paths of `statekit.testing.paths`
replayed step by step, plus an unknown event and an invalid payload per chart.

The paths name each step's event, classification, configuration and fired
transitions; `replay` finds their payloads with the library's search
(`statekit.analysis.witness.search_payloads`, the one behind every payload
`statekit paths`, `explain` and lint print: candidate values from each
field's declared type, the chart's literals and the instance's context,
backtracking over the path, with a bounded number of sends), and a step
counts only when the chart answers it with exactly the path's status,
reason, fired transitions and configuration. A timer step
(`after(15m)@processing`) is sent by its timer event's name, which delivers the
armed timer. A path the search cannot replay fails its test, unless the step it
stops at is listed in `OUT_OF_REACH` with the reason no data can take it (a test
checks each entry still is). `make test`'s coverage gate
(`--statekit-cov=machines --statekit-cov-fail-under=transition:100,rejection:100`)
is met by this file alone (`tests/testing/test_machines_coverage.py` checks that).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

import statekit
from statekit.analysis.paths import PathStep
from statekit.analysis.witness import (
    Expected,
    Payload,
    candidates,
    chart_literals,
    configuration_text,
    search_payloads,
)
from statekit.engine.chart import Chart
from statekit.engine.result import INVALID_PAYLOAD, UNKNOWN_EVENT, Result, Status
from statekit.testing import CoveringPath, paths

MACHINES = Path(__file__).resolve().parents[2] / "machines"
CHARTS = {file.stem: statekit.load(file) for file in sorted(MACHINES.glob("*.yaml"))}

SEND_BUDGET = 50_000
"""How many sends one instance of a replay may make, over every start context it tries,
before it settles for the steps it took (each search is bounded by the library's own
`witness.SEND_BUDGET` too)."""


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


def _expected(step: PathStep) -> Expected:
    return Expected(
        step.event or "", step.status, step.reason, step.transitions, step.configuration
    )


def replay(
    chart: Chart, path: CoveringPath, out_of_reach: frozenset[int] = frozenset()
) -> tuple[Segment, ...]:
    """Replay `path` on as few instances as it needs; raise `NotReplayable` when it cannot.

    Each instance's payloads come from the library's search
    (`statekit.analysis.witness.search_payloads`, the one `statekit paths`, `explain`
    and lint's traces print from), which takes a step only when the chart answers it
    exactly as the path says, and passes over a refusal it cannot bring about. One
    instance takes the steps as far as some payloads let it, from the declared
    defaults or else from a start context with one field changed (`start_contexts`).
    When it stops short of step k (an applied step it cannot take, or a refusal it
    passed over), a new instance takes the applied steps before k again (its trunk,
    with data of its own) and goes on from step k: e.g. POWER_ON refused for a low
    battery and then applied from the same state. A new instance that cannot take
    step k either fails.

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
        expected = [_expected(steps[i]) for i in indexes]
        best: tuple[int, Mapping[str, Any], list[Payload | None]] | None = None
        budget = sends + SEND_BUDGET
        for context in start_contexts(chart):
            if sends >= budget:
                break
            try:
                state = chart.start(context)
            except statekit.StartError:
                continue
            found = search_payloads(chart, expected, state)
            sends += found.sends
            reached = next(
                (n for n, p in enumerate(found.payloads) if p is None), len(found.payloads)
            )
            if best is None or reached > best[0]:
                best = (reached, context, found.payloads)
            if reached == len(indexes):
                break
        if best is None or best[0] == 0 or indexes[best[0] - 1] < start:
            raise NotReplayable(path, start, sends)
        reached, started, payloads = best
        segments.append(_segment(chart, started, indexes[:reached], steps, payloads))
        if reached == len(indexes):
            break
        start = indexes[reached]
    return tuple(segments)


def _segment(
    chart: Chart,
    context: Mapping[str, Any],
    indexes: tuple[int, ...],
    steps: tuple[PathStep, ...],
    payloads: list[Payload | None],
) -> Segment:
    """The instance's results of the steps it took, sent again with the found payloads."""
    state = chart.start(context)
    results = []
    for i, payload in zip(indexes, payloads, strict=False):
        assert payload is not None
        event = steps[i].event
        assert event is not None
        result = chart.send(state, event, payload)
        results.append(result)
        state = result.state
    return Segment(context, indexes, tuple(results))


def start_contexts(chart: Chart) -> Iterator[dict[str, Any]]:
    """The declared defaults, then each single field set to one of its candidate values
    (`witness.candidates`)."""
    yield {}
    defaults = chart.start().context
    literals = chart_literals(chart.ir)
    for decl in chart.ir.context.values():
        for value in candidates(decl, defaults, literals):
            if value != defaults[decl.name] or type(value) is not type(defaults[decl.name]):
                yield {decl.name: value}


OUT_OF_REACH: dict[tuple[str, int, int, str], str] = {
    # (chart, path number, step number, event): why no data make the chart take that
    # step. The analysis takes every data guard both ways; these outcomes the charts'
    # own assignments rule out. `test_the_steps_out_of_reach_are_out_of_reach` keeps
    # the list true; the transitions only such paths fire are fired below
    # (`test_what_only_steps_out_of_reach_lead_to_is_reached_another_way`).
    # Re-derived with the library's search (`witness.search_payloads`) in place of
    # this module's older one: the same four steps, none reachable now, none added
    # (the same under PYTHONHASHSEED=1 and =2).
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
