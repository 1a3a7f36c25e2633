"""A dispatcher process for the server-restart tests (run as a script).

python dispatch_process.py URL CONSUMER
    Delivers the outbox of the store at URL through the public `Dispatcher` and `Inbox`
    until SIGTERM (then exits 0): each message's effect is a row of the `effects` table
    (`EFFECTS`), written in the inbox's transaction, so that a message delivered again
    after a lost connection takes effect once. Prints nothing.
"""

from __future__ import annotations

import signal
import sys
import threading
from types import FrameType
from typing import Any

import statekit
from statekit.runner.outbox import OutboxMessage
from statekit.runner.store import open_store

EFFECTS = (
    "CREATE TABLE effects (id BIGSERIAL PRIMARY KEY, consumer TEXT NOT NULL, "
    "instance_id TEXT NOT NULL, message_id TEXT NOT NULL, sequence BIGINT NOT NULL)"
)
"""The consumer's own table (the test creates it): one row per message that took effect,
numbered in the order the effects committed."""


def main(url: str, consumer: str) -> None:
    stop = threading.Event()

    def stopping(signum: int, frame: FrameType | None) -> None:
        stop.set()

    signal.signal(signal.SIGTERM, stopping)
    store = open_store(url)
    inbox = statekit.Inbox(store, consumer)

    def handle(message: OutboxMessage) -> None:
        def write(connection: Any) -> None:
            connection.execute(
                "INSERT INTO effects (consumer, instance_id, message_id, sequence) "
                "VALUES (%s, %s, %s, %s)",
                (consumer, message.instance_id, message.message_id, message.sequence),
            )

        inbox.process(message, write)

    dispatcher = statekit.Dispatcher(store, {"Noted": handle, "Fired": handle}, lease=10.0)
    dispatcher.serve(stop, poll=0.2)
    store.close()


if __name__ == "__main__":
    main(*sys.argv[1:])
