"""statekit.engine: the pure step over a compiled chart (no I/O, no clock).

Modules: `chart` (the public `Chart`), `state` (`State` and its canonical
JSON), `result` (`Result`, `Status`, reason codes, evidence records), `step`
(the classified step), `algorithm` (the W3C SCXML procedures, also used by
static analysis), `plans` (a microstep as data), `tables` (interned
configurations and hot-path caches), `effects`, `invariants`, `validation`,
`replay`.
"""
