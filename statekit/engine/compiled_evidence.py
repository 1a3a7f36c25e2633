"""The evidence of a one-microstep compiled macrostep, prebuilt but for its data.

`build_evidence` (`statekit.engine.applied_results`) turns any trace into
`Microstep` records: per microstep it looks up the fired transitions' records,
decides what to redact and how many changes and messages there are. For a
compiled macrostep (`statekit.engine.compiled_macrostep`) of one microstep in a
chart without secrets, all of that but the event's name and payload, the
context changes and the messages' ids is known when the macrostep is compiled:
`prebuilt_evidence` keeps it once, and `one_microstep` adds this event's data: the
record `build_evidence` gives for the same trace (the differential tests compare
them, and their JSON, with the general loop's), made when the step is (not when the
evidence is first read: it is one C call, `Microstep` being a named tuple, and the
trace's changes are its records as they are). On bench/xstate_peer.py's guarded chart
(general path, one assign an event) `Chart.send` with its evidence read went from
44,000 to 35,300 instructions an event (callgrind), against 33,400 and 34,500
without the evidence read: the two slotted records a maker built on first read cost
more than the step's own work.
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType
from typing import Any, NamedTuple

from statekit.engine.applied_results import build_evidence
from statekit.engine.result import EmittedMessage, FiredTransition, Microstep
from statekit.engine.tables import EMPTY, MicrostepPlan, Tables
from statekit.engine.trace import AppliedMicrostep, AssignedValue, InternalEvent

_new = tuple.__new__


class PrebuiltEvidence(NamedTuple):
    """What the one `Microstep` of a compiled one-microstep macrostep shows that is known
    when the macrostep is compiled: the transitions it fires, the states it exits and
    enters, the events it raises."""

    fired: tuple[FiredTransition, ...]
    exited: tuple[str, ...]
    entered: tuple[str, ...]
    raised: tuple[str, ...]


def prebuilt_evidence(
    tables: Tables, plan: MicrostepPlan, raised: tuple[str, ...]
) -> PrebuiltEvidence | None:
    """The prebuilt evidence of a one-microstep macrostep that fires `plan` and raises
    `raised`; None when the chart has a secret field (then `build_evidence` redacts)."""
    if tables.secret_context or any(tables.secret_payload.values()):
        return None
    return PrebuiltEvidence(tables.fired_all(plan.transitions), plan.exited, plan.entered, raised)


def one_microstep(
    prebuilt: PrebuiltEvidence,
    name: str,
    payload: Mapping[str, Any],
    changes: tuple[AssignedValue, ...],
    emitted: tuple[EmittedMessage, ...],
) -> tuple[Microstep]:
    """The evidence of `prebuilt` for this event, its changes (the trace's records as they
    are: `AssignedValue` is `ContextChange`) and its messages: one `Microstep`, made by
    one C call (a named tuple from its fields)."""
    fired, exited, entered, raised = prebuilt
    view = MappingProxyType
    shown = EMPTY if not payload else payload if payload.__class__ is view else view(payload)
    ids = (
        ()
        if not emitted
        else (emitted[0].message_id,)
        if len(emitted) == 1
        else tuple([m.message_id for m in emitted])
    )
    fields = (name, shown, fired, exited, entered, changes, ids, raised, (), (), ())
    return (_new(Microstep, fields),)


def static_evidence(
    tables: Tables, event: InternalEvent, plans: tuple[MicrostepPlan, ...]
) -> tuple[Microstep, ...]:
    """The evidence of a data-free macrostep of the memo (`plans`, the event's microstep
    first): for one microstep whose payload is not secret, its one record made directly
    (on bench/xstate_peer.py's flat chart, `Chart.send` with the evidence read went from
    2.7 to 1.7 µs an event); else `build_evidence` of its trace."""
    name, payload = event
    if len(plans) == 1 and not (payload and tables.secret_payload.get(name)):
        plan = plans[0]
        view = MappingProxyType
        shown = EMPTY if not payload else payload if payload.__class__ is view else view(payload)
        fired = tables.fired_all(plan.transitions)
        return (Microstep(name, shown, fired, plan.exited, plan.entered, (), (), ()),)
    trace = [
        AppliedMicrostep(event if i == 0 else None, plan, (), 0, 0, ())
        for i, plan in enumerate(plans)
    ]
    return build_evidence(tables, trace, ())
