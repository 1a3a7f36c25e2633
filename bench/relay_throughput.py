"""What publishing the outbox to NATS JetStream costs, as ratios measured in one run.

Run: `python -m bench.relay_throughput [MESSAGES] [--sqlite-only]` from the repository
root (nats-server must be installed, and PostgreSQL unless `--sqlite-only`: throwaway
servers are started on loopback, JetStream with its file store). SQLite runs with
synchronous=FULL, then OFF, where no fsync of the settle hides what the publish costs.

- "dispatcher, no-op handler": `Dispatcher.run_until_idle` over MESSAGES outbox
  messages (20 instances, in order per instance) with a handler that does nothing:
  the claims and settles alone, one settle transaction per message;
- "relay": `Relay.run_until_idle` over the same messages: the same claims and settles,
  and a JetStream publish per message, a round's messages sent together and their
  acknowledgements awaited in turn; "one publish at a time": the same relay, each
  message acknowledged before the next is sent;
- how to run nats-py (asyncio) behind the dispatcher's blocking handler, MESSAGES
  acknowledged publishes each: one event loop in a thread of its own with one
  connection, each publish handed to it (what `statekit.relay.nats_link` does), against
  `asyncio.run` per batch of 32 (a connection per batch: a client belongs to its
  loop) and `asyncio.run` per message.

Each figure is the median of RUNS (5) runs with its range, the runs of the figures
compared with each other interleaved; each run has fresh messages in a fresh store
and a stream of its own. The machine is shared: compare the ratios.
"""

from __future__ import annotations

import asyncio
import itertools
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import nats

from bench._runner_loops import COUNTER
from statekit.compiler.pipeline import compile_source
from statekit.engine.chart import Chart
from statekit.relay import Relay
from statekit.relay.nats_link import NatsLink
from statekit.runner.outbox import Dispatcher
from statekit.runner.runner import Runner
from statekit.runner.store import open_store
from statekit.runner.store.base import Store
from statekit.testing.nats_server import ThrowawayNats
from statekit.testing.postgres_server import ThrowawayPostgres

RUNS = 5
INSTANCES = 20
BATCH = 32
_names = itertools.count(1)


def with_messages(url: str, messages: int) -> Store:
    """A store at `url` holding `messages` undelivered messages of INSTANCES instances."""
    result = compile_source(COUNTER, "<bench>")
    assert result.chart is not None
    runner = Runner(Chart(result.chart), open_store(url))
    for i in range(INSTANCES):
        runner.create(f"i{i}")
    for n in range(messages):
        runner.apply(f"i{n % INSTANCES}", f"e{n}", "Incr", {"by": 1})
    return runner.store


def dispatching(store: Store, messages: int) -> float:
    """Messages/s of a dispatcher whose handler does nothing."""
    start = time.perf_counter()
    report = Dispatcher(store, {}, default=lambda m: None).run_until_idle()
    elapsed = time.perf_counter() - start
    assert report.delivered == messages
    store.close()
    return messages / elapsed


def relaying(store: Store, broker: ThrowawayNats, messages: int, *, together: bool = True) -> float:
    """Messages/s of a relay to `broker` (its connection and stream made first); without
    `together`, each message is published and acknowledged before the next is sent."""
    n = next(_names)
    with Relay(store, f"{broker.url}/r{n}", stream=f"R{n}") as relay:
        if not together:
            relay.dispatcher.on_claimed = None
        start = time.perf_counter()
        report = relay.run_until_idle()
        elapsed = time.perf_counter() - start
    assert report.delivered == messages
    store.close()
    return messages / elapsed


def stream_for(broker: ThrowawayNats) -> str:
    """A fresh prefix with a stream taking it; the prefix."""
    n = next(_names)
    link = NatsLink(broker.url)
    link.open()
    link.ensure_stream(f"P{n}", f"p{n}.>")
    link.close()
    return f"p{n}"


def loop_thread(broker: ThrowawayNats, messages: int) -> float:
    """Acknowledged publishes/s through one loop in a thread (`NatsLink.publish`)."""
    prefix = stream_for(broker)
    link = NatsLink(broker.url)
    link.open()
    start = time.perf_counter()
    for k in range(messages):
        link.publish(f"{prefix}.x", b"{}", {"Nats-Msg-Id": str(k)}, 5.0)
    elapsed = time.perf_counter() - start
    link.close()
    return messages / elapsed


def run_per_batch(broker: ThrowawayNats, messages: int, batch: int) -> float:
    """Acknowledged publishes/s with `asyncio.run` (and so a connection) per `batch`."""
    prefix = stream_for(broker)

    async def publish(first: int, count: int) -> None:
        client = await nats.connect(broker.url)
        jetstream = client.jetstream()
        for k in range(first, first + count):
            await jetstream.publish(f"{prefix}.x", b"{}", headers={"Nats-Msg-Id": str(k)})
        await client.close()

    start = time.perf_counter()
    for first in range(0, messages, batch):
        asyncio.run(publish(first, min(batch, messages - first)))
    return messages / (time.perf_counter() - start)


def interleaved(*measures: Callable[[], float]) -> list[tuple[float, float, float]]:
    """Each measure RUNS times, the runs of all of them interleaved; (median, min, max)."""
    rates: list[list[float]] = [[] for _ in measures]
    for _ in range(RUNS):
        for rate, measure in zip(rates, measures, strict=True):
            rate.append(measure())
    return [(statistics.median(r), min(r), max(r)) for r in rates]


def line(what: str, figures: tuple[float, float, float], base: float) -> None:
    median, low, high = figures
    print(f"| {what} | {median:,.0f} | {low:,.0f} to {high:,.0f} | {100 * median / base:.0f}% |")


def compare(name: str, fresh: Callable[[], str], broker: ThrowawayNats, messages: int) -> None:
    """The dispatcher and the relay over fresh stores made by `fresh`, interleaved."""
    dispatcher, relay, one_by_one = interleaved(
        lambda: dispatching(with_messages(fresh(), messages), messages),
        lambda: relaying(with_messages(fresh(), messages), broker, messages),
        lambda: relaying(with_messages(fresh(), messages), broker, messages, together=False),
    )
    line(f"{name}: dispatcher, no-op handler", dispatcher, dispatcher[0])
    line(f"{name}: relay to JetStream", relay, dispatcher[0])
    line(f"{name}: relay, one publish at a time", one_by_one, dispatcher[0])


def main() -> None:
    args = [a for a in sys.argv[1:] if not a.startswith("--")]
    messages = int(args[0]) if args else 400
    stores: list[tuple[str, Callable[[], str]]] = []
    folder = Path(tempfile.mkdtemp(prefix="statekit-relay-bench-"))
    stores.append(("SQLite", lambda: f"sqlite:///{folder / f's{next(_names)}.db'}"))
    stores.append(
        (
            "SQLite, synchronous=OFF (no fsync)",
            lambda: f"sqlite:///{folder / f's{next(_names)}.db'}?synchronous=OFF",
        )
    )
    postgres = None
    if "--sqlite-only" not in sys.argv:
        postgres = ThrowawayPostgres().start()
        server = postgres
        stores.append(("PostgreSQL", lambda: server.create_database(f"relay{next(_names)}")))
    print(f"{messages} messages of {INSTANCES} instances, medians of {RUNS} runs (range)\n")
    print("| what | messages/s | range | ratio |\n|---|---|---|---|")
    with ThrowawayNats() as broker:
        for name, fresh in stores:
            compare(name, fresh, broker, messages)
        thread, per_batch, per_message = interleaved(
            lambda: loop_thread(broker, messages),
            lambda: run_per_batch(broker, messages, BATCH),
            lambda: run_per_batch(broker, messages, 1),
        )
        line("publish: one loop in a thread", thread, thread[0])
        line(f"publish: asyncio.run per batch of {BATCH}", per_batch, thread[0])
        line("publish: asyncio.run per message", per_message, thread[0])
    if postgres is not None:
        postgres.stop()


if __name__ == "__main__":
    main()
