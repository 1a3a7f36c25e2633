"""The outbox relayed to a message broker (NATS JetStream), and the consumer's side of it.

`Relay(store, "nats://HOST:PORT[/subject-prefix]")` publishes every outbox message
with JetStream's acknowledgement, at least once and in order per instance
(`statekit.relay.relay`); `EventApplier(runner, route)` applies the messages a
consumer receives to instances of another chart, each once
(`statekit.relay.consumer`). Needs the `relay` extra (nats-py).
"""

from __future__ import annotations

try:
    import nats  # noqa: F401  (the optional dependency: say how to get it)
except ImportError as exc:  # pragma: no cover - the extra is installed in development
    raise ImportError(
        "statekit.relay needs nats-py: install statekit with the relay extra "
        "(pip install -e '.[relay]' in a checkout)"
    ) from exc

from statekit.relay.consumer import AppliedEvent, EventApplier, Route
from statekit.relay.envelope import RelayedMessage, RelayedMessageError, message_key
from statekit.relay.nats_link import BrokerUnavailableError, PublishError, RelayError
from statekit.relay.relay import Publication, Relay
from statekit.relay.target import BrokerTarget, RelayURLError, parse_target

__all__ = [
    "AppliedEvent",
    "BrokerTarget",
    "BrokerUnavailableError",
    "EventApplier",
    "Publication",
    "PublishError",
    "Relay",
    "RelayError",
    "RelayURLError",
    "RelayedMessage",
    "RelayedMessageError",
    "Route",
    "message_key",
    "parse_target",
]
