"""The evidence stored with each accepted event: its microsteps, and the race it followed."""

from __future__ import annotations

from typing import Any

from statekit.compiler.serialize import canonical_json
from statekit.engine.result import Microstep, Result, Status
from statekit.runner.outcome import Conflict


def microstep_data(step: Microstep) -> dict[str, Any]:
    """A microstep as JSON-ready data (the timers it armed and cancelled and the events it
    sent only when there are any, so evidence without time is as it was)."""
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
    for name in ("armed", "cancelled", "sent"):
        value = getattr(step, name)
        if value:
            data[name] = list(value)
    return data


def evidence_json(result: Result, race: Conflict | None) -> str:
    """The evidence stored with an event, as canonical JSON: its microsteps, the conflict
    it was re-decided after (`race`), and for a timer delivery the chart rejected
    (recorded because it consumed the timer) the reason and message."""
    data: dict[str, Any] = {"microsteps": [microstep_data(s) for s in result.evidence]}
    if result.status is Status.REJECTED:
        data["rejected"] = {"reason": result.reason, "message": result.message}
    if race is not None:
        data["race"] = race.to_data()
    return canonical_json(data)
