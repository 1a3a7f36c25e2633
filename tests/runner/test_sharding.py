"""`ShardedRunner` and `ShardSet`: the route is fixed, every call goes to the owning shard (of
SQLite and of PostgreSQL shards), `apply_many` answers in the order given, and a set given
other than as laid out is refused before anything is routed."""

from __future__ import annotations

import itertools
import sqlite3
from collections.abc import Callable
from pathlib import Path

import pytest
from runner_charts import COUNTER, TICKER, chart_from
from store_fixtures import ShardURLs

from statekit.runner.errors import ShardLayoutError, StoreBusyError, UnknownInstanceError
from statekit.runner.runner import Runner
from statekit.runner.shard_layout import (
    ShardPlace,
    ShardSet,
    open_shard_set,
    recorded_place,
    shard_of,
)
from statekit.runner.sharding import ShardedRunner
from statekit.runner.store import open_read_only_store, open_store
from statekit.runner.transaction import Command
from statekit.testing.postgres_server import ThrowawayPostgres

_databases = itertools.count(1)


# The route of these IDs for 1, 2, 3, 4 and 8 shards: fixed forever (a change would leave
# every stored instance in a shard the router no longer looks in).
ROUTES = {
    "task-1": (0, 1, 2, 3, 7),
    "task-2": (0, 0, 1, 0, 0),
    "task-42": (0, 0, 1, 0, 4),
    "order/7": (0, 0, 1, 0, 0),
    "ü-ñ": (0, 0, 1, 2, 2),
    "c": (0, 0, 2, 2, 2),
    "a" * 40: (0, 1, 1, 1, 1),
}
IDS = [f"i{n}" for n in range(12)]


def test_the_route_of_known_ids_is_fixed_forever() -> None:
    for instance_id, routes in ROUTES.items():
        assert tuple(shard_of(instance_id, n) for n in (1, 2, 3, 4, 8)) == routes, instance_id


def _owner_only(urls: list[str], instance_id: str) -> list[int]:
    """The indexes of the databases of `urls` that hold `instance_id`."""
    held = []
    for index, url in enumerate(urls):
        with open_read_only_store(url) as store:
            if store.instance(instance_id) is not None:
                held.append(index)
    return held


def test_every_instance_call_goes_to_the_owning_shard(shard_urls: ShardURLs) -> None:
    urls = shard_urls(3)
    chart = chart_from(COUNTER)
    with ShardedRunner.open(chart, urls) as runner:
        assert {runner.shards.index_of(i) for i in IDS} == {0, 1, 2}  # every shard is used
        for instance_id in IDS:
            runner.create(instance_id)
            assert runner.apply(instance_id, "e1", "Incr", {"by": 2}).version == 1
            batch = [Command("e2", "Incr", {"by": 1}), Command("e3", "Incr", {"by": 0})]
            assert [o.status.value for o in runner.apply_batch(instance_id, batch)] == [
                "APPLIED",
                "REJECTED",
            ]
            assert runner.snapshot(instance_id) == 2
            assert runner.load(instance_id).state.context["total"] == 3
            assert [e.event_id for e in runner.history(instance_id)] == ["e1", "e2"]
            assert [r["event_id"] for r in runner.rejections(instance_id)] == ["e3"]
            assert runner.rebuild(instance_id).version == 2
            assert runner.verify(instance_id).ok
            assert runner.migrate(instance_id).status == "CURRENT"
        assert runner.instance_ids() == sorted(IDS)
    for instance_id in IDS:  # each lives in its own shard only, with all of its rows
        owner = shard_of(instance_id, 3)
        assert _owner_only(urls, instance_id) == [owner]
        with open_read_only_store(urls[owner]) as store:
            assert len(store.events(instance_id)) == 2
            assert len(store.snapshots(instance_id)) == 1
            assert len(store.rejections(instance_id)) == 1
    with open_shard_set(urls, read_only=True) as shards:
        assert shards.misrouted() == []


def test_an_instance_written_to_another_shard_is_not_found_and_verify_names_it(
    shard_urls: ShardURLs,
) -> None:
    urls = shard_urls(2)
    chart = chart_from(COUNTER)
    with ShardedRunner.open(chart, urls) as runner:
        Runner(chart, runner.shards.stores[0]).create("task-1")  # routes to index 1
        with pytest.raises(UnknownInstanceError):
            runner.load("task-1")
        [line] = runner.shards.misrouted()
        assert "'task-1' is stored in shard 1 but routes to shard 2 of 2" in line


def test_apply_many_across_shards_answers_in_the_order_given(shard_urls: ShardURLs) -> None:
    urls = shard_urls(3)
    with ShardedRunner.open(chart_from(COUNTER), urls) as runner:
        for instance_id in IDS[:6]:
            runner.create(instance_id)
        commands = [
            (instance_id, Command(f"e{n}", "Incr", {"by": n + 1}))
            for n, instance_id in enumerate(IDS[:6] * 2)
        ]
        commands.insert(3, ("", Command("bad", "Incr", {"by": 1})))  # no ID: a ValueError
        commands.insert(7, ("nobody", Command("x", "Incr", {"by": 1})))  # unknown instance
        items = runner.apply_many(commands)
        assert len(items) == len(commands)
        for (instance_id, command), item in zip(commands, items, strict=True):
            if instance_id == "":
                assert isinstance(item, ValueError)
            elif instance_id == "nobody":
                assert isinstance(item, UnknownInstanceError)
            else:
                assert not isinstance(item, Exception)
                assert item.event_id == command.event_id and item.status.value == "APPLIED"
        for n, instance_id in enumerate(IDS[:6]):  # the two events of each, in order
            assert [e.event_id for e in runner.history(instance_id)] == [f"e{n}", f"e{n + 6}"]
            assert runner.load(instance_id).state.context["total"] == (n + 1) + (n + 7)


def test_fire_due_delivers_the_due_timers_of_every_shard(shard_urls: ShardURLs) -> None:
    urls = shard_urls(3)
    now = [1_000_000]
    with ShardedRunner.open(chart_from(TICKER), urls, clock=lambda: now[0]) as runner:
        for instance_id in IDS:
            runner.create(instance_id)  # ten timers each, due within a second
        now[0] += 1_000
        fired = []
        while batch := runner.fire_due(limit=7):
            assert len(batch) <= 7
            fired.extend(batch)
        assert sorted((o.instance_id, o.event_id) for o in fired) == sorted(
            {(o.instance_id, o.event_id) for o in fired}
        )  # each once
        assert len(fired) == 10 * len(IDS)
        for instance_id in IDS:
            assert runner.load(instance_id).state.context["ticks"] == 10
            assert runner.verify(instance_id).ok


# ---- the layout ---------------------------------------------------------------------------
def test_a_set_records_its_layout_in_every_database(shard_urls: ShardURLs) -> None:
    urls = shard_urls(3)
    with open_shard_set(urls) as shards:
        layout = shards.layout_id
    for index, url in enumerate(urls):
        with open_read_only_store(url) as store:
            place = recorded_place(store)
        assert place is not None
        assert (place.layout_id, place.index, place.count) == (layout, index, 3)
    with open_shard_set(urls, read_only=True) as again:  # a reader checks, records nothing
        assert again.layout_id == layout


REFUSALS: dict[str, tuple[Callable[[list[str]], list[str]], str]] = {
    "order swapped": (lambda u: [u[1], u[0], u[2]], "was given as shard 1: give the URLs"),
    "a shard missing": (lambda u: u[:2], "a shard is missing: give all 3"),
    "the last one missing": (lambda u: [u[0], u[2]], "a shard is missing: give all 3"),
    "a shard added": (lambda u: [*u[:3], u[3]], "a shard was added: give the 3"),
    "one given twice": (lambda u: [u[0], u[1], u[2], u[0]], "is given more than once"),
    "another set's database": (lambda u: [u[0], u[1], u[4]], "belong to two shard sets"),
}


@pytest.mark.parametrize("case", sorted(REFUSALS))
def test_a_set_given_otherwise_than_laid_out_is_refused(shard_urls: ShardURLs, case: str) -> None:
    urls = shard_urls(6)  # 0-2 the set; 3 a spare; 4-5 another set
    chart = chart_from(COUNTER)
    with ShardedRunner.open(chart, urls[:3]) as runner:
        for instance_id in IDS:
            runner.create(instance_id)
    open_shard_set([urls[5], urls[4]]).close()  # the other set: 5 is its shard 1
    open_store(urls[3]).close()  # the spare: a store, never a shard
    arrange, message = REFUSALS[case]
    given = arrange(urls)
    for read_only in (False, True):
        with pytest.raises(ShardLayoutError, match=message):
            ShardedRunner.open(chart, given, read_only=read_only)
    with ShardedRunner.open(chart, urls[:3]) as runner:  # nothing was changed
        assert runner.instance_ids() == sorted(IDS)
        assert runner.shards.misrouted() == []


def test_one_database_under_two_urls_is_refused(pg_server: ThrowawayPostgres) -> None:
    url = pg_server.create_database(f"shard_{next(_databases)}")
    other = pg_server.create_database(f"shard_{next(_databases)}")
    alias = url.replace("postgresql://", "postgres://", 1)  # the same database
    with pytest.raises(ShardLayoutError, match=r"given as shard 3:.*given twice"):
        open_shard_set([url, other, alias])


@pytest.mark.parametrize(
    ("column", "value", "message"),
    [
        ("layout_id", "'another'", "belong to two shard sets"),
        ("shard_index", "2", "was given as shard 2"),
        ("shard_count", "4", "a shard is missing: give all 4"),
    ],
)
def test_a_changed_layout_row_is_refused(
    shard_urls: ShardURLs, column: str, value: str, message: str
) -> None:
    urls = shard_urls(3)
    open_shard_set(urls).close()
    with open_store(urls[1]) as store, store.write():
        store.execute(f"UPDATE statekit_shard SET {column} = {value}")
    with pytest.raises(ShardLayoutError, match=message):
        open_shard_set(urls)


def test_a_database_joins_only_where_its_instances_route(shard_urls: ShardURLs) -> None:
    chart = chart_from(COUNTER)
    alone, empty, strays = shard_urls(3)
    with open_store(alone) as store:  # a store used on its own, all of it routing to 0 of 2
        for instance_id in ("task-2", "task-42"):
            Runner(chart, store).create(instance_id)
    with open_store(strays) as store:  # "task-1" routes to index 1 of 2, not 0
        Runner(chart, store).create("task-1")
    with pytest.raises(
        ShardLayoutError, match=r"holds 1 instance.* cannot join the set as shard 1"
    ):
        open_shard_set([strays, empty])
    with ShardedRunner.open(chart, [alone, empty]) as runner:  # joins as shard 1 of 2
        assert runner.load("task-42").version == 0
        runner.create("task-1")
        assert _owner_only([alone, empty], "task-1") == [1]


def test_a_set_whose_first_opening_stopped_part_way_is_completed(shard_urls: ShardURLs) -> None:
    urls = shard_urls(3)
    with open_shard_set(urls) as shards:
        layout = shards.layout_id
    with open_store(urls[2]) as store, store.write():  # as if it stopped before shard 3
        store.execute("DELETE FROM statekit_shard")
    with pytest.raises(ShardLayoutError, match="records no place"):  # a reader records nothing
        open_shard_set(urls, read_only=True)
    with open_shard_set(urls) as shards:  # a writer completes it with the set's identity
        assert shards.layout_id == layout
    with open_read_only_store(urls[2]) as store:
        assert recorded_place(store) is not None


def test_an_empty_set_is_refused() -> None:
    with pytest.raises(ShardLayoutError, match="at least one store"):
        ShardSet([])


def test_apply_many_answers_a_busy_shard_with_its_error_and_applies_the_others(
    tmp_path: Path,
) -> None:
    urls = [f"sqlite:///{tmp_path / f'busy{n}.db'}?busy_timeout=0.05" for n in range(2)]
    with ShardedRunner.open(chart_from(COUNTER), urls) as runner:
        for instance_id in IDS:
            runner.create(instance_id)
        blocker = sqlite3.connect(tmp_path / "busy1.db", isolation_level=None)
        blocker.execute("BEGIN IMMEDIATE")  # shard 2 is locked by another writer
        commands = [(i, Command("e1", "Incr", {"by": 1})) for i in IDS]
        items = runner.apply_many(commands)
        blocker.execute("ROLLBACK")
        blocker.close()
        for (instance_id, _), item in zip(commands, items, strict=True):
            if runner.shards.index_of(instance_id) == 1:
                assert isinstance(item, StoreBusyError)
                assert runner.load(instance_id).version == 0
            else:
                assert not isinstance(item, Exception) and item.version == 1


@pytest.mark.parametrize("before_shard", [0, 1, 2])
def test_two_openers_laying_a_new_set_out_at_once_agree_on_it(
    shard_urls: ShardURLs, before_shard: int
) -> None:
    # Opener A has read that no database records a place; opener B then lays the whole
    # set out before A records its place in shard `before_shard` (forced by a hold).
    urls = shard_urls(3)
    stores = [open_store(url) for url in urls]
    other: list[str] = []

    def hold(point: str) -> None:
        if point == "begin" and not other:
            with open_shard_set(urls) as shards:
                other.append(shards.layout_id)

    stores[before_shard].hold = hold
    with ShardSet(stores) as mine:
        assert other and mine.layout_id == other[0]
    for index, url in enumerate(urls):
        with open_read_only_store(url) as store:
            assert recorded_place(store) == ShardPlace(other[0], index, 3)
