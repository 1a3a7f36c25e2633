"""Where the relay publishes: a `nats://HOST:PORT[/subject-prefix]` URL, and the subject of
each message.

A message of type TYPE emitted by an instance of chart CHART goes to the subject
`PREFIX.CHART.TYPE` (prefix `statekit` unless the URL's path names another, such as
`nats://broker:4222/orders.events`). A chart name is already a valid subject token
(letters, digits, `_`, `-`); in a type, every character other than those is written
as `%XX` (its UTF-8 bytes in hexadecimal), so that `order.paid` becomes one token,
`order%2Epaid`, and no type can reach another's subject or a wildcard.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from urllib.parse import SplitResult, urlsplit

DEFAULT_PREFIX = "statekit"
"""The subject prefix when the URL names none."""

DEFAULT_PORT = 4222
"""NATS's port, when the URL names none."""

_TOKEN_SAFE = re.compile(r"[A-Za-z0-9_-]")
_PREFIX_TOKEN = re.compile(r"^[A-Za-z0-9_-]+$")


class RelayURLError(ValueError):
    """The relay's broker URL cannot be used; the message says what to write instead."""


@dataclass(frozen=True, slots=True)
class BrokerTarget:
    """A NATS server (`server`, the URL the client connects to) and the subject prefix."""

    server: str
    prefix: str

    @property
    def subjects(self) -> str:
        """The wildcard that covers every subject the relay publishes to."""
        return f"{self.prefix}.>"

    def subject(self, chart: str, message_type: str) -> str:
        """The subject of a message of `message_type` emitted by an instance of `chart`."""
        return f"{self.prefix}.{subject_token(chart)}.{subject_token(message_type)}"


def subject_token(text: str) -> str:
    """`text` as one subject token: letters, digits, `_` and `-` kept, every other
    character written as `%XX` per UTF-8 byte."""
    return "".join(
        c if _TOKEN_SAFE.fullmatch(c) else "".join(f"%{b:02X}" for b in c.encode("utf-8"))
        for c in text
    )


def parse_target(url: str) -> BrokerTarget:
    """The target a `nats://HOST[:PORT][/subject-prefix]` URL names (user and password in
    the URL are passed to the server); `RelayURLError` saying what is wrong otherwise."""
    parts = urlsplit(url)
    scheme = parts.scheme.lower()
    if scheme != "nats":
        shown = f"{scheme}://" if scheme else repr(url)
        raise RelayURLError(
            f"cannot relay to {shown}: statekit relays to NATS JetStream only; "
            "write nats://HOST:PORT[/subject-prefix], such as nats://127.0.0.1:4222/orders"
        )
    if not parts.hostname:
        raise RelayURLError(f"{url!r} names no host: write nats://HOST:PORT[/subject-prefix]")
    port = _port(parts, url)
    if parts.query or parts.fragment:
        raise RelayURLError(f"{url!r}: a relay URL takes no ?query or #fragment")
    prefix = parts.path.strip("/") or DEFAULT_PREFIX
    tokens = prefix.split(".")
    if not all(_PREFIX_TOKEN.fullmatch(t) for t in tokens):
        raise RelayURLError(
            f"{url!r}: the subject prefix {prefix!r} must be tokens of letters, digits, "
            "'_' and '-' separated by '.' (such as orders.events)"
        )
    userinfo = parts.netloc.rpartition("@")[0]
    host = f"[{parts.hostname}]" if ":" in parts.hostname else parts.hostname
    server = f"nats://{userinfo + '@' if userinfo else ''}{host}:{port}"
    return BrokerTarget(server=server, prefix=prefix)


def _port(parts: SplitResult, url: str) -> int:
    try:
        port = parts.port
    except ValueError:
        port = None
        bad = True
    else:
        bad = False
    if bad or port == 0:
        raise RelayURLError(f"{url!r}: the port must be a number from 1 to 65535")
    return DEFAULT_PORT if port is None else port
