"""statekit.testing: helpers for tests and benchmarks, never needed to run charts.

- `paths(chart)` (`model_paths`): the covering paths of a chart as data, for
  model-based tests that parametrize over them (`CoveringPath`);
- `coverage`: the pytest plugin `--statekit-cov` (transition, classification,
  rejection and race coverage of a test run; see docs/testing.md);
- `Simulator` (`clock_simulator`): one chart instance on a virtual clock, for
  tests of charts with time ("start, send TaskStarted, advance 30 s, expect
  recovering");
- `FamilySimulator` (`family_simulator`): families of instances (charts that invoke
  charts and send to each other) on one virtual clock;
- `RunnerSimulator` (`simulator`): decides events in memory as the runner
  does, for the tests of code that sends events;
- `postgres_server` starts a throwaway PostgreSQL server on loopback
  (`ThrowawayPostgres`), for the runner's tests and benchmarks.

Names are imported on first use: the pytest plugin loads this package in every
pytest run, whether coverage is on or not.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from statekit.testing.clock_simulator import Simulator, SimulatorError
    from statekit.testing.family_simulator import FamilySimulator, FamilySimulatorError, FamilyStep
    from statekit.testing.model_paths import CoveringPath, PathsError, paths
    from statekit.testing.simulator import RunnerSimulator

__all__ = [
    "CoveringPath",
    "FamilySimulator",
    "FamilySimulatorError",
    "FamilyStep",
    "PathsError",
    "RunnerSimulator",
    "Simulator",
    "SimulatorError",
    "paths",
]


def __getattr__(name: str) -> Any:
    if name in ("Simulator", "SimulatorError"):
        from statekit.testing import clock_simulator

        return getattr(clock_simulator, name)
    if name in ("FamilySimulator", "FamilySimulatorError", "FamilyStep"):
        from statekit.testing import family_simulator

        return getattr(family_simulator, name)
    if name == "RunnerSimulator":
        from statekit.testing import simulator

        return simulator.RunnerSimulator
    if name in __all__:
        from statekit.testing import model_paths

        return getattr(model_paths, name)
    raise AttributeError(f"module 'statekit.testing' has no attribute {name!r}")
