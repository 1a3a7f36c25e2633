"""An invocation's `finalize:` in the durable runner: the child's events are finalized in
the parent's step as in the Simulator, and a replay (verify, a runner started again on
the store) finds the same state: the event's ID says which child sent it."""

from __future__ import annotations

from pathlib import Path

from finalize_charts import PARENT, PROBE

import statekit
from statekit.engine.chart import Chart
from statekit.runner.runner import Runner
from statekit.runner.store import open_store

PROBE_ID = "c/probe/0"


def load_text(folder: Path, text: str) -> Chart:
    name = text.split("statechart:", 1)[1].split()[0]
    (folder / f"{name}.yaml").write_text(text, encoding="utf-8")
    return statekit.load(folder / f"{name}.yaml")


def _runner(url: str, folder: Path) -> Runner:
    parent, probe = load_text(folder, PARENT), load_text(folder, PROBE)
    return Runner(parent, open_store(url), charts=[probe])


def test_a_finalized_family_replays_to_the_same_state(store_url: str, tmp_path: Path) -> None:
    runner = _runner(store_url, tmp_path)
    runner.create("c")
    assert runner.apply(PROBE_ID, "m1", "measure", {"value": 3}).applied
    parent = runner.load("c").state
    assert set(parent.leaves) == {"collecting.left.waiting", "collecting.right.idle"}
    assert (parent.context["last"], parent.context["finalized"]) == (3, 1)
    assert runner.apply(PROBE_ID, "q1", "quit").applied  # done.invoke.probe: finalized too
    parent = runner.load("c").state
    assert set(parent.leaves) == {"collecting.left.finished", "collecting.right.idle"}
    assert (parent.context["last"], parent.context["ref"]) == (None, "R-1")
    assert parent.context["finalized"] == 2
    again = _runner(store_url, tmp_path)  # a runner started again on the same store
    assert again.load("c").state.context == parent.context
    for instance_id in ("c", PROBE_ID, "c/other/0"):
        report = again.verify(instance_id)
        assert report.ok, (instance_id, report.differences)


def test_another_childs_event_is_not_finalized_durably(store_url: str, tmp_path: Path) -> None:
    runner = _runner(store_url, tmp_path)
    runner.create("c")
    assert runner.apply("c", "p1", "poke").applied
    parent = runner.load("c").state
    assert (parent.context["last"], parent.context["finalized"]) == (0, 0)
    assert runner.verify("c").ok
