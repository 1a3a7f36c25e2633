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

from statekit.engine.applied_results import build_evidence
from statekit.engine.record_makers import CHANGE_TWIN, MICROSTEP_TWIN, make_change, make_microstep
from statekit.engine.result import ContextChange, EmittedMessage, FiredTransition, Microstep
from statekit.engine.tables import EMPTY, MicrostepPlan, Tables
from statekit.engine.trace import AppliedMicrostep, AssignedValue, InternalEvent

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
    if MICROSTEP_TWIN is not None and CHANGE_TWIN is not None:
        return _inline_maker(fired, exited, entered, raised, MICROSTEP_TWIN, CHANGE_TWIN)
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


def _inline_maker(
    fired: tuple[FiredTransition, ...],
    exited: tuple[str, ...],
    entered: tuple[str, ...],
    raised: tuple[str, ...],
    micro_twin: type[Any],
    change_twin: type[Any],
) -> EvidenceMaker:
    """`prebuilt_evidence`'s maker with the records built inline through their twins
    (`statekit.engine.record_makers`), no maker's frame per record: the evidence of
    bench/xstate_peer.py's guarded chart (one assign an event) went from 10,900 to 9,900
    instructions (callgrind, 20,000 calls)."""
    view = MappingProxyType
    microstep_class, change_class = Microstep, ContextChange

    def evidence(
        name: str,
        payload: Mapping[str, Any],
        changes: tuple[AssignedValue, ...],
        emitted: tuple[EmittedMessage, ...],
    ) -> tuple[Microstep, ...]:
        shown = EMPTY if not payload else payload if payload.__class__ is view else view(payload)
        if not changes:
            made: tuple[ContextChange, ...] = ()
        elif len(changes) == 1:
            record = change_twin(*changes[0])
            record.__class__ = change_class
            made = (record,)
        else:
            listed = []
            for change in changes:
                record = change_twin(*change)
                record.__class__ = change_class
                listed.append(record)
            made = tuple(listed)
        ids = (
            ()
            if not emitted
            else (emitted[0].message_id,)
            if len(emitted) == 1
            else tuple([m.message_id for m in emitted])
        )
        step = micro_twin(name, shown, fired, exited, entered, made, ids, raised)
        step.__class__ = microstep_class
        return (step,)

    return evidence


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
        return (make_microstep(name, shown, fired, plan.exited, plan.entered, (), (), ()),)
    trace = [
        AppliedMicrostep(event if i == 0 else None, plan, (), 0, 0, ())
        for i, plan in enumerate(plans)
    ]
    return build_evidence(tables, trace, ())
