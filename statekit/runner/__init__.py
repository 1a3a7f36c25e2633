"""statekit.runner: the durable runner, the only package of statekit that does I/O.

Modules: `store` (`open_store`; the `Store` base, its SQLite and PostgreSQL
dialects, the versioned schema and the row records), `runner` (`Runner`:
read → pure step → write), `transaction` (the decisions of one write
transaction), `outcome` (`Outcome` and the runner's reasons), `records`
(stored forms), `charts` (chart versions), `outbox` (`Dispatcher`, `Inbox`),
`snapshots` and `verify` (rebuilding from the history).
"""
