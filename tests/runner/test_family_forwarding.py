"""`invoke: {..., forward: true}`: every event the parent processes while the child runs is
delivered to the child too, after the parent's step, in order, exactly once (the
child's own sends to its parent included); not an event the parent's chart refused
before selecting (`UNKNOWN_EVENT`, `INVALID_PAYLOAD`), not a repeated one, not to a
child without `forward:`. Each case on the Simulator and on the runner (both stores)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from runner_charts import chart_from

from statekit.runner.runner import Runner
from statekit.runner.store import open_store
from statekit.testing import FamilySimulator

DESK = """
statechart: desk
version: 1
description: Takes notes, which its clerk sees too; its archive sees nothing.
context:
  heard: {type: integer, default: 0}
events:
  note: {text: string}
  heard: {n: integer}
  close: {}
  shelve: {}
initial: open
states:
  open:
    invoke:
      - {id: clerk, chart: clerk, forward: true}
      - {id: archive, chart: clerk}
    on:
      note: {}
      heard:
        do: [{assign: {heard: event.n}}]
      close: closed
  closed: {final: true}
"""

CLERK = """
statechart: clerk
version: 1
description: Counts the notes it sees and the answers of its own that come back.
context:
  notes: {type: integer, default: 0}
  last: {type: string, default: ""}
  echoes: {type: integer, default: 0}
  shelved: {type: integer, default: 0}
events:
  note: {text: string}
  heard: {n: integer}
  shelve: {}
initial: working
states:
  working:
    on:
      note:
        do:
          - assign: {notes: ctx.notes + 1, last: event.text}
          - send: {to: parent, event: heard, payload: {n: ctx.notes}}
      heard:
        do: [{assign: {echoes: ctx.echoes + 1}}]
      shelve:
        do: [{assign: {shelved: ctx.shelved + 1}}]
"""

CLERK_ID, ARCHIVE_ID = "d1/clerk/0", "d1/archive/0"


class Desk:
    """The family on one driver: `send` an event to the desk, read a member's context."""

    def __init__(self, kind: str, url: str | None = None) -> None:
        self.kind = kind
        desk, clerk = chart_from(DESK), chart_from(CLERK)
        if kind == "simulator":
            self.sim = FamilySimulator([desk, clerk], now_ms=0)
            self.sim.start("desk", "d1")
            return
        assert url is not None
        self.store = open_store(url)
        self.runner = Runner(desk, self.store, charts=[clerk], clock=lambda: 0)
        self.runner.create("d1")

    def send(self, event: str, payload: dict[str, Any] | None = None, event_id: str = "") -> str:
        """The desk's classification of `event` (its reason, or APPLIED)."""
        if self.kind == "simulator":
            step = self.sim.send(event, payload or {}, to="d1")
            return step.reason or "APPLIED"
        outcome = self.runner.apply("d1", event_id or f"e-{event}", event, payload or {})
        return outcome.reason or "APPLIED"

    def ctx(self, instance: str) -> dict[str, Any]:
        if self.kind == "simulator":
            return dict(self.sim.member(instance).state.context)
        return dict(self.runner.load(instance).state.context)

    def verified(self) -> bool:
        if self.kind == "simulator":
            return True
        return all(self.runner.verify(i).ok for i in ("d1", CLERK_ID, ARCHIVE_ID))


@pytest.fixture(params=["simulator", "sqlite", "postgresql"])
def desk(request: pytest.FixtureRequest, tmp_path: Path) -> Callable[[], Desk]:
    if request.param == "simulator":
        return lambda: Desk("simulator")
    if request.param == "sqlite":
        url = f"sqlite:///{tmp_path / 'statekit.db'}"
    else:
        url = request.getfixturevalue("pg_url")
    return lambda: Desk("runner", url)


def test_an_event_the_parent_processes_reaches_the_forwarding_child_only(
    desk: Callable[[], Desk],
) -> None:
    d = desk()
    assert d.send("note", {"text": "a"}, "n1") == "APPLIED"
    clerk = d.ctx(CLERK_ID)
    assert (clerk["notes"], clerk["last"]) == (1, "a")
    assert d.ctx(ARCHIVE_ID)["notes"] == 0  # no `forward:`
    assert d.verified()


def test_events_are_forwarded_in_order_and_once_each(desk: Callable[[], Desk]) -> None:
    d = desk()
    d.send("note", {"text": "a"}, "n1")
    d.send("note", {"text": "b"}, "n2")
    clerk = d.ctx(CLERK_ID)
    assert (clerk["notes"], clerk["last"]) == (2, "b")
    # the clerk's own `heard` to the desk came back to it, once per note
    assert clerk["echoes"] == 2 and d.ctx("d1")["heard"] == 2
    assert d.verified()


def test_a_rejected_event_is_forwarded_when_the_parent_classified_it(
    desk: Callable[[], Desk],
) -> None:
    d = desk()
    assert d.send("shelve", event_id="s1") == "UNDEFINED_TRANSITION"
    assert d.ctx(CLERK_ID)["shelved"] == 1 and d.verified()


@pytest.mark.parametrize(
    ("event", "payload", "reason"),
    [("nope", {}, "UNKNOWN_EVENT"), ("note", {"text": 5}, "INVALID_PAYLOAD")],
)
def test_an_event_refused_before_any_state_sees_it_is_not_forwarded(
    desk: Callable[[], Desk], event: str, payload: dict[str, Any], reason: str
) -> None:
    d = desk()
    assert d.send(event, payload, "x1") == reason
    assert d.ctx(CLERK_ID)["notes"] == 0 and d.verified()


def test_nothing_is_forwarded_once_the_invoking_state_is_left(desk: Callable[[], Desk]) -> None:
    d = desk()
    d.send("close", event_id="c1")
    d.send("note", {"text": "late"}, "n9")
    assert d.ctx(CLERK_ID)["notes"] == 0


def test_a_repeated_event_is_not_forwarded_again(tmp_path: Path) -> None:
    d = Desk("runner", f"sqlite:///{tmp_path / 'desk.db'}")
    assert d.send("note", {"text": "a"}, "n1") == "APPLIED"
    d.send("note", {"text": "a"}, "n1")  # the same event ID: a duplicate
    assert d.ctx(CLERK_ID)["notes"] == 1 and d.verified()
