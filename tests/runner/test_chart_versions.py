"""Chart sets from a store: stored sources count only with the digest recorded with them."""

from __future__ import annotations

from pathlib import Path

from runner_charts import COUNTER, chart_from, write_chart

import statekit
from statekit.runner.chart_versions import chart_sets
from statekit.runner.runner import Runner
from statekit.runner.store import open_store

COUNTER_V2 = COUNTER.replace("version: 1", "version: 2", 1)


def test_the_newest_stored_version_is_current_and_older_ones_replay(
    store_url: str, tmp_path: Path
) -> None:
    store = open_store(store_url)
    v1 = Runner(statekit.load(write_chart(COUNTER, tmp_path, "v1")), store).chart
    v2 = Runner(statekit.load(write_chart(COUNTER_V2, tmp_path, "v2")), store).chart
    [(name, charts)] = chart_sets(store).items()
    assert name == "counter" and charts.current.digest == v2.digest
    older = charts.get(1)
    assert older is not None and older.digest == v1.digest
    assert charts.get(3) is None


def test_a_stored_source_of_another_digest_is_not_used(store_url: str, tmp_path: Path) -> None:
    store = open_store(store_url)
    chart = Runner(statekit.load(write_chart(COUNTER, tmp_path, "counter")), store).chart
    [row] = store.charts()
    assert row.source is not None
    with store.write():
        store.execute(
            "UPDATE statekit_charts SET source = ?",
            (row.source.replace("  Ping: {}\n", "  Ping: {}\n  Pong: {}\n", 1),),
        )
    assert chart_sets(store) == {}
    given = chart_sets(store, [chart_from(COUNTER)])
    assert given["counter"].current.digest == chart.digest
    assert given["counter"].get(1) is given["counter"].current
