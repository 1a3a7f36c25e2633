"""Schema 9: the timer rows hold the armed timers; a store written before it upgrades in place.

Each shape of instance is written at schema 9, turned back into the form statekit
wrote at schema 8 (`store_legacy.before_schema_9`: the armed timers in the instance
row's `timers` text, no record on the rows) and opened again: it must hold the same
states, verify, and go on arming, cancelling and firing, on both stores. A `timers`
text the migration cannot read is kept as it was and reported, never dropped.
"""

from __future__ import annotations

import json
from collections.abc import Callable

import pytest
from runner_charts import LEASE, chart_from
from store_legacy import before_schema_9

from statekit.compiler.canonical import canonical_json
from statekit.engine.chart import Chart
from statekit.runner.errors import CorruptRowError
from statekit.runner.runner import Runner
from statekit.runner.store import open_store
from statekit.runner.store.migrations import LATEST

T0 = 1_700_000_000_000
ARMED = """
statechart: armed
version: 1
events:
  Fill: {n: integer, s: string}
  ArmOne: {}
  CancelOne: {}
  Ping: {n: integer, s: string}
  Pong: {}
initial: open
states:
  open:
    on:
      Fill: {do: [{send: {event: Ping, payload: {n: event.n, s: event.s}, delay: 1h}}]}
      ArmOne: {do: [{send: {event: Pong, delay: 1s, id: one}}]}
      CancelOne: {do: [{cancel: one}]}
      Ping: {}
      Pong: {}
"""
TEXTS = ["plain", 'q"uote\\back', "é \u2013 😀", "</script>"]


def _none(runner: Runner) -> None:
    runner.apply("x", "e1", "CancelOne")  # never armed a timer


def _some(runner: Runner) -> None:
    for n, text in enumerate(TEXTS):
        runner.apply("x", f"f{n}", "Fill", {"n": n, "s": text})
    runner.apply("x", "a1", "ArmOne")


def _all_cancelled(runner: Runner) -> None:
    runner.apply("x", "a1", "ArmOne")
    runner.apply("x", "c1", "CancelOne")  # armed once, none armed now


def _many(runner: Runner) -> None:
    for n in range(200):
        runner.apply("x", f"f{n}", "Fill", {"n": n, "s": TEXTS[n % len(TEXTS)]})
    runner.apply("x", "c1", "CancelOne")


SHAPES: dict[str, Callable[[Runner], None]] = {
    "no timer ever": _none,
    "sends with payloads and an id": _some,
    "every timer cancelled": _all_cancelled,
    "200 armed": _many,
}


def _runner(url: str, text: str = ARMED) -> Runner:
    return Runner(chart_from(text), open_store(url), clock=lambda: T0)


def _stored(runner: Runner) -> tuple[object, list[tuple[str, int, str | None]]]:
    (text,) = runner.store.execute(
        "SELECT timers FROM statekit_instances WHERE instance_id = 'x'"
    ).fetchone()
    rows = sorted((r.timer_id, r.generation, r.record) for r in runner.store.timers("x"))
    return text, rows


@pytest.mark.parametrize("shape", sorted(SHAPES))
def test_a_schema_8_store_upgrades_to_timer_rows_and_goes_on(store_url: str, shape: str) -> None:
    runner = _runner(store_url)
    runner.create("x")
    SHAPES[shape](runner)
    state = runner.load("x").state
    written = _stored(runner)
    before_schema_9(runner.store)
    (old_text,) = runner.store.execute("SELECT timers FROM statekit_instances").fetchone()
    if state.timer_generation:  # the old form: the timers in the instance row
        assert json.loads(str(old_text))["timers"] == json.loads(state.to_json())["timers"]
    else:
        assert old_text is None
    runner.store.close()

    upgraded = _runner(store_url)
    assert upgraded.store.schema_version() == LATEST >= 9
    assert _stored(upgraded) == written  # the same rows and text as schema 9 writes them
    assert upgraded.load("x").state == state
    assert upgraded.verify("x").ok
    for n, event in enumerate(["ArmOne", "CancelOne", "ArmOne"]):
        assert upgraded.apply("x", f"after{n}", event).applied
    fired = upgraded.fire_due(now_ms=T0 + 2_000)
    assert [o.event_id for o in fired if o.event_id] == [
        f"statekit.timer/one/{state.timer_generation + 2}"
    ]
    assert upgraded.verify("x").ok
    assert Runner(upgraded.chart, upgraded.store).load("x").state == upgraded.load("x").state


def test_the_records_are_the_timers_canonical_json(store_url: str) -> None:
    runner = _runner(store_url)
    runner.create("x")
    _some(runner)
    before_schema_9(runner.store)
    runner.store.close()
    upgraded = _runner(store_url)
    state = upgraded.load("x").state
    records = {r.timer_id: r.record for r in upgraded.store.timers("x")}
    assert records == {t.id: canonical_json(t.to_data()) for t in state.timers}
    (text,) = upgraded.store.execute("SELECT timers FROM statekit_instances").fetchone()
    assert text == f'{{"timer_generation":{state.timer_generation}}}'


@pytest.mark.parametrize(
    "damage",
    ["'{'", "'[1, 2]'", "'{\"timer_generation\": 3}'"],
    ids=["not JSON", "not an object", "no timers"],
)
def test_a_timers_text_the_upgrade_cannot_read_is_kept_and_reported(
    store_url: str, damage: str
) -> None:
    runner = _runner(store_url, LEASE)
    runner.create("x")
    runner.apply("x", "e1", "Start")
    before_schema_9(runner.store)
    with runner.store.write():
        runner.store.execute(f"UPDATE statekit_instances SET timers = {damage}")
    (kept,) = runner.store.execute("SELECT timers FROM statekit_instances").fetchone()
    runner.store.close()
    upgraded = _runner(store_url, LEASE)
    assert upgraded.store.execute("SELECT timers FROM statekit_instances").fetchone() == (kept,)
    assert {r.record for r in upgraded.store.timers("x")} == {None}  # nothing to copy
    assert len(upgraded.store.timers("x")) == 2  # the rows are all still there
    with pytest.raises(CorruptRowError):
        upgraded.load("x")
    assert not upgraded.verify("x").ok


def test_a_chart_without_time_is_untouched(store_url: str) -> None:
    plain = Chart(chart_from(ARMED.replace("delay: 1h", "delay: 0ms")).ir)
    runner = Runner(plain, open_store(store_url), clock=lambda: T0)
    runner.create("x")
    runner.apply("x", "f", "Fill", {"n": 1, "s": "s"})
    before_schema_9(runner.store)
    runner.store.close()
    upgraded = Runner(plain, open_store(store_url), clock=lambda: T0)
    assert _stored(upgraded) == (None, [])
    assert upgraded.verify("x").ok
