"""The identifier bound (`identifier_bounds.MAX_ID_BYTES`) on both stores: every
identifier kind at the bound, one byte over and with a multi-byte character straddling
the bound, through `apply`, `apply_batch`, `apply_many`, `statekit run` and a timer
delivery; refused before the database sees it, the same way on SQLite and PostgreSQL."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from runner_charts import chart_from, write_chart

from statekit.runner import identifier_bounds
from statekit.runner.command_checks import make_command
from statekit.runner.errors import IdentifierBoundError
from statekit.runner.identifier_bounds import MAX_ID_BYTES, too_long, utf8_length
from statekit.runner.outcome import KEY_TOO_LONG, OutcomeStatus
from statekit.runner.runner import Runner
from statekit.runner.store import open_store

APPLIED, REJECTED = OutcomeStatus.APPLIED, OutcomeStatus.REJECTED

KEYED = """
statechart: keyed
version: 1
context:
  ref: {type: string, default: ""}
  n: {type: integer, default: 0}
events:
  Paid: {ref: string}
  Later: {ref: string}
  Poke: {}
idempotency:
  Paid: [ref]
initial: open
states:
  open:
    on:
      Paid:
        do:
          - assign: {n: ctx.n + 1}
      Later:
        do:
          - send: {event: Paid, delay: 10ms, payload: {ref: event.ref}}
          - assign: {n: ctx.n + 1}
"""

EURO = "\u20ac"  # three UTF-8 bytes


def sized(size: str) -> str:
    """An identifier of the kind of size: at the bound, one byte over, or with a
    three-byte character straddling the bound (one byte before it, two past)."""
    if size == "at":
        return "a" * MAX_ID_BYTES
    if size == "over":
        return "a" * (MAX_ID_BYTES + 1)
    return "a" * (MAX_ID_BYTES - 1) + EURO  # 514 bytes, 512 characters


def key_sized(size: str) -> str:
    """A `ref` whose encoded key (`["…"]`, four bytes of JSON) is of the kind of size."""
    return sized(size)[4:]


SIZES = ["at", "over", "straddling"]


def test_the_sizes_are_what_they_say() -> None:
    assert [utf8_length(sized(s)) for s in SIZES] == [MAX_ID_BYTES, MAX_ID_BYTES + 1, 514]
    assert too_long(sized("at"), "x") is None
    assert too_long(sized("straddling"), "x") == (
        f"x is 514 UTF-8 bytes; the bound is {MAX_ID_BYTES} (MAX_ID_BYTES)"
    )


@pytest.fixture
def runner(store_url: str) -> Runner:
    r = Runner(chart_from(KEYED), open_store(store_url))
    r.create("i")
    return r


KINDS = ["instance ID", "event ID", "event type", "idempotency key"]


def _apply_args(kind: str, size: str) -> tuple[str, str, str, dict[str, Any]]:
    """(instance, event ID, type, payload) with the identifier `kind` of `size`."""
    value = sized(size)
    if kind == "instance ID":
        return value, "e", "Paid", {"ref": "r"}
    if kind == "event ID":
        return "i", value, "Paid", {"ref": "r"}
    if kind == "event type":
        return "i", "e", value, {}
    return "i", "e", "Paid", {"ref": key_sized(size)}


def _expect(kind: str, size: str, outcome: Any) -> None:
    """At the bound the store takes it (or the engine classifies it); past it the runner
    refuses it: a ValueError naming the bound, or a KEY_TOO_LONG rejection."""
    if size == "at":
        assert not isinstance(outcome, Exception), outcome
        if kind == "event type":  # undeclared: the engine's rejection
            assert outcome.status is REJECTED and outcome.reason != KEY_TOO_LONG
        elif kind != "instance ID":
            assert outcome.status is APPLIED
        return
    if kind == "idempotency key":
        assert outcome.status is REJECTED and outcome.reason == KEY_TOO_LONG
        assert str(MAX_ID_BYTES) in (outcome.message or "")
        return
    assert isinstance(outcome, ValueError), outcome
    assert f"the bound is {MAX_ID_BYTES}" in str(outcome)


def _create_if(r: Runner, instance: str) -> None:
    if instance != "i" and utf8_length(instance) <= MAX_ID_BYTES:
        r.create(instance)


@pytest.mark.parametrize("size", SIZES)
@pytest.mark.parametrize("kind", KINDS)
def test_apply(runner: Runner, kind: str, size: str) -> None:
    instance, event_id, type_, payload = _apply_args(kind, size)
    _create_if(runner, instance)
    try:
        outcome: Any = runner.apply(instance, event_id, type_, payload)
    except ValueError as exc:
        outcome = exc
    _expect(kind, size, outcome)
    assert runner.verify("i").ok


@pytest.mark.parametrize("size", SIZES)
@pytest.mark.parametrize("kind", KINDS)
def test_apply_batch_and_apply_many(runner: Runner, kind: str, size: str) -> None:
    instance, event_id, type_, payload = _apply_args(kind, size)
    _create_if(runner, instance)
    try:
        command = make_command(event_id, type_, payload)
        outcome: Any = runner.apply_batch(instance, [command])[0]
    except ValueError as exc:
        outcome = exc
    _expect(kind, size, outcome)
    # apply_many answers item by item: the good one behind is still applied
    try:
        second = make_command("b" + event_id[1:], type_, payload)
    except ValueError as exc:
        assert size != "at" and kind in ("event ID", "event type"), exc
        return
    items = runner.apply_many([(instance, second), ("i", make_command("ok", "Paid", {"ref": "z"}))])
    if kind == "instance ID" and size != "at":
        assert isinstance(items[0], ValueError) and str(MAX_ID_BYTES) in str(items[0])
    assert getattr(items[-1], "status", items[-1]) is APPLIED


@pytest.mark.parametrize("size", SIZES)
def test_create_refuses_a_long_instance_id(runner: Runner, size: str) -> None:
    if size == "at":
        runner.create(sized(size))
        return
    with pytest.raises(ValueError, match=f"the bound is {MAX_ID_BYTES}"):
        runner.create(sized(size))


@pytest.mark.parametrize("size", SIZES)
def test_a_timer_delivery_with_a_long_key_consumes_its_timer(runner: Runner, size: str) -> None:
    """The poison message: its delivery is refused as KEY_TOO_LONG and recorded, the
    timer consumed; the other timers still fire; replay and verify agree."""
    r = runner
    assert r.apply("i", "later", "Later", {"ref": key_sized(size)}).applied
    r.create("j")
    assert r.apply("j", "later", "Later", {"ref": "fine"}).applied
    fired = r.fire_due(now_ms=r.now_ms() + 10**9)
    by_instance = {o.instance_id: o for o in fired}
    assert by_instance["j"].status is APPLIED
    poisoned = by_instance["i"]
    if size == "at":
        assert poisoned.status is APPLIED
    else:
        assert (poisoned.status, poisoned.reason) == (REJECTED, KEY_TOO_LONG)
        assert str(MAX_ID_BYTES) in (poisoned.message or "")
    assert r.fire_due(now_ms=r.now_ms() + 10**9) == []  # nothing left to retry
    assert r.load("i").state.timers == ()
    assert r.verify("i").ok and r.verify("j").ok
    assert r.timer_problems == {}


@pytest.mark.parametrize("kind", KINDS)
def test_statekit_run_answers_each_line_and_goes_on(
    store_url: str, tmp_path: Path, kind: str
) -> None:
    chart = write_chart(KEYED, tmp_path, "keyed")
    lines = []
    for size in SIZES:
        instance, event_id, type_, payload = _apply_args(kind, size)
        line: dict[str, Any] = {
            "instance": instance,
            "event_id": f"{event_id}-{size}"[-MAX_ID_BYTES:],
        }
        if kind == "event ID":
            line["event_id"] = event_id
        line.update({"type": type_, "payload": payload})
        lines.append(json.dumps(line, ensure_ascii=False))
    lines.append(
        json.dumps({"instance": "i", "event_id": "last", "type": "Paid", "payload": {"ref": "q"}})
    )
    done = subprocess.run(
        [sys.executable, "-m", "statekit", "run", str(chart), "--db", store_url],
        input="\n".join(lines) + "\n",
        capture_output=True,
        text=True,
        encoding="utf-8",
        timeout=120,
    )
    assert "Traceback" not in done.stderr and "internal error" not in done.stderr, done.stderr
    answers = [json.loads(x) for x in done.stdout.splitlines()]
    assert len(answers) == 4, done.stdout
    assert answers[-1]["status"] == "APPLIED"
    for answer in answers[1:3]:
        assert answer["status"] in ("ERROR", "REJECTED")
        assert str(MAX_ID_BYTES) in json.dumps(answer)


LONG = "x" * (MAX_ID_BYTES + 1)
NAMED = """
statechart: named
events:
  Go: {}
  Ping: {}
initial: idle
states:
  idle:
    on:
      Go: {do: [{send: {event: Ping, delay: 1s, id: p}}]}
      Ping: {}
"""


@pytest.mark.parametrize(
    ("what", "text"),
    [
        ("event", NAMED.replace("Ping", "P" + LONG)),
        ("timer", NAMED.replace("idle", "i" + LONG).replace("states:", "states:", 1)
         + f"  w{LONG}:\n    after: {{1s: i{LONG}}}\n"),
        ("send id", NAMED.replace("id: p", f"id: p{LONG}")),
    ],
)  # fmt: skip
def test_a_chart_naming_something_over_the_bound_is_refused(
    store_url: str, tmp_path: Path, what: str, text: str
) -> None:
    chart = chart_from(text)
    with pytest.raises(IdentifierBoundError, match=f"the {what} .* the bound is {MAX_ID_BYTES}"):
        Runner(chart, open_store(store_url))
    path = write_chart(text, tmp_path, "named")
    done = subprocess.run(
        [sys.executable, "-m", "statekit", "run", str(path), "--db", store_url],
        input="",
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 2 and "Traceback" not in done.stderr, done.stderr
    assert f"the bound is {MAX_ID_BYTES}" in done.stderr
    Runner(chart_from(NAMED), open_store(store_url))  # within the bound: fine


def test_a_store_written_before_the_bound_keeps_its_meaning(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Old events never change meaning: what 0.1.0 recorded with a key over today's bound
    (on SQLite, which took it; PostgreSQL's index refused it) replays and verifies as it
    was recorded, a delivery applied included, while new events meet the bound."""
    r = Runner(chart_from(KEYED), open_store(f"sqlite:///{tmp_path / 'old.db'}"))
    r.create("i")
    with monkeypatch.context() as before_the_bound:
        before_the_bound.setattr(identifier_bounds, "MAX_ID_BYTES", 10**6)
        assert r.apply("i", "paid", "Paid", {"ref": key_sized("over")}).applied
        assert r.apply("i", "later", "Later", {"ref": key_sized("over") + "x"}).applied
        [delivered] = r.fire_due(now_ms=r.now_ms() + 10**9)
        assert delivered.status is APPLIED
    assert r.verify("i").ok, r.verify("i")
    assert r.rebuild("i").state == r.load("i").state
    refused = r.apply("i", "paid-again", "Paid", {"ref": key_sized("over") + "y"})
    assert (refused.status, refused.reason) == (REJECTED, KEY_TOO_LONG)
    assert r.verify("i").ok, r.verify("i")
