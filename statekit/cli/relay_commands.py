"""`statekit relay`: publish a store's outbox to NATS JetStream (`statekit.relay`).

One JSON line per message JetStream acknowledged on standard output
(`instance_id`, `message_id`, `sequence`, `type`, `subject`, `stream`,
`stream_sequence`, `duplicate`: true when the stream already held it and dropped
this copy), flushed as it goes; one line on standard error per failed publish,
which the relay retries after its backoff. Without `--once` it runs until SIGTERM or
SIGINT (then exit 0), across broker restarts (the client reconnects) and lost
database connections (the dispatcher's `serve`). `--once` publishes what can be
published now and exits: 0 when nothing failed, 1 when a message failed (it stays
pending, retried by the next run) or went dead. A `--to` that is not a NATS URL, a
broker that cannot be reached at start-up, or a store that cannot be opened or is not
there (a relay never creates one) is a usage error (exit 2) saying why.
"""

from __future__ import annotations

import signal
import sys
import threading
from types import FrameType

import click

from statekit.cli.group import EXIT_CLEAN, EXIT_FINDINGS
from statekit.cli.output import echo_text
from statekit.cli.runner_commands import write_line
from statekit.relay import Publication, Relay, RelayError, RelayURLError
from statekit.relay.nats_link import describe, shown_server
from statekit.relay.target import parse_target
from statekit.runner.errors import RunnerError
from statekit.runner.outbox import OutboxMessage
from statekit.runner.store import open_existing_store
from statekit.runner.store.base import Store


def _print_publication(publication: Publication) -> None:
    message = publication.message
    write_line(
        sys.stdout,
        {
            "instance_id": message.instance_id,
            "message_id": message.message_id,
            "sequence": message.sequence,
            "type": message.type,
            "subject": publication.subject,
            "stream": publication.stream,
            "stream_sequence": publication.stream_sequence,
            "duplicate": publication.duplicate,
        },
    )
    sys.stdout.flush()


def _print_failure(message: OutboxMessage, error: Exception) -> None:
    echo_text(
        f"statekit relay: message {message.message_id!r} of {message.instance_id!r} not "
        f"published (attempt {message.attempt}): {describe(error)}",
        err=True,
    )


@click.command("relay")
@click.option("--db", "url", required=True, metavar="URL", help="The store whose outbox to relay.")
@click.option(
    "--to",
    "target",
    required=True,
    metavar="nats://HOST:PORT[/PREFIX]",
    help="The NATS server (with JetStream) and the subject prefix (default: statekit); "
    "messages go to PREFIX.CHART.TYPE.",
)
@click.option(
    "--stream",
    default="STATEKIT",
    show_default=True,
    help="The JetStream stream made for PREFIX.> when the server has none.",
)
@click.option("--once", is_flag=True, help="Publish what can be published now, then exit.")
@click.option(
    "--ack-timeout",
    type=click.FloatRange(0.01),
    default=5.0,
    show_default=True,
    help="Seconds to wait for JetStream's acknowledgement of a message.",
)
@click.option(
    "--max-attempts",
    type=click.IntRange(1),
    default=100,
    show_default=True,
    help="Failed publishes after which a message is dead (listed by statekit outbox).",
)
def relay_command(
    url: str, target: str, stream: str, once: bool, ack_timeout: float, max_attempts: int
) -> None:
    """Publish the outbox of the store at URL to NATS JetStream, at least once and in order
    per instance, one JSON line per acknowledged message."""
    stopping = threading.Event()

    def stop(signum: int, frame: FrameType | None) -> None:
        stopping.set()

    previous = {s: signal.signal(s, stop) for s in (signal.SIGTERM, signal.SIGINT)}
    try:
        try:
            parse_target(target)  # a --to it can never use is said before the store is opened
        except RelayURLError as exc:
            raise click.UsageError(f"--to: {exc}") from exc
        store = _open_outbox_store(url)
        try:
            relay = Relay(
                store,
                target,
                stream=stream,
                ack_timeout=ack_timeout,
                max_attempts=max_attempts,
                on_published=_print_publication,
                on_failed=_print_failure,
            )
            relay.open()
        except (RelayURLError, RelayError) as exc:
            store.close()
            raise click.UsageError(f"--to: {exc}") from exc
        try:
            where = f"{shown_server(relay.target.server)} ({relay.target.subjects})"
            echo_text(
                f"statekit relay: publishing to stream {relay.stream_name} on {where}", err=True
            )
            report = relay.run_until_idle(wait=False) if once else relay.serve(stopping)
        finally:
            relay.close()
            store.close()
    finally:
        for s, handler in previous.items():
            signal.signal(s, handler)
    sys.exit(EXIT_FINDINGS if once and (report.failed or report.dead) else EXIT_CLEAN)


def _open_outbox_store(url: str) -> Store:
    """The existing store at `url` (upgraded as a writer does: the relay marks what it
    published), never a new one: a relay only reads an outbox, and a mistyped path
    must not make an empty store to idle on (a usage error, exit 2, as `statekit outbox`)."""
    try:
        return open_existing_store(url)
    except RunnerError as exc:
        raise click.UsageError(str(exc)) from exc
