"""A writer running while `prune` works waits for at most one batch, on SQLite and
PostgreSQL, whichever kind of row the batches remove or thin.

The prune's store is held (`Store.hold`, `hold_points`) at the COMMIT of its first
batch while a writer on its own connection applies an event to the very instance
being pruned. PostgreSQL: a batch locks only the rows it removes or thins, so the
writer must finish while the batch is still open. SQLite (one write lock): the
writer may wait for that batch, and the prune's next batch must not begin before
the writer has finished (the hold at that BEGIN waits for it, holding nothing; a
prune that kept its lock across batches would never let it in). Afterwards both
are whole: verify clean, the writer's event recorded.
"""

from __future__ import annotations

import threading
import time

import pytest
from retention_shapes import Shape, snapshot_every

from statekit.runner.chart_versions import chart_sets
from statekit.runner.outbox import Dispatcher
from statekit.runner.outcome import Outcome
from statekit.runner.retention import RetentionPolicy, prune
from statekit.runner.runner import Runner
from statekit.runner.store import open_store
from statekit.runner.store.hold_points import BEGIN, COMMIT
from statekit.runner.verify import verify

LATER = time.time() + 30 * 86_400.0
WAIT = 60.0  # seconds: a bound that only a broken prune reaches, never a pacing sleep

POLICIES = {
    "outbox": RetentionPolicy(delivered_age=86_400.0, batch=3),
    "events": RetentionPolicy(delivered_age=None, events_before_snapshot=True, batch=3),
}


class Writer(threading.Thread):
    """Applies one event to i0 on its own connection once told to; notes its BEGIN."""

    def __init__(self, shape: Shape, url: str) -> None:
        super().__init__(daemon=True)
        self.runner = Runner(shape.chart, open_store(url), snapshot_every=4)
        self.go = threading.Event()
        self.begun = threading.Event()
        self.done = threading.Event()
        self.outcome: Outcome | None = None
        self.error: BaseException | None = None

        def note(point: str) -> None:
            if point == BEGIN:
                self.begun.set()

        self.runner.store.hold = note

    def run(self) -> None:
        try:
            self.go.wait(WAIT)
            self.outcome = self.runner.apply("i0", "w1", "Incr", {"by": 100})
        except BaseException as exc:  # reported by the test
            self.error = exc
        finally:
            self.done.set()


@pytest.mark.parametrize("kind", POLICIES)
def test_a_writer_waits_for_at_most_one_batch(kind: str, store_url: str) -> None:
    shape = snapshot_every(4, 16)(store_url)
    Dispatcher(shape.runner.store, {"Counted": lambda m: None}).run_until_idle()
    writer = Writer(shape, store_url)
    writer.start()
    pruner = open_store(store_url)
    postgres = store_url.startswith("postgresql")
    seen: list[str] = []
    commits = begins = 0

    def hold(point: str) -> None:
        nonlocal commits, begins
        if point == COMMIT:
            commits += 1
            seen.append(f"commit {commits}")
            if commits == 1:
                writer.go.set()
                if postgres:  # nothing of the writer's is locked by the open batch
                    assert writer.done.wait(WAIT), "the writer waited for an open batch"
                    seen.append("writer done")
                else:
                    assert writer.begun.wait(WAIT)
        elif point == BEGIN:
            begins += 1
            if begins == 2:  # the next batch waits, holding nothing, for the writer
                assert writer.done.wait(WAIT), "the writer did not get in between batches"
                if "writer done" not in seen:
                    seen.append("writer done")

    pruner.hold = hold
    report = prune(pruner, POLICIES[kind], [shape.chart], now=LATER)
    writer.join(WAIT)
    assert writer.error is None and writer.outcome is not None and writer.outcome.applied
    assert report.batches > 2
    assert seen.index("writer done") < seen.index("commit 2")
    if kind == "outbox":
        assert report.outbox_messages == 16
    else:
        assert report.events_thinned == 16
    store = shape.runner.store
    charts = chart_sets(store, [shape.chart])[shape.chart.name]
    final = verify(store, charts, "i0")
    assert final.ok and final.version == 17, final
