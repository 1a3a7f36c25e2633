"""Business idempotency keys: the text that identifies an event's fact.

A chart's `idempotency:` names, per event, the payload fields that identify
the fact it reports (`TaskStarted: [attempt]`). The key of an event is the
canonical JSON list of those fields' values in declared order (`[1]`); the
store keeps `(instance, event type, key)` unique among accepted events, so a
sender that re-sends the same fact under a new event ID is recognised.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from statekit.compiler.canonical import canonical_json
from statekit.compiler.ir import CompiledChart


def idempotency_key(
    chart: CompiledChart, event_type: str, payload: Mapping[str, Any]
) -> str | None:
    """The key of an event under `chart`, or None: the event has no declared key, or its
    payload lacks a key field or gives one a value of the wrong type (then the engine
    rejects it, and a rejected event claims nothing)."""
    fields = chart.idempotency.get(event_type)
    if not fields:
        return None
    declared = chart.events[event_type].field_types()
    values: list[Any] = []
    for name in fields:
        if name not in payload:
            return None
        value = payload[name]
        if value is None or not declared[name].accepts(value):
            return None
        values.append(value)
    return canonical_json(values)
