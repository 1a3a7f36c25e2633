"""`statekit.testing.paths(chart)`: covering paths as data, and the model-based test of
docs/testing.md (a small hand-written implementation driven by them)."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest
from chart_helpers import chart_of

import statekit
from statekit.analysis.explorer import explore
from statekit.analysis.paths import covering_paths
from statekit.engine.chart import Chart
from statekit.testing import CoveringPath, PathsError, paths

MACHINES = Path(__file__).resolve().parents[2] / "machines"

DOOR = """
statechart: door
events: {OPEN: {}, CLOSE: {}, LOCK: {}, UNLOCK: {}}
initial: closed
states:
  closed:
    on: {OPEN: open, LOCK: locked}
  open:
    on: {CLOSE: closed}
    reject: {LOCK: DOOR_OPEN}
  locked:
    on: {UNLOCK: closed}
    reject: {OPEN: LOCKED}
"""


class HandWrittenDoor:
    """The implementation under test: what a team writes without statekit."""

    def __init__(self) -> None:
        self.state = "closed"

    def handle(self, event: str) -> tuple[str, str | None]:
        moves = {
            ("closed", "OPEN"): "open",
            ("closed", "LOCK"): "locked",
            ("open", "CLOSE"): "closed",
            ("locked", "UNLOCK"): "closed",
        }
        refusals = {("open", "LOCK"): "DOOR_OPEN", ("locked", "OPEN"): "LOCKED"}
        if (self.state, event) in moves:
            self.state = moves[self.state, event]
            return "APPLIED", None
        return "REJECTED", refusals.get((self.state, event), "UNDEFINED_TRANSITION")


DOOR_PATHS = paths(Chart(chart_of(DOOR)))


@pytest.mark.parametrize("path", DOOR_PATHS, ids=lambda p: p.id)
def test_the_hand_written_door_agrees_with_the_chart(path: CoveringPath) -> None:
    door = HandWrittenDoor()
    for step in path.steps:
        assert step.event is not None
        assert door.handle(step.event) == (step.status, step.reason), path.events
        if step.configuration:
            assert step.configuration == "{" + door.state + "}"


def test_a_wrong_implementation_is_caught_by_some_path() -> None:
    class Forgetful(HandWrittenDoor):
        def handle(self, event: str) -> tuple[str, str | None]:
            if (self.state, event) == ("locked", "OPEN"):
                return "REJECTED", "UNDEFINED_TRANSITION"  # forgot the LOCKED reason
            return super().handle(event)

    def agrees(path: CoveringPath) -> bool:
        door = Forgetful()
        return all(door.handle(s.event or "") == (s.status, s.reason) for s in path.steps)

    assert not all(agrees(p) for p in DOOR_PATHS)


@pytest.mark.parametrize("name", ["payment", "task", "media_player"])
def test_the_paths_are_those_of_statekit_paths_and_cover_everything(name: str) -> None:
    chart = statekit.load(MACHINES / f"{name}.yaml")
    found = paths(chart)
    suite = covering_paths(explore(chart.ir))
    assert found == paths(chart.ir) == paths(MACHINES / f"{name}.yaml")
    assert len({p.id for p in found}) == len(found) == len(suite.paths)
    fired = {t for p in found for t in p.transitions}
    assert fired == set(suite.transitions)
    assert {c for p in found for c in p.rejections} == set(suite.rejections)
    for p in found:
        assert p.events == tuple(s.event for s in p.steps)
        assert p.id.split("-")[1:] == list(p.events)


def test_sending_each_path_to_the_chart_gives_each_steps_classification() -> None:
    chart = Chart(chart_of(DOOR))
    for path in DOOR_PATHS:
        state = chart.start()
        for step in path.steps:
            result = chart.send(state, step.event or "")
            assert (result.status.value, result.reason) == (step.status, step.reason)
            state = result.state


def test_a_file_that_does_not_compile_raises(tmp_path: Path) -> None:
    bad = tmp_path / "bad.yaml"
    bad.write_text(textwrap.dedent("statechart: [\n"))
    with pytest.raises(PathsError, match=r"bad\.yaml: does not compile"):
        paths(bad)
