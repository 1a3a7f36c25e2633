"""The evidence stored with each accepted event: its microsteps, and the race it followed.

Two stored forms, both canonical JSON; `evidence_data` reads either and gives
the full form, which is what the history API returns and `verify` compares:

- the full form (rows written before store schema 5, and migration entries):
  `{"microsteps": [STEP, ...], "race": CONFLICT, "rejected": {reason, message}}`
  (`race` only when there is one, `rejected` only for a rejected timer
  delivery), each STEP an object with the keys of `microstep_data`;
- the compact form (what the runner writes since schema 5, about a third of
  the size): `[2, [STEP, ...]]`, or `[2, [STEP, ...], OTHER]` where OTHER is
  an object with the full form's other keys (`race`, `rejected`); each STEP an
  array `[event, payload, transitions, exited, entered, changes, emitted,
  raised]` in that order, followed by an object holding any other key of the
  microstep when it has one; each transition `[id, source, targets, kind]`
  (an object when it has other keys); `emitted` is the number of messages
  when their IDs are the engine's own (`<event id>/<position>`, positions
  counted across the event's microsteps), else the list of IDs.

Nothing is dropped: the compact form holds the same values without repeating
the key names, so expanding it gives the full form exactly. On disk the store
also leaves out the first step's event type and payload, which are the event
row's own (`statekit.runner.store.packing`); it gives the text back whole.
"""

from __future__ import annotations

from types import MappingProxyType
from typing import Any

from statekit.compiler.canonical import canonical_json
from statekit.engine.result import Microstep, Result, Status
from statekit.runner.errors import CorruptRowError
from statekit.runner.outcome import Conflict
from statekit.runner.stored_state import loads

COMPACT = 2
"""The first element of the compact form (the full form is an object)."""
MAX_COUNTED = 1_000_000
"""The largest message count the compact form holds (more are written as their IDs), so
that a tampered count cannot make a reader build an unbounded list."""
_STEP_KEYS = (
    "event",
    "payload",
    "transitions",
    "exited",
    "entered",
    "changes",
    "emitted",
    "raised",
)
_TRANSITION_KEYS = ("id", "source", "targets", "kind")
_TIMED_KEYS = ("armed", "cancelled", "sent")
"""The keys of `microstep_data` written only when not empty, in that order."""


class EvidenceFormError(ValueError):
    """A stored evidence text that is neither form (tampered or damaged)."""


def microstep_data(step: Microstep) -> dict[str, Any]:
    """A microstep as JSON-ready data, the full form (the timers it armed and cancelled
    and the events it sent only when there are any, so evidence without time is as it
    was; the compact form keeps them in its extra object)."""
    data = {
        "event": step.event,
        "payload": dict(step.payload),
        "transitions": [
            {"id": t.id, "source": t.source, "targets": list(t.targets), "kind": t.kind}
            for t in step.transitions
        ],
        "exited": list(step.exited),
        "entered": list(step.entered),
        "changes": [[c.field, c.old, c.new] for c in step.changes],
        "emitted": list(step.emitted),
        "raised": list(step.raised),
    }
    for name in _TIMED_KEYS:
        value = getattr(step, name)
        if value:
            data[name] = list(value)
    return data


def evidence_json(result: Result, race: Conflict | None, event_id: str) -> str:
    """The evidence stored with the event `event_id`, in the compact form: its
    microsteps, the conflict it was re-decided after (`race`), and for a timer delivery
    the chart rejected (recorded because it consumed the timer) the reason and message."""
    position = 0
    steps: list[Any] = []
    for step in result.evidence:
        steps.append(_compact_step(step, event_id, position))
        position += len(step.emitted)
    compact: list[Any] = [COMPACT, steps]
    extra: dict[str, Any] = {}
    if result.status is Status.REJECTED:
        extra["rejected"] = {"reason": result.reason, "message": result.message}
    if race is not None:
        extra["race"] = race.to_data()
    if extra:
        compact.append(extra)
    return canonical_json(compact)


def _compact_step(step: Microstep, event_id: str, position: int) -> list[Any]:
    """`microstep_data(step)` in the compact form, built from the microstep directly
    (this runs once per stored microstep: going through the full form's dictionaries
    first cost more than the rest of the evidence together). The record unpacked at
    once, the usual counts (one transition, no message) without a comprehension: on
    bench/xstate_peer.py's guarded chart, 17,800 -> 7,000 instructions a step."""
    # The record's tuples go in as they are: JSON writes a tuple as the array a list is.
    event, payload, transitions, exited, entered, changes, ids, raised, armed, cancelled, sent = (
        step
    )
    emitted: Any = ids
    count = len(ids)
    if not count:
        emitted = 0
    elif count == 1:  # the usual step that emits (without a generator)
        if ids[0] == f"{event_id}/{position}":
            emitted = 1
    elif count <= MAX_COUNTED and all(m == f"{event_id}/{position + k}" for k, m in enumerate(ids)):
        emitted = count
    if len(transitions) == 1:
        t = transitions[0]
        fired: list[Any] = [[t.id, t.source, t.targets, t.kind]]
    else:
        fired = [[t.id, t.source, t.targets, t.kind] for t in transitions]
    if len(changes) == 1:  # [field, old, new] each (orjson writes no named tuple)
        field, old, new = changes[0]
        changed: list[Any] = [[field, old, new]]
    else:
        changed = [[field, old, new] for field, old, new in changes]
    out = [
        event,
        # the engine's payloads are read-only views: a view's copy is its dict's (3,800
        # instructions through `dict()`, 800 so)
        payload.copy() if payload.__class__ is MappingProxyType else dict(payload),
        fired,
        exited,
        entered,
        changed,
        emitted,
        raised,
    ]
    if armed or cancelled or sent:  # _TIMED_KEYS written out, not looped over with getattr:
        # once per stored microstep that armed or cancelled a timer
        extra = {}
        if armed:
            extra["armed"] = list(armed)
        if cancelled:
            extra["cancelled"] = list(cancelled)
        if sent:
            extra["sent"] = list(sent)
        out.append(extra)
    return out


def evidence_data(value: Any, event_id: str) -> dict[str, Any]:
    """The full form of a stored evidence value (parsed JSON, either form) of the event
    `event_id`; EvidenceFormError when it is neither form."""
    if isinstance(value, dict):
        return value
    if not (isinstance(value, list) and len(value) in (2, 3) and value[0] == COMPACT):
        raise EvidenceFormError("evidence is neither a JSON object nor the compact form")
    steps = value[1]
    if not isinstance(steps, list):
        raise EvidenceFormError("evidence: the microsteps are not a list")
    microsteps: list[dict[str, Any]] = []
    position = 0
    for step in steps:
        full = _full_step(step, event_id, position)
        position += len(full["emitted"])
        microsteps.append(full)
    data: dict[str, Any] = {"microsteps": microsteps}
    if len(value) == 3:
        if not isinstance(value[2], dict) or "microsteps" in value[2]:
            raise EvidenceFormError(f"evidence: its other keys are not an object: {value[2]!r}")
        data.update(value[2])
    return data


def _full_step(step: Any, event_id: str, position: int) -> dict[str, Any]:
    if not isinstance(step, list) or len(step) not in (8, 9):
        raise EvidenceFormError(f"evidence: a microstep is not an array of 8 or 9: {step!r}")
    data = dict(zip(_STEP_KEYS, step, strict=False))
    if len(step) == 9:
        if not isinstance(step[8], dict):
            raise EvidenceFormError(
                f"evidence: a microstep's extra keys are not an object: {step!r}"
            )
        data.update(step[8])
    emitted = data["emitted"]
    if type(emitted) is int:
        if not 0 <= emitted <= MAX_COUNTED:
            raise EvidenceFormError(f"evidence: a message count out of range: {emitted}")
        data["emitted"] = [f"{event_id}/{position + k}" for k in range(emitted)]
    elif not isinstance(emitted, list):
        raise EvidenceFormError(f"evidence: emitted is neither a count nor a list: {emitted!r}")
    transitions = data["transitions"]
    if not isinstance(transitions, list):
        raise EvidenceFormError(f"evidence: transitions are not a list: {transitions!r}")
    full: list[Any] = []
    for t in transitions:
        if isinstance(t, list):
            if len(t) != len(_TRANSITION_KEYS):
                raise EvidenceFormError(f"evidence: a transition is not an array of 4: {t!r}")
            t = dict(zip(_TRANSITION_KEYS, t, strict=True))
        full.append(t)
    data["transitions"] = full
    return data


def stored_evidence(text: str, event_id: str, what: str) -> dict[str, Any]:
    """The full form of a stored evidence text; CorruptRowError naming `what` when it is
    not JSON or neither form."""
    try:
        return evidence_data(loads(text, what), event_id)
    except EvidenceFormError as exc:
        raise CorruptRowError(f"{what}: {exc}") from exc
