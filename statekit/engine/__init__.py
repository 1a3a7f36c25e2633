"""statekit.engine: the pure step over a compiled chart (no I/O, no clock).

Modules: `chart` (the public `Chart`), `state` (`State` and its canonical
JSON), `result` (`Result`, `Status`, reason codes), `evidence` (the frozen
evidence records), `step` (the classified step), `algorithm` (the W3C SCXML
procedures, also used by static analysis), `plans` (a microstep as data),
`tables` (interned configurations and hot-path caches), `macrostep_run`
(the accumulator of one macrostep), `trace` (the applied microsteps),
`effect_interpreter` (running effects) with its `value_domain` (concrete or
abstract values), `evaluation` (the one guard and value evaluator),
`errors`, `invariants`, `validation`, `replay`.
"""
