"""What a replay tells `_event.sendid`/`_event.origintype` of an event the instance's own
undelayed `send` queued (recorded under `sent_event_id(root, n)`): the `n`-th send of
the chain of events that began with `root`, in the order the replayed steps sent them,
as the transaction that decided it told the chart (`statekit.runner.transaction_rows`).

In a family step the instance's own send is recorded under the family event ID of
its delivery, `<family prefix><instance>@<version>#<n>`, which names its sender:
`own_family_send` tells such an event (its origin the instance itself, its origintype
SCXML's processor; no sendid) the same way to the live step and to every replay."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from statekit.compiler.expressions.event_meta import sent_as
from statekit.engine.result import Result
from statekit.runner.family_ids import FAMILY_PREFIX
from statekit.runner.timers import SEND_PREFIX


class SentIds:
    """The `id:` of each undelayed send replayed so far, per chain root."""

    def __init__(self) -> None:
        self._by_root: dict[str, list[str | None]] = {}

    def payload(self, event_id: str, payload: Mapping[str, Any]) -> Mapping[str, Any]:
        """`payload` as the chart is to see it: a sent event's says which send it was."""
        sent = _sent(event_id)
        if sent is None:
            return payload
        root, n = sent
        ids = self._by_root.get(root, [])
        return sent_as(payload, ids[n - 1] if 0 < n <= len(ids) else None)

    def record(self, event_id: str, result: Result) -> None:
        """Note the sends of the replayed step of `event_id`."""
        if result.sent:
            sent = _sent(event_id)
            root = event_id if sent is None else sent[0]
            self._by_root.setdefault(root, []).extend(s.id for s in result.sent)


def own_family_send(
    event_id: str, instance_id: str | None, payload: Mapping[str, Any]
) -> dict[str, Any]:
    """`payload` as a family step tells it to the instance `instance_id`: an event its own
    `send` delivered (the event ID names it as the sender) says it came from a `send`
    (its `_event.origin` is then the instance's ID); any other is as recorded."""
    as_recorded = payload if isinstance(payload, dict) else dict(payload)
    if instance_id is None or not event_id.startswith(FAMILY_PREFIX):
        return as_recorded
    step, _, n = event_id.removeprefix(FAMILY_PREFIX).rpartition("#")
    sender, _, version = step.rpartition("@")
    if sender != instance_id or not n.isdigit() or not version.isdigit():
        return as_recorded
    return sent_as(payload, None)


def _sent(event_id: str) -> tuple[str, int] | None:
    if not event_id.startswith(SEND_PREFIX):
        return None
    root, _, n = event_id.removeprefix(SEND_PREFIX).rpartition("/")
    return (root, int(n)) if n.isdigit() else None
