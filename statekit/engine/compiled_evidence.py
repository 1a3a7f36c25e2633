"""The evidence of a one-microstep compiled macrostep, prebuilt but for its data.

`build_evidence` (`statekit.engine.applied_results`) turns any trace into
`Microstep` records: per microstep it looks up the fired transitions' records,
decides what to redact and how many changes and messages there are. For a
compiled macrostep (`statekit.engine.compiled_macrostep`) of one microstep in a
chart without secrets, all of that but the event's name and payload, the
context changes and the messages' ids is known when the macrostep is compiled:
`prebuilt_evidence` binds it once, and the maker it returns fills in the rest,
giving the records `build_evidence` gives for the same trace (the differential
tests compare them, and their JSON, with the general loop's).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from types import MappingProxyType
from typing import Any

from statekit.engine.record_makers import make_change, make_microstep
from statekit.engine.result import EmittedMessage, Microstep
from statekit.engine.tables import EMPTY, MicrostepPlan, Tables
from statekit.engine.trace import AssignedValue

EvidenceMaker = Callable[
    [str, Mapping[str, Any], tuple[AssignedValue, ...], tuple[EmittedMessage, ...]],
    tuple[Microstep, ...],
]
"""(event name, payload, context changes, messages emitted) -> the evidence."""


def prebuilt_evidence(
    tables: Tables, plan: MicrostepPlan, raised: tuple[str, ...]
) -> EvidenceMaker | None:
    """The evidence maker of a one-microstep macrostep that fires `plan` and raises
    `raised`; None when the chart has a secret field (then `build_evidence` redacts)."""
    if tables.secret_context or any(tables.secret_payload.values()):
        return None
    fired = tables.fired_all(plan.transitions)
    exited, entered = plan.exited, plan.entered
    view = MappingProxyType
    microstep, change = make_microstep, make_change

    def evidence(
        name: str,
        payload: Mapping[str, Any],
        changes: tuple[AssignedValue, ...],
        emitted: tuple[EmittedMessage, ...],
    ) -> tuple[Microstep, ...]:
        shown = EMPTY if not payload else payload if payload.__class__ is view else view(payload)
        return (
            microstep(
                name,
                shown,
                fired,
                exited,
                entered,
                ()
                if not changes
                else (change(*changes[0]),)
                if len(changes) == 1
                else tuple([change(*c) for c in changes]),
                ()
                if not emitted
                else (emitted[0].message_id,)
                if len(emitted) == 1
                else tuple([m.message_id for m in emitted]),
                raised,
            ),
        )

    return evidence
