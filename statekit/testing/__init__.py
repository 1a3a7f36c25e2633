"""statekit.testing: helpers for tests and benchmarks, never needed to run charts.

`postgres_server` starts a throwaway PostgreSQL server on loopback
(`ThrowawayPostgres`), for the runner's tests and benchmarks.
"""
