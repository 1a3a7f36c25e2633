"""`statekit.testing.RunnerSimulator` decides as `Runner` does: the same commands, the same
outcomes, histories, audits and outboxes (a hypothesis fuzzer over sequences of
commands, against a runner on SQLite)."""

from __future__ import annotations

import itertools
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from runner_charts import COUNTER, FACTS, chart_from

from statekit.engine.chart import Chart
from statekit.runner.errors import InstanceExistsError, UnknownInstanceError
from statekit.runner.runner import Runner
from statekit.runner.store import open_store
from statekit.testing import RunnerSimulator

# Commands on FACTS: a few event IDs (so IDs repeat), key values that repeat, payloads
# that agree or not, stale or future expectations and sequences, undeclared events and
# payloads the engine rejects.
EVENT_IDS = st.sampled_from(["e1", "e2", "e3", "e4", "e5", "e6"])
FACT_COMMANDS: st.SearchStrategy[tuple[str, dict[str, Any]]] = st.one_of(
    st.tuples(
        st.just("TaskStarted"),
        st.fixed_dictionaries(
            {"attempt": st.integers(1, 2), "worker": st.sampled_from(["w-1", "w-2"])}
        ),
    ),
    st.tuples(
        st.just("PAY_SUCCESS"),
        st.fixed_dictionaries(
            {"channel_ref": st.sampled_from(["a", "b"]), "amount": st.integers(1, 2)}
        ),
    ),
    st.tuples(st.just("Heartbeat"), st.fixed_dictionaries({"attempt": st.integers(1, 2)})),
    st.tuples(st.just("TaskStarted"), st.sampled_from([{}, {"attempt": "1", "worker": "w"}])),
    st.tuples(st.just("Nope"), st.just({})),
)
COUNTER_COMMANDS = st.tuples(
    st.sampled_from(["Incr", "Ping"]),
    st.sampled_from([{"by": 1}, {"by": 2}, {"by": 0}, {}]),
)
OPTIONAL_INT = st.one_of(st.none(), st.integers(0, 4))


def commands(kinds: st.SearchStrategy[tuple[str, dict[str, Any]]]) -> st.SearchStrategy[Any]:
    return st.lists(
        st.tuples(EVENT_IDS, kinds, OPTIONAL_INT, st.one_of(st.none(), st.integers(1, 5))),
        max_size=14,
    )


def drop_times(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [{k: v for k, v in row.items() if k != "recorded_at"} for row in rows]


def history(events: list[Any]) -> list[tuple[Any, ...]]:
    return [
        (
            e.sequence,
            e.event_id,
            e.type,
            e.payload,
            e.payload_sha256,
            e.status,
            e.chart_version,
            e.evidence,
            e.idempotency_key,
        )
        for e in events
    ]


_names = itertools.count()


def same_decisions(runner: Runner, chart: Chart, script: list[Any]) -> None:
    instance = f"i{next(_names)}"
    simulator = RunnerSimulator(chart)
    runner.create(instance)
    simulator.create(instance)
    for event_id, (kind, payload), expected, sequence in script:
        got = simulator.apply(instance, event_id, kind, payload, expected, sequence)
        want = runner.apply(instance, event_id, kind, payload, expected, sequence)
        assert got.to_data(instance) == want.to_data(instance), (event_id, kind, payload)
        assert (got.first_event_id, got.conflict, got.missing) == (
            want.first_event_id,
            want.conflict,
            want.missing,
        )
    assert simulator.load(instance).state == runner.load(instance).state
    assert history(simulator.history(instance)) == history(runner.history(instance))
    assert drop_times(simulator.rejections(instance)) == drop_times(runner.rejections(instance))
    stored = [
        {"message_id": m.message_id, "sequence": m.sequence, "type": m.type}
        for m in runner.store.outbox(["pending"], instance)
    ]
    assert [
        {k: m[k] for k in ("message_id", "sequence", "type")} for m in simulator.outbox(instance)
    ] == stored


@pytest.fixture(scope="module")
def runners(tmp_path_factory: pytest.TempPathFactory) -> dict[str, tuple[Runner, Chart]]:
    folder: Path = tmp_path_factory.mktemp("simulator")
    out = {}
    for name, text in (("facts", FACTS), ("counter", COUNTER)):
        chart = chart_from(text)
        out[name] = (Runner(chart, open_store(f"sqlite:///{folder / name}.db")), chart)
    return out


FUZZ = settings(
    max_examples=120,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)


@FUZZ
@given(script=commands(FACT_COMMANDS))
def test_facts_are_decided_as_the_runner_decides(
    runners: dict[str, tuple[Runner, Chart]], script: list[Any]
) -> None:
    same_decisions(*runners["facts"], script)


@FUZZ
@given(script=commands(COUNTER_COMMANDS))
def test_counters_are_decided_as_the_runner_decides(
    runners: dict[str, tuple[Runner, Chart]], script: list[Any]
) -> None:
    same_decisions(*runners["counter"], script)


def test_a_re_sent_fact_is_a_duplicate_naming_the_first_event() -> None:
    sim = RunnerSimulator(chart_from(FACTS))
    sim.create("t")
    assert sim.apply("t", "e1", "TaskStarted", {"attempt": 1, "worker": "w"}).applied
    o = sim.apply("t", "e2", "TaskStarted", {"attempt": 1, "worker": "w"})
    assert (o.status.value, o.duplicate, o.sequence, o.first_event_id) == (
        "ALREADY_APPLIED",
        True,
        1,
        "e1",
    )
    o = sim.apply("t", "e3", "TaskStarted", {"attempt": 1, "worker": "v"})
    assert (o.status.value, o.reason) == ("CONFLICT", "BUSINESS_KEY_CONFLICT")
    assert [r["reason"] for r in sim.rejections("t")] == ["DUPLICATE_FACT", "BUSINESS_KEY_CONFLICT"]
    assert [m["message_id"] for m in sim.outbox("t")] == ["e1/0"]


def test_the_simulator_refuses_what_the_runner_refuses() -> None:
    sim = RunnerSimulator(chart_from(COUNTER))
    sim.create("c")
    with pytest.raises(InstanceExistsError):
        sim.create("c")
    with pytest.raises(UnknownInstanceError):
        sim.apply("nope", "e1", "Incr", {"by": 1})
    for bad in ("", "statekit.start", "a\x00b"):
        with pytest.raises(ValueError):
            sim.apply("c", bad, "Incr", {"by": 1})
    with pytest.raises(ValueError):
        sim.apply("c", "e1", "Incr", {"by": 1}, sequence=0)
