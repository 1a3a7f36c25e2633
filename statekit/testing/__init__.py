"""statekit.testing: helpers for tests and benchmarks, never needed to run charts.

`postgres_server` starts a throwaway PostgreSQL server on loopback
(`ThrowawayPostgres`), for the runner's tests and benchmarks; `simulator`
decides events in memory as the runner does (`Simulator`), for the tests of
code that sends events.
"""

from statekit.testing.simulator import Simulator

__all__ = ["Simulator"]
