"""Which engines' snapshots a runner trusts: the same step semantics and state format,
whatever the package's version (an upgrade that changes no semantics keeps every
store's snapshots usable, and `verify` clean)."""

from __future__ import annotations

import pytest
from runner_charts import COUNTER, chart_from

from statekit import __version__
from statekit.runner.runner import Runner
from statekit.runner.snapshots import ENGINE_VERSION, STEP_SEMANTICS
from statekit.runner.store import open_store

TRUSTED = (ENGINE_VERSION, "statekit-0.1.0/state-1")
REFUSED = (
    f"statekit-semantics-{STEP_SEMANTICS + 1}/state-1",
    f"statekit-semantics-{STEP_SEMANTICS}/state-2",
    "statekit-0.0.1/state-1",
    "",
)


def _runner_with_a_snapshot(store_url: str, engine_version: str) -> Runner:
    runner = Runner(chart_from(COUNTER), open_store(store_url), snapshot_every=2)
    runner.create("c")
    for number in range(3):
        assert runner.apply("c", f"e{number}", "Incr", {"by": 1}).applied
    with runner.store.write():
        runner.store.execute("UPDATE statekit_snapshots SET engine_version = ?", (engine_version,))
    return runner


def test_the_engine_version_does_not_name_the_package_version() -> None:
    assert __version__ not in ENGINE_VERSION
    assert f"statekit-semantics-{STEP_SEMANTICS}/state-1" == ENGINE_VERSION


@pytest.mark.parametrize("engine_version", TRUSTED)
def test_a_snapshot_of_the_same_semantics_is_used(store_url: str, engine_version: str) -> None:
    runner = _runner_with_a_snapshot(store_url, engine_version)
    rebuilt = runner.rebuild("c")
    assert rebuilt.snapshot == 2 and rebuilt.refused == () and rebuilt.replayed == 1
    assert runner.verify("c").ok


@pytest.mark.parametrize("engine_version", REFUSED)
def test_a_snapshot_of_other_semantics_is_refused_and_replayed(
    store_url: str, engine_version: str
) -> None:
    runner = _runner_with_a_snapshot(store_url, engine_version)
    rebuilt = runner.rebuild("c")
    assert rebuilt.snapshot is None and rebuilt.replayed == 3
    [why] = rebuilt.refused
    assert why == f"snapshot at 2: made by engine {engine_version}, this is {ENGINE_VERSION}"
    assert rebuilt.state == runner.load("c").state
    assert runner.verify("c").snapshot_problems == (f"refused {why}",)
