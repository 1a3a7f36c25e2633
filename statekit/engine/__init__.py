"""statekit.engine: the pure step over a compiled chart (no I/O, no clock).

Modules: `chart` (the public `Chart`), `state` (`State` and its canonical
JSON), `result` (`Result`, `Status`, reason codes), `evidence` (the frozen
evidence records), `step` (the classified step, rule by rule), `algorithm`
(the W3C SCXML procedures), `memo` (the memo of data-free macrosteps
around them), `abstract` (abstract execution, the static analysis's only
door in), `plans` (a microstep as data), `tables` (interned configurations,
hot-path caches and their records), `macrostep_run` (the accumulator of one
macrostep), `trace` (the applied microsteps), `effect_interpreter` (running
effects) with its `value_domain` (concrete or abstract values),
`evaluation` (the one guard and value evaluator), `errors`, `invariants`,
`validation`, `replay`; time: `timers` (`ArmedTimer`, `SentEvent`, the
timers a state holds), `timer_effects` (arming, cancelling, sending) and
`state_timers` (reading them back from JSON).
"""

from statekit.engine.timers import ArmedTimer, SentEvent

__all__ = ["ArmedTimer", "SentEvent"]
