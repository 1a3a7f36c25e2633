"""The worker's loop guard parks an eventless timer loop durably, on both stores: past
`MAX_REDELIVERIES_AT_ONCE` deliveries the timer the last one armed is consumed and
recorded as a rejected delivery with reason `TIMER_LOOP` (`runner.loop_parking`), so a
restarted worker does not deliver the loop again and still delivers the other
instances' timers; `statekit timers` lists it as parked with the reason (as it lists a
poison delivery, `KEY_TOO_LONG`) until the instance takes another event (how an operator
releases it), and `statekit verify` agrees.
Every shape of loop: a timer re-arming itself at 0 ms, two states handing over with
0 ms timers, an `at:` already past re-armed on entry, a `send` delayed by -1 ms."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from cli_process import statekit
from runner_charts import chart_from, write_chart

from statekit.cli.timer_commands import MAX_REDELIVERIES_AT_ONCE
from statekit.runner.outcome import TIMER_LOOP
from statekit.runner.runner import Runner
from statekit.runner.store import open_store

CHART = """
statechart: parked
context:
  n: {type: integer, default: 0}
events:
  Self: {}
  Pong: {}
  Past: {}
  Spin: {}
  Ping: {}
  Calm: {}
  Stop: {}
  Paid: {ref: string}
  Later: {ref: string}
idempotency:
  Paid: [ref]
initial: idle
on:
  Stop: idle
states:
  idle:
    on:
      Later: {do: [{send: {event: Paid, delay: 10ms, payload: {ref: event.ref}}}]}
      Paid: {do: [{assign: {n: ctx.n + 1}}]}
      Self: spinning
      Pong: left
      Past: past
      Calm: once
      Spin: {do: [{send: {event: Ping, delay: ctx.n - 1 - ctx.n, id: p}}]}
      Ping: {do: [{assign: {n: ctx.n + 1}}, {send: {event: Ping, delay: ctx.n - 1 - ctx.n, id: p}}]}
  spinning:
    after:
      0ms: spinning
  left:
    after:
      0ms: right
  right:
    after:
      0ms: left
  past:
    after:
      - at: ctx.n
        to: past
  once:
    after:
      5ms: idle
"""

SHAPES = {"0ms self": "Self", "ping-pong": "Pong", "at: past": "Past", "send -1ms": "Spin"}


def _runner(url: str) -> Runner:
    return Runner(chart_from(CHART), open_store(url), clock=lambda: 1_000)


def _calm(runner: Runner, instance_id: str) -> None:
    """An instance with one ordinary timer, due long ago."""
    runner.create(instance_id)
    assert runner.apply(instance_id, "e1", "Calm", {}).applied


def _worker_once(url: str, chart: str) -> tuple[int, list[dict[str, object]], str]:
    done = statekit("worker", "--db", url, "--chart", chart, "--once")
    assert "Traceback" not in done.stderr
    return done.returncode, [json.loads(x) for x in done.stdout.splitlines()], done.stderr


@pytest.mark.parametrize("shape", SHAPES)
def test_a_parked_loop_stays_parked_across_a_restart(
    store_url: str, tmp_path: Path, shape: str
) -> None:
    runner = _runner(store_url)
    runner.create("loop")
    assert runner.apply("loop", "e1", SHAPES[shape], {}).applied
    _calm(runner, "calm")
    runner.store.close()
    chart = str(write_chart(CHART, tmp_path, "parked"))

    code, lines, err = _worker_once(store_url, chart)
    assert code == 1, err
    loop = [x for x in lines if x["instance"] == "loop"]
    assert len(loop) == MAX_REDELIVERIES_AT_ONCE + 1
    parked = loop[-1]
    assert (parked["status"], parked["reason"]) == ("REJECTED", TIMER_LOOP)
    assert "parked" in err and "'loop'" in err and "TIMER_LOOP" in err
    assert [x["state"] for x in lines if x["instance"] == "calm"] == [["idle"]]

    again = _runner(store_url)
    assert again.load("loop").state.timers == ()  # consumed: nothing left to deliver
    last = again.history("loop")[-1]
    assert last.status == "REJECTED"
    assert last.evidence["rejected"]["reason"] == TIMER_LOOP
    assert again.verify("loop").ok
    _calm(again, "later")  # armed after the parking, for the restarted worker
    again.store.close()

    code, lines, err = _worker_once(store_url, chart)  # a restarted worker
    assert code == 0, err
    assert [x["instance"] for x in lines] == ["later"]
    verified = statekit("verify", "--db", store_url, "--chart", chart)
    assert verified.returncode == 0, verified.stdout + verified.stderr
    (listed,) = _timers(store_url)  # parked, with the reason; nothing armed
    assert (listed["instance"], listed["parked"]) == ("loop", TIMER_LOOP)
    assert "eventless loop" in str(listed["message"])
    text = statekit("timers", "--db", store_url)
    assert "loop" in text.stdout and f"parked {TIMER_LOOP}" in text.stdout
    assert "0 timer(s) armed, 1 parked" in text.stderr


def _timers(url: str) -> list[dict[str, object]]:
    listed = statekit("timers", "--db", url, "--format", "json")
    assert listed.returncode == 0, listed.stderr
    return [json.loads(x) for x in listed.stdout.splitlines()]


@pytest.mark.parametrize("shape", SHAPES)
def test_an_event_releases_a_parked_instance(store_url: str, tmp_path: Path, shape: str) -> None:
    """Nothing re-arms a parked timer; the instance takes events as before, and one that
    leaves the looping state (here `Stop`) releases it: `timers` no longer lists it."""
    runner = _runner(store_url)
    runner.create("loop")
    assert runner.apply("loop", "e1", SHAPES[shape], {}).applied
    runner.store.close()
    chart = str(write_chart(CHART, tmp_path, "parked"))
    assert _worker_once(store_url, chart)[0] == 1
    assert [x["instance"] for x in _timers(store_url)] == ["loop"]
    again = _runner(store_url)
    assert again.apply("loop", "e2", "Stop", {}).applied
    assert again.load("loop").state.configuration == {"idle"}
    assert again.verify("loop").ok
    again.store.close()
    assert _timers(store_url) == []
    code, lines, _ = _worker_once(store_url, chart)
    assert (code, lines) == (0, [])


def test_timers_lists_a_poison_delivery_as_parked_too(store_url: str, tmp_path: Path) -> None:
    """Consistent with the loop: a delivery consumed as `KEY_TOO_LONG` is listed with its
    reason; `verify` agrees."""
    runner = _runner(store_url)
    runner.create("poison")
    assert runner.apply("poison", "e1", "Later", {"ref": "a" * 600}).applied
    runner.store.close()
    chart = str(write_chart(CHART, tmp_path, "parked"))
    code, lines, err = _worker_once(store_url, chart)
    assert code == 0, err
    assert [(x["status"], x["reason"]) for x in lines] == [("REJECTED", "KEY_TOO_LONG")]
    (listed,) = _timers(store_url)
    assert (listed["instance"], listed["parked"]) == ("poison", "KEY_TOO_LONG")
    verified = statekit("verify", "--db", store_url, "--chart", chart)
    assert verified.returncode == 0, verified.stdout + verified.stderr


@pytest.mark.parametrize("shape", SHAPES)
def test_parking_twice_records_once(store_url: str, shape: str) -> None:
    """Parking a timer already parked (a second worker, a retry) writes nothing:
    `STALE_TIMER`, the history one entry longer only."""
    runner = _runner(store_url)
    runner.create("loop")
    assert runner.apply("loop", "e1", SHAPES[shape], {}).applied
    (armed,) = runner.load("loop").state.timers
    first = runner.park_timer("loop", armed.id, armed.generation)
    second = runner.park_timer("loop", armed.id, armed.generation)
    assert (first.status.value, first.reason) == ("REJECTED", TIMER_LOOP)
    assert (second.status.value, second.reason) == ("REJECTED", "STALE_TIMER")
    assert [e.status for e in runner.history("loop")] == ["APPLIED", "REJECTED"]
    assert runner.fire_due(now_ms=10**12) == [] and runner.verify("loop").ok
    runner.store.close()


def test_a_timer_not_due_is_not_parked(store_url: str) -> None:
    """Only a timer due at once is parked (the replay consumes no other): parking one due
    later is refused, nothing written; it still fires when due."""
    runner = _runner(store_url)  # the clock at 1,000 ms
    _calm(runner, "calm")  # its timer is due at 1,005 ms
    (armed,) = runner.load("calm").state.timers
    with pytest.raises(ValueError, match="not due"):
        runner.park_timer("calm", armed.id, armed.generation)
    assert [e.status for e in runner.history("calm")] == ["APPLIED"]
    assert runner.verify("calm").ok
    assert [o.status.value for o in runner.fire_due(now_ms=1_005)] == ["APPLIED"]
    runner.store.close()
