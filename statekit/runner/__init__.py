"""statekit.runner: the durable runner, the only package of statekit that does I/O.

Modules: `store` (`open_store`), `sql` (the `Store` base and its shared SQL),
`sqlite_store` and `postgres_store` (each dialect's locking), `migrations`
(the versioned schema), `runner` (`Runner`: read → pure step → write),
`outcome` (`Outcome` and the runner's reasons), `records` and `rows` (stored
forms), `charts` (chart versions), `outbox` (`Dispatcher`, `Inbox`),
`snapshots` and `verify` (rebuilding from the history).
"""
