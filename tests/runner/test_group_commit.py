"""`Runner.apply_many`: group commit across instances, each event on its own."""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from runner_charts import FACTS, chart_from

from statekit.runner.errors import UnknownInstanceError
from statekit.runner.outcome import Outcome
from statekit.runner.runner import Runner
from statekit.runner.store import open_store
from statekit.runner.store.base import Store
from statekit.runner.transaction import Command

# A counter whose increment divides: `by: 0` is an evaluation error (a REJECTED outcome).
DIVIDER = """
statechart: divider
version: 1
context:
  total: {type: integer, default: 0}
events:
  Add: {by: integer}
  Ping: {}
initial: open
states:
  open:
    already: [Ping]
    on:
      Add:
        do:
          - assign: {total: ctx.total + 12 // event.by}
          - emit: {type: Added, payload: {total: ctx.total}}
          - emit: {type: Twice, payload: {by: event.by}}
"""
INSTANCES = ("a", "b", "c")


def _charts() -> tuple[Any, Any]:
    return chart_from(DIVIDER), chart_from(FACTS)


def _store_contents(store: Store) -> dict[str, Any]:
    """Everything the runner wrote, without the times and the outbox's own key (the
    order of an instance's messages is kept: they are listed by it)."""
    return {
        "instances": store.execute(
            "SELECT instance_id, chart_digest, version, configuration, context, history "
            "FROM statekit_instances ORDER BY instance_id"
        ).fetchall(),
        "events": [
            (r[0], r[1], r[2], r[3], r[4], bytes(r[5]), r[6], r[7], r[8], r[9])
            for r in store.execute(
                "SELECT instance_id, sequence, event_id, type, payload, payload_sha256, "
                "status, chart_version, evidence, idempotency_key FROM statekit_events "
                "ORDER BY instance_id, sequence"
            ).fetchall()
        ],
        "outbox": store.execute(
            "SELECT instance_id, message_id, sequence, type, payload, status "
            "FROM statekit_outbox ORDER BY instance_id, id"
        ).fetchall(),
        "audit": store.execute(
            "SELECT instance_id, event_id, type, payload, payload_sha256, status, reason, "
            "message, version, detail FROM statekit_rejections ORDER BY instance_id, id"
        ).fetchall(),
    }


def _runners(url: str) -> tuple[Runner, Runner]:
    divider, facts = _charts()
    store = open_store(url)
    d, f = Runner(divider, store), Runner(facts, store)
    for name in INSTANCES:
        d.create(f"d-{name}")
        f.create(f"f-{name}")
    return d, f


def _as_data(item: Outcome | Exception, instance: str) -> Any:
    if isinstance(item, Exception):
        return ("error", type(item).__name__, str(item))
    data = item.to_data(instance)
    data["state"] = item.state.to_data()
    return data


command = st.one_of(
    st.builds(
        lambda i, e, by, ev, seq: (f"d-{i}", Command(f"x{e}", "Add", {"by": by}, ev, seq)),
        st.sampled_from(INSTANCES),
        st.integers(0, 9),
        st.integers(-1, 2),
        st.none() | st.integers(0, 6),
        st.none() | st.integers(1, 7),
    ),
    st.builds(
        lambda i, e: (f"d-{i}", Command(f"x{e}", "Ping", {})),
        st.sampled_from(INSTANCES),
        st.integers(0, 9),
    ),
    st.builds(
        lambda i, e, attempt, ref, amount: (
            f"f-{i}",
            Command(
                f"y{e}",
                "TaskStarted" if ref is None else "PAY_SUCCESS",
                {"attempt": attempt, "worker": "w"}
                if ref is None
                else {"channel_ref": f"r{ref}", "amount": amount},
            ),
        ),
        st.sampled_from(INSTANCES),
        st.integers(0, 9),
        st.integers(1, 2),
        st.none() | st.integers(0, 3),
        st.integers(1, 2),
    ),
    st.builds(lambda e: ("nobody", Command(f"z{e}", "Add", {"by": 1})), st.integers(0, 2)),
    st.builds(lambda: ("d-a", Command("", "Add", {"by": 1}))),
)


def _differential(url_one: str, url_many: str, stream: list[Any], cuts: list[int]) -> None:
    one, one_facts = _runners(url_one)
    many, many_facts = _runners(url_many)
    expected = []
    for instance, c in stream:
        runner = one_facts if instance.startswith("f-") else one
        try:
            item: Outcome | Exception = runner.apply(
                instance, c.event_id, c.type, c.payload, c.expected_version, c.sequence
            )
        except (ValueError, UnknownInstanceError) as exc:
            item = exc
        expected.append(_as_data(item, instance))
    got: list[Any] = []
    start = 0
    for cut in [*cuts, len(stream)]:
        batch = stream[start : start + cut]
        start += len(batch)
        facts = [n for n, (i, _) in enumerate(batch) if i.startswith("f-")]
        others = [n for n, (i, _) in enumerate(batch) if not i.startswith("f-")]
        items: dict[int, Outcome | Exception] = {}
        for runner, part in ((many, others), (many_facts, facts)):
            items.update(zip(part, runner.apply_many([batch[n] for n in part]), strict=True))
        got.extend(_as_data(items[n], batch[n][0]) for n in range(len(batch)))
    assert got == expected
    assert _store_contents(many.store) == _store_contents(one.store)
    for name in INSTANCES:
        assert many.verify(f"d-{name}").ok and many_facts.verify(f"f-{name}").ok
    one.store.close()
    many.store.close()


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    stream=st.lists(command, max_size=40),
    cuts=st.lists(st.sampled_from([1, 2, 3, 5, 8, 40]), max_size=10),
)
def test_apply_many_in_any_batches_equals_apply_one_by_one(
    tmp_path_factory: pytest.TempPathFactory, stream: list[Any], cuts: list[int]
) -> None:
    """Random streams over three instances of two charts (redeliveries, payload
    conflicts, stale expected versions, sequences taken or ahead, evaluation errors,
    guard rejections, business-key duplicates and conflicts, unknown instances, bad
    event IDs): the outcomes and the whole store are those of `apply` one by one."""
    folder = tmp_path_factory.mktemp("group")
    _differential(f"sqlite:///{folder / 'one.db'}", f"sqlite:///{folder / 'many.db'}", stream, cuts)


def test_apply_many_equals_apply_on_both_stores(store_url: str, tmp_path: Path) -> None:
    """One long fixed stream on each store kind, against `apply` on SQLite."""
    rng = random.Random(13)
    stream: list[Any] = []
    for n in range(120):
        instance, kind = f"d-{rng.choice(INSTANCES)}", rng.random()
        if kind < 0.6:
            c = Command(f"x{rng.randrange(40)}", "Add", {"by": rng.randrange(-1, 3)})
        elif kind < 0.8:
            c = Command(f"x{n}", "Add", {"by": 1}, expected_version=rng.randrange(0, 30))
        else:
            instance = f"f-{rng.choice(INSTANCES)}"
            pay = {"channel_ref": f"r{rng.randrange(6)}", "amount": 1}
            c = Command(f"y{rng.randrange(20)}", "PAY_SUCCESS" if n % 7 else "TaskStarted", pay)
            if n % 7 == 0:
                c = Command(c.event_id, "TaskStarted", {"attempt": 1, "worker": "w"})
        stream.append((instance, c))
    _differential(f"sqlite:///{tmp_path / 'one.db'}", store_url, stream, [7, 1, 30, 2, 50])
