"""statekit.runner: the durable runner, the only package of statekit that does I/O.

Modules: `store` (`open_store`; the `Store` base, its SQLite and PostgreSQL
dialects, the versioned schema and the row records), `runner` (`Runner`:
read → pure step → write), `sharding` (`ShardedRunner`: instances spread
over several databases by ID) and `shard_layout` (the route and the check of
a shard set), `transaction` (the decisions of one write
transaction), `outcome` (`Outcome` and the runner's reasons), `instance`
(what `load` and `history` return), `stored_state` (a state as the instance
row stores it), `hashes` (payload and text hashes), `evidence` (what is
stored with each event), `chart_versions` (`ChartSet`, carrying a state over
to a newer version), `outbox` (`Dispatcher`, `Inbox`), `history`,
`snapshots` and `verify` (rebuilding from the history).
"""
