"""What an APPLIED step returns: its result, its outbox messages and its evidence.

`statekit.engine.step` classifies an event and runs its macrostep; this module turns
the macrostep that applied into the `Result`: the emitted messages numbered
`<event id>/<position>` (`messages`), the evidence's microstep records built on
first access with secrets redacted (`build_evidence`, `redacted`).
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping, Sequence
from types import MappingProxyType
from typing import Any

from statekit.compiler.canonical import canonical_json
from statekit.engine.record_makers import make_message
from statekit.engine.result import (
    REDACTED,
    ContextChange,
    EmittedMessage,
    Microstep,
    Result,
    Status,
)
from statekit.engine.state import State
from statekit.engine.tables import EMPTY, Tables
from statekit.engine.timer_plan import Logs
from statekit.engine.timers import TimerRun
from statekit.engine.trace import AppliedMicrostep

APPLIED = Status.APPLIED

# short local names for the record makers: one call per microstep, message and change
_new = tuple.__new__  # a named tuple built in C, without its `__new__`'s frame
_change = ContextChange
_message = make_message
_NO_LOGS: tuple[tuple[str, ...], tuple[str, ...], tuple[str, ...]] = ((), (), ())
"""A microstep's timer logs (armed, cancelled, sent) when its macrostep ran no timer."""


def applied_result(
    tables: Tables,
    before: State | None,
    event_type: str,
    payload: Mapping[str, Any],
    event_id: str | None,
    after: State,
    raw_emitted: list[tuple[str, dict[str, Any]]],
    trace: Sequence[AppliedMicrostep],
    timing: TimerRun | None = None,
) -> Result:
    """The APPLIED result of a macrostep that ends in `after` (its invariants checked by
    the caller): the outbox messages numbered (see `messages`; `before` is None for the
    initial macrostep), the evidence built on first access; `timing` is the
    macrostep's timers when it ran a timer effect."""
    emitted = (
        messages(tables, before, event_type, payload, event_id, raw_emitted) if raw_emitted else ()
    )
    if timing is None:  # no timer logs to read (bench/xstate_peer.py: most events)
        result = Result(
            APPLIED,
            None,
            after,
            event_type,
            event_id,
            emitted,
            lambda: build_evidence(tables, trace, emitted),
        )
        if tables.chart.invocations:  # its starts and cancels, read without the evidence
            result._moves = trace
        return result
    result = Result(
        APPLIED,
        None,
        after,
        event_type,
        event_id,
        emitted,
        lambda: build_evidence(tables, trace, emitted, timing.microstep_logs(len(trace))),
    )
    result._timing = timing
    if tables.chart.invocations:
        result._moves = trace
    return result


def redacted(tables: Tables, event: str | None, payload: Mapping[str, Any]) -> Mapping[str, Any]:
    """The payload as evidence shows it: secret fields replaced by `REDACTED`. A payload
    without secrets is shown through a read-only view, not copied: the engine's payloads
    (validated, raised or done) are fresh dicts nothing writes to after the step."""
    if not payload:
        return EMPTY
    secret = tables.secret_payload.get(event) if event is not None else None
    if not secret:
        return payload if payload.__class__ is MappingProxyType else MappingProxyType(payload)
    return MappingProxyType({k: REDACTED if k in secret else v for k, v in payload.items()})


def messages(
    tables: Tables,
    state: State | None,
    event: str,
    payload: Mapping[str, Any],
    event_id: str | None,
    raw: list[tuple[str, dict[str, Any]]],
) -> tuple[EmittedMessage, ...]:
    """Outbox messages with ids `<event id>/<position>`. Without an event ID the id is
    derived from the chart digest, the state and the event (secrets redacted)."""
    if event_id is None:
        basis = [tables.digest, state.to_data() if state else None, event]
        basis.append(dict(redacted(tables, event, payload)))
        event_id = "auto-" + hashlib.sha256(canonical_json(basis).encode()).hexdigest()[:32]
    view = MappingProxyType
    if len(raw) == 1:  # the common case, without a comprehension
        kind, body = raw[0]
        return (_message(f"{event_id}/0", kind, view(body)),)
    return tuple(
        [_message(f"{event_id}/{i}", kind, view(body)) for i, (kind, body) in enumerate(raw)]
    )


def timer_logs(timing: TimerRun | None, count: int) -> Logs | None:
    """The timer logs of a macrostep's `TimerRun` for its evidence (None: it ran none)."""
    return None if timing is None else timing.microstep_logs(count)


def build_evidence(
    tables: Tables,
    trace: Sequence[AppliedMicrostep],
    emitted: tuple[EmittedMessage, ...],
    logs: Logs | None = None,
) -> tuple[Microstep, ...]:
    """The microsteps as frozen records, with secrets redacted (and, given the timer
    `logs` of a macrostep that ran timer effects, the timers each armed and cancelled
    and the events it sent)."""
    secret_ctx = tables.secret_context
    secret_payload = tables.secret_payload
    fired = tables.fired_all
    view = MappingProxyType
    out = []
    for index, (event, plan, changes, start, end, raised) in enumerate(trace):
        name, payload = (None, EMPTY) if event is None else event
        if not payload:
            shown = EMPTY
        elif secret_payload.get(name):  # type: ignore[arg-type]
            shown = redacted(tables, name, payload)
        else:  # the same view `redacted` returns, without the call
            shown = payload if payload.__class__ is view else view(payload)
        if not changes:
            made: tuple[ContextChange, ...] = ()
        elif secret_ctx:  # the trace's own records, but for the secret fields
            made = tuple(
                [
                    _change(c.field, REDACTED, REDACTED) if c.field in secret_ctx else c
                    for c in changes
                ]
            )
        else:  # the trace's records are the evidence's (the same named tuple)
            made = changes
        ids = (
            ()
            if end == start
            else (emitted[start].message_id,)
            if end == start + 1
            else tuple([m.message_id for m in emitted[start:end]])
        )
        armed, cancelled, sent = _NO_LOGS if logs is None else logs[index]
        transitions, exited, entered = fired(plan.transitions), plan.exited, plan.entered
        fields = (
            name,
            shown,
            transitions,
            exited,
            entered,
            made,
            ids,
            raised,
            armed,
            cancelled,
            sent,
        )
        out.append(_new(Microstep, fields))
    return tuple(out)
