"""A delayed `send` to the parent or a child: a timer of the sender whose firing delivers
the message through the family routing, exactly once; never delivered once the sender
has ended (reached a top-level final state, or been cancelled); `cancel:` by its id.
Each case on the Simulator's virtual clock and on the durable runner (both stores), and
a runner restarted between the send and the firing (SQLite) loses and doubles nothing."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from runner_charts import chart_from

from statekit.engine.family_members import MemberStatus
from statekit.runner.runner import Runner
from statekit.runner.store import open_store
from statekit.testing import FamilySimulator

PARENT = """
statechart: waiter
version: 1
description: Waits for its helper's greeting, and can make it ping itself later.
context:
  greetings: {type: integer, default: 0}
events:
  hello: {n: integer}
  stop: {}
  poke: {}
  hush: {}
initial: waiting
states:
  waiting:
    invoke: {id: kid, chart: helper}
    on:
      hello:
        to: greeted
        do: [{assign: {greetings: "ctx.greetings + event.n"}}]
      stop: stopped
      poke:
        do: [{send: {to: kid, event: ping, delay: 200ms, id: toKid}}]
      hush:
        do: [{cancel: toKid}]
  greeted:
    on:
      hello:
        do: [{assign: {greetings: "ctx.greetings + event.n"}}]
  stopped: {final: true}
"""

CHILD = """
statechart: helper
version: 1
description: Greets its parent half a second after it starts.
events:
  quit: {}
  drop: {}
  ping: {}
initial: working
states:
  working:
    entry:
      - send: {to: parent, event: hello, payload: {n: 7}, delay: 500ms, id: greet}
    on:
      quit: done
      drop:
        do: [{cancel: greet}]
      ping: pinged
  pinged: {}
  done: {final: true}
"""

KID = "w1/kid/0"


class Family:
    """One driver of the family under test: `events` sends one event to an instance,
    `at` sets the clock and fires what is due, `leaves`/`ctx` read a member."""

    def __init__(self, kind: str, url: str | None = None) -> None:
        self.kind, self.now = kind, 0
        parent, child = chart_from(PARENT), chart_from(CHILD)
        if kind == "simulator":
            self.sim = FamilySimulator([parent, child], now_ms=0)
            self.sim.start("waiter", "w1")
            return
        assert url is not None
        self.url, self.charts = url, (parent, child)
        self._open()
        self.parent.create("w1")

    def _open(self) -> None:
        parent, child = self.charts
        store = open_store(self.url)
        self.store = store
        self.parent = Runner(parent, store, charts=[child], clock=lambda: self.now)
        self.child = Runner(child, store, charts=[parent], clock=lambda: self.now)

    def restart(self) -> None:
        """A new process: the store reopened, new runners (the runner only)."""
        self.store.close()
        self._open()

    def send(self, instance: str, event: str, n: int) -> None:
        if self.kind == "simulator":
            self.sim.send(event, to=instance)
            return
        runner = self.parent if instance == "w1" else self.child
        assert runner.apply(instance, f"e{n}", event).applied

    def at(self, now: int) -> None:
        if self.kind == "simulator":
            self.sim.advance(now - self.now)
            self.now = now
            return
        self.now = now
        self.parent.fire_due()
        self.child.fire_due()

    def leaves(self, instance: str) -> tuple[str, ...]:
        if self.kind == "simulator":
            return self.sim.member(instance).state.leaves
        runner = self.parent if instance == "w1" else self.child
        return runner.load(instance).state.leaves

    def greetings(self) -> int:
        if self.kind == "simulator":
            value = self.sim.member("w1").state.context["greetings"]
        else:
            value = self.parent.load("w1").state.context["greetings"]
        assert isinstance(value, int)
        return value

    def timers(self, instance: str) -> int:
        if self.kind == "simulator":
            return len(self.sim.member(instance).state.timers)
        return len(self.store.timers(instance))

    def verified(self) -> bool:
        if self.kind == "simulator":
            return True
        return self.parent.verify("w1").ok and self.child.verify(KID).ok


MakeFamily = Callable[[], Family]


@pytest.fixture(params=["simulator", "sqlite", "postgresql"])
def family(request: pytest.FixtureRequest, tmp_path: Path) -> MakeFamily:
    if request.param == "simulator":
        return lambda: Family("simulator")
    if request.param == "sqlite":
        url = f"sqlite:///{tmp_path / 'statekit.db'}"
    else:
        url = request.getfixturevalue("pg_url")
    return lambda: Family("runner", url)


def test_a_delayed_send_to_the_parent_arrives_when_its_delay_has_passed(
    family: MakeFamily,
) -> None:
    f = family()
    assert f.timers(KID) == 1
    f.at(499)
    assert f.leaves("w1") == ("waiting",)
    f.at(500)
    assert f.leaves("w1") == ("greeted",) and f.greetings() == 7
    assert f.timers(KID) == 0
    f.at(10_000)  # exactly once
    assert f.greetings() == 7 and f.verified()


def test_a_delayed_send_to_a_child_arrives_when_its_delay_has_passed(family: MakeFamily) -> None:
    f = family()
    f.send("w1", "poke", 1)
    f.at(199)
    assert f.leaves(KID) == ("working",)
    f.at(200)
    assert f.leaves(KID) == ("pinged",) and f.timers("w1") == 0 and f.verified()


@pytest.mark.parametrize(
    ("instance", "event", "sender"),
    [(KID, "drop", KID), ("w1", "hush", "w1")],
    ids=["to-parent", "to-child"],
)
def test_cancel_by_the_send_id_stops_the_message(
    family: MakeFamily, instance: str, event: str, sender: str
) -> None:
    f = family()
    if sender == "w1":
        f.send("w1", "poke", 1)
    f.send(instance, event, 2)
    assert f.timers(sender) == 0
    f.at(10_000)
    assert f.leaves(KID) == ("working",)  # no ping
    assert f.greetings() == (0 if sender == KID else 7) and f.verified()


def test_a_child_that_ends_before_the_delay_sends_nothing(family: MakeFamily) -> None:
    f = family()
    f.send(KID, "quit", 1)  # it reaches its top-level final state
    f.at(10_000)
    assert f.leaves("w1") == ("waiting",) and f.greetings() == 0 and f.verified()


def test_a_cancelled_child_sends_nothing(family: MakeFamily) -> None:
    f = family()
    f.send("w1", "stop", 1)  # leaving `waiting` cancels the child
    assert f.timers(KID) == 0
    f.at(10_000)
    assert f.leaves("w1") == ("stopped",) and f.greetings() == 0 and f.verified()


def test_a_restart_between_the_send_and_its_firing_loses_and_doubles_nothing(
    tmp_path: Path,
) -> None:
    f = Family("runner", f"sqlite:///{tmp_path / 'family.db'}")
    f.restart()
    assert f.timers(KID) == 1
    f.at(500)
    f.restart()
    f.at(500)  # fired once already: nothing more is due
    f.at(60_000)
    assert f.leaves("w1") == ("greeted",) and f.greetings() == 7 and f.verified()


def test_the_simulator_reports_the_child_done_and_its_message_never_delivered() -> None:
    f = Family("simulator")
    f.send(KID, "quit", 1)
    assert f.sim.status(KID) is MemberStatus.DONE
    assert f.sim.advance(10_000) == []
