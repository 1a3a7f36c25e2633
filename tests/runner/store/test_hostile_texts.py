"""Every text a user gives the runner is stored and read back exactly, on both dialects.

The PostgreSQL store sends a decision's writes (and a transaction's first
statement) as one query with its parameters bound on the client, so each
value becomes a quoted literal inside the query text. Hypothesis draws
instance IDs, event IDs and payload texts from all of Unicode (no NUL, which
the runner refuses in an ID and JSON escapes in a payload) mixed with the
fragments that break hand-made quoting: quotes, backslashes, `E'…'`,
dollar quotes, placeholders (`%s`, `%(x)s`, `?`), statement ends and
comments, and an injected `DROP TABLE`. Each example is applied on the
cached path (the runner that wrote last), on the read path (a second runner
taking its turn) and in a group commit, then read back through the history,
the instance, the outbox and `verify`; the store still holds every table
and exactly the events applied.
"""

from __future__ import annotations

import itertools
import math
from decimal import Decimal
from typing import Any

import psycopg
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from statekit.compiler.pipeline import compile_source
from statekit.engine.chart import Chart
from statekit.runner.outbox import Dispatcher, OutboxMessage
from statekit.runner.outcome import OutcomeStatus
from statekit.runner.runner import Runner
from statekit.runner.store import open_store
from statekit.runner.transaction import Command

NOTES = """
statechart: notes
version: 1
context:
  note: {type: string, default: ""}
events:
  Note: {text: string}
initial: open
states:
  open:
    on:
      Note:
        do:
          - assign: {note: event.text}
          - emit: {type: Noted, payload: {text: event.text}}
"""
FRAGMENTS = (
    "'", "''", "\\", "\\'", "E'", "$$", "$x$", "%s", "%(x)s", "%%", "?", ";", "--", "/*",
    "*/", "\\x00", "\\u0000", '"', "\n", "\r\n", "\t", "é", "ß", "\u2028", "😀", "\U0010ffff",
    "'); DROP TABLE statekit_events; --", "'::bytea", "NULL",
)  # fmt: skip
_TEXT = st.text(
    st.characters(blacklist_categories=["Cs"], blacklist_characters="\x00"), max_size=12
)
HOSTILE = st.lists(st.one_of(_TEXT, st.sampled_from(FRAGMENTS)), min_size=1, max_size=5).map(
    "".join
)
_examples = itertools.count()


def _chart() -> Chart:
    result = compile_source(NOTES, "notes.yaml")
    assert result.chart is not None
    return Chart(result.chart)


@pytest.fixture(scope="module")
def urls(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Any:
    """One store of each kind for the module (each example uses its own instances)."""
    server = request.getfixturevalue("pg_server")
    folder = tmp_path_factory.mktemp("hostile")
    return {
        "sqlite": f"sqlite:///{folder / 'statekit.db'}?synchronous=OFF",
        "postgresql": server.create_database("statekit_hostile_texts"),
    }


@pytest.mark.parametrize("dialect", ["sqlite", "postgresql"])
@settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(instance=HOSTILE, events=st.lists(st.tuples(HOSTILE, HOSTILE), min_size=3, max_size=6))
def test_texts_round_trip_through_every_write_path(
    urls: dict[str, str], dialect: str, instance: str, events: list[tuple[str, str]]
) -> None:
    instance = f"{next(_examples)}:{instance}"  # one instance per example
    ids = [f"{k}:{event_id}" for k, (event_id, _) in enumerate(events)]  # distinct
    texts = [text for _, text in events]
    first, second = (Runner(_chart(), open_store(urls[dialect])) for _ in range(2))
    try:
        first.create(instance)
        # the cached path twice, then the read path, then a group commit of the rest
        assert first.apply(instance, ids[0], "Note", {"text": texts[0]}).applied
        assert first.apply(instance, ids[1], "Note", {"text": texts[1]}).applied
        assert second.apply(instance, ids[2], "Note", {"text": texts[2]}).applied
        batch = [
            (instance, Command(i, "Note", {"text": t}))
            for i, t in zip(ids[3:], texts[3:], strict=True)
        ]
        assert all(getattr(o, "applied", False) for o in second.apply_many(batch))
        # a redelivery of each is recognised by its stored ID and payload
        for event_id, text in zip(ids, texts, strict=True):
            again = first.apply(instance, event_id, "Note", {"text": text})
            assert again.status is OutcomeStatus.ALREADY_APPLIED, (event_id, again)

        history = first.history(instance)
        assert [(e.event_id, e.type, e.payload) for e in history] == [
            (i, "Note", {"text": t}) for i, t in zip(ids, texts, strict=True)
        ]
        loaded = first.load(instance)
        assert loaded.version == len(events)
        assert dict(loaded.state.context)["note"] == texts[-1]
        assert first.verify(instance).ok

        got: list[OutboxMessage] = []
        Dispatcher(first.store, {"Noted": got.append}).run_until_idle(wait=False)
        mine = [m for m in got if m.instance_id == instance]
        assert [m.payload for m in mine] == [{"text": t} for t in texts]
        assert {m.message_id.rsplit("/", 1)[0] for m in mine} == set(ids)

        tables = first.store.execute(
            "SELECT COUNT(*) FROM statekit_events WHERE instance_id = ?", (instance,)
        ).fetchone()
        assert tables[0] == len(events)
    finally:
        first.store.close()
        second.store.close()


SCALARS = st.one_of(
    HOSTILE,
    st.text(st.characters(blacklist_categories=["Cs"], blacklist_characters="\x00")),
    st.integers(min_value=-(2**63), max_value=2**63 - 1),
    st.floats(allow_nan=True, allow_infinity=True),
    st.sampled_from([-0.0, 0.0, 5e-324, -1e300, 2.0**63, 0.1]),
    st.binary(max_size=40),
    st.none(),
)


@settings(max_examples=300, deadline=None)
@given(values=st.lists(SCALARS, min_size=1, max_size=6))
def test_the_first_statement_of_a_transaction_reads_its_parameters_back(
    urls: dict[str, str], values: list[Any]
) -> None:
    """A transaction's first statement goes with its BEGIN as one client-bound query: each
    value the store binds comes back from the server as it was sent."""
    store = open_store(urls["postgresql"])
    try:
        with store.read():
            row = store.execute(
                "SELECT " + ", ".join(["?"] * len(values)), tuple(values)
            ).fetchone()
    finally:
        store.close()
    for sent, got in zip(values, row, strict=True):
        if isinstance(sent, float) and math.isnan(sent):
            assert isinstance(got, float) and math.isnan(got)
        else:
            assert (type(got), got) == (type(sent), sent)
            if isinstance(sent, float):
                assert math.copysign(1.0, got) == math.copysign(1.0, sent)  # -0.0 stays


@pytest.mark.parametrize("value", [True, False, Decimal("1.5"), "a\x00b"])
def test_other_values_are_bound_by_psycopg(urls: dict[str, str], value: Any) -> None:
    """A value of any other type (or text with NUL) is bound by psycopg itself: it reads
    back as psycopg binds it, or fails with psycopg's own error, never half-quoted."""
    store = open_store(urls["postgresql"])
    try:
        with store.read():
            if isinstance(value, str):
                with pytest.raises(psycopg.DataError, match="NUL"):
                    store.execute("SELECT ?, ?", (value, "x"))
                return
            row = store.execute("SELECT ?, ?", (value, "x")).fetchone()
    finally:
        store.close()
    assert tuple(row) == (value, "x")
