"""The events only a family makes, and why one sent from outside is refused.

Three kinds of event reach an instance from its family and from nowhere else:

- `done.invoke.<id>`: its child of invocation `<id>` reached a top-level final state;
- `error.invoke.<id>`: that child could not start, or failed;
- a `reply:` event: the classification of a message this chart sent to another
  instance with `send: {to: {chart, instance}, reply: EVENT}`, sent back.

The same event types sent from outside (a caller's event, a message from another
instance, or a "reply" no message asked for) are REJECTED `FAMILY_EVENT`: nothing
changes. The family router (`statekit.engine.family`) refuses them for every driver
(the Simulator, the runner, which also records the rejection in its audit).
"""

from __future__ import annotations

from statekit.compiler.chart_set import sends_to_charts
from statekit.compiler.invocations import DONE_INVOKE_PREFIX, ERROR_INVOKE_PREFIX
from statekit.compiler.ir import CompiledChart
from statekit.engine.chart import Chart

FAMILY_EVENT = "FAMILY_EVENT"
"""An event from outside of a type only a family makes (`done.invoke.<id>`,
`error.invoke.<id>`, a `reply:` event): refused, nothing changed."""

_INVOKE_PREFIXES = (DONE_INVOKE_PREFIX, ERROR_INVOKE_PREFIX)

# The reply events of each chart by digest: computed once per chart version (a walk of
# its effects), asked on every event from outside of a runner that takes the family path.
_REPLY_EVENTS: dict[str, frozenset[str]] = {}


def reply_events(chart: Chart) -> frozenset[str]:
    """The events `chart` names as `reply:` of its `send`s to other instances."""
    found = _REPLY_EVENTS.get(chart.digest)
    if found is None:
        found = _REPLY_EVENTS[chart.digest] = _replies(chart.ir)
    return found


def _replies(chart: CompiledChart) -> frozenset[str]:
    return frozenset(t.reply for _s, t in sends_to_charts(chart) if t.reply is not None)


def from_outside(chart: Chart, event: str, *, reply: bool = False) -> str | None:
    """Why `event` cannot come from outside the family to an instance of `chart` (the
    message of its `FAMILY_EVENT` rejection), or None when it can. `reply` says the
    event is the classification sent back for a message this instance sent with
    `reply:` (the one way a reply event arrives)."""
    if event.startswith(_INVOKE_PREFIXES):
        return (
            f"event {event!r} comes only from the family (the invoked child's result): "
            "an event from outside cannot carry it"
        )
    if not reply and event in reply_events(chart):
        return (
            f"event {event!r} comes only from the family (the answer to this chart's "
            "`send` with `reply:`): an event from outside cannot carry it"
        )
    return None
