"""What the durable runner tells a chart about an event from one of its children, when the
invocation has a `finalize:` (it runs on that child's events only: `_event.invokeid`).

A family step records each member's event under an ID derived from the step that made it
(`statekit.family/<sender>@<version>#<n>`, `runner.family_step`), and a child's ID from
its parent, invoke id and the parent's version (`family_members.child_instance_id`). So
the child an event came from is found again from the event's ID alone, the same way
when the runner decides the event and when a replay (load, verify) folds it:

- `done.invoke.<id>` and `error.invoke.<id>` name their invocation;
- any other event from a child is sent by `<me>/<invoke id>/<version>` (or its hashed
  form), which one of this chart's invocations with a finalize derives.

Only then is the payload handed over as an `EventPayload` saying where it came from
(`sent_by`), as the Simulator's family step does for every event; an event ID over the
identifier bound (stored hashed) no longer names its sender, so a child's own event under
such an ID runs no finalize, live and on replay alike. Charts without a finalize are
told nothing more than before, so their recorded histories replay as they were.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from statekit.compiler.expressions.event_meta import sent_by
from statekit.compiler.invocations import invocation_of_event
from statekit.engine.chart import Chart
from statekit.engine.family_members import child_instance_id
from statekit.runner.family_ids import FAMILY_PREFIX

REFUSED_SUFFIX = "#refused"
"""The end of the event ID of the `error.invoke.<id>` of a child that could not start."""


def family_told(
    chart: Chart, instance_id: str | None, event_id: str, event_type: str, payload: Any
) -> Any:
    """`payload` as the chart is told it (see the module docstring): unchanged unless the
    event comes from a child whose invocation has a finalize."""
    if not event_id.startswith(FAMILY_PREFIX) or instance_id is None:
        return payload
    finalizing = {i.id for i in chart.ir.invocations if i.finalize}
    if not finalizing or not isinstance(payload, Mapping):
        return payload
    body = event_id.removeprefix(FAMILY_PREFIX)
    sender, _, _ = body.removesuffix(REFUSED_SUFFIX).rpartition("@")
    named = invocation_of_event(event_type)
    if named is not None:
        if named not in finalizing:
            return payload
        origin: str | None = sender if sender and sender != instance_id else None
        if body.endswith(REFUSED_SUFFIX) and sender == instance_id:  # its start was refused
            version = body.rpartition("@")[2].partition("#")[0]
            origin = (
                child_instance_id(instance_id, named, int(version)) if version.isdigit() else None
            )
        return sent_by(payload, origin, named, by_send=False)
    version = sender.rpartition("/")[2]
    if not version.isdigit():
        return payload
    for invoke_id in finalizing:
        if child_instance_id(instance_id, invoke_id, int(version)) == sender:
            return sent_by(payload, sender, invoke_id)
    return payload
