"""statekit.testing: helpers for tests and benchmarks, never needed to run charts.

- `paths(chart)` (`model_paths`): the covering paths of a chart as data, for
  model-based tests that parametrize over them (`CoveringPath`);
- `coverage`: the pytest plugin `--statekit-cov` (transition, classification,
  rejection and race coverage of a test run; see docs/testing.md);
- `Simulator` (`simulator`): decides events in memory as the runner does, for
  the tests of code that sends events;
- `postgres_server` starts a throwaway PostgreSQL server on loopback
  (`ThrowawayPostgres`), for the runner's tests and benchmarks.

Names are imported on first use: the pytest plugin loads this package in every
pytest run, whether coverage is on or not.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from statekit.testing.model_paths import CoveringPath, PathsError, paths
    from statekit.testing.simulator import Simulator

__all__ = ["CoveringPath", "PathsError", "Simulator", "paths"]


def __getattr__(name: str) -> Any:
    if name == "Simulator":
        from statekit.testing import simulator

        return simulator.Simulator
    if name in __all__:
        from statekit.testing import model_paths

        return getattr(model_paths, name)
    raise AttributeError(f"module 'statekit.testing' has no attribute {name!r}")
