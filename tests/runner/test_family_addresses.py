"""`send: {to: {address: ...}}`: a member of the sender's family named by an address
computed when the send runs, the same through the FamilySimulator and the runner on
both stores. Every address form: the sender itself (by `#_scxml_<id>` and by its ID),
its parent (`#_parent` and its ID), its child (`#_<invoke id>` and its ID), the origin
of the event being handled, and each address that reaches nobody (null, garbage, an
unknown invoke id, `#_parent` from the root, another family's instance, a finished
child), which sends `error.communication` back to the sender and changes nobody else."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from runner_charts import chart_from

from statekit.engine.chart import Chart
from statekit.runner.runner import Runner
from statekit.runner.store import open_store
from statekit.testing import FamilySimulator, Simulator

HUB = """
statechart: hub
version: 1
description: Sends pong to the address it is given; answers hello to its origin.
context:
  target: {type: string, nullable: true}
  asker: {type: string, nullable: true}
  got: {type: string, default: ""}
  errors: {type: string, default: ""}
events:
  aim: {address: {type: string, nullable: true}}
  fire: {}
  pong: {}
  hello: {}
initial: running
states:
  running:
    invoke: {id: spoke, chart: spoke}
    on:
      aim: {do: [{assign: {target: event.address}}]}
      fire: {do: [{send: {event: pong, to: {address: ctx.target}}}]}
      pong: {do: [{assign: {got: "ctx.got + 'pong;'"}}]}
      hello:
        do:
          - assign: {asker: _event.origin}
          - send: {event: reply, to: {address: _event.origin}}
      error.communication: {do: [{assign: {errors: "ctx.errors + event.reason + ';'"}}]}
"""

SPOKE = """
statechart: spoke
version: 1
description: Asks its parent, and sends pong to it by address.
context:
  got: {type: string, default: ""}
events:
  ask: {}
  up: {}
  pong: {}
  reply: {}
  stop: {}
initial: waiting
states:
  waiting:
    on:
      ask: {do: [{send: {event: hello, to: parent}}]}
      up: {do: [{send: {event: pong, to: {address: "'#_parent'"}}}]}
      pong: {do: [{assign: {got: "ctx.got + 'pong;'"}}]}
      reply: {do: [{assign: {got: "ctx.got + 'reply;'"}}]}
      stop: done
  done: {final: true}
"""

CHILD = "h/spoke/0"
REACHED: dict[str, tuple[str, str]] = {  # address → (the member that got pong, its name)
    "#_scxml_h": ("h", "itself by #_scxml_"),
    "h": ("h", "itself by its ID"),
    "#_spoke": (CHILD, "its child by invoke id"),
    CHILD: (CHILD, "its child by its ID"),
    f"#_scxml_{CHILD}": (CHILD, "its child by #_scxml_"),
}
UNREACHABLE: dict[str | None, str] = {  # address → what error.communication's reason says
    None: "no address",
    "": "no address",
    "nowhere": "no such instance",
    "#_nochild": "no running child of the invocation 'nochild'",
    "#_parent": "the sender was not invoked",
    "o": "of another family",
    "#_scxml_o/spoke/0": "of another family",
}


def _charts() -> list[Chart]:
    return [chart_from(HUB), chart_from(SPOKE)]


class Family:
    """The hub `h` (with its child) and another family's hub `o`, in one driver."""

    def __init__(self, driver: str, store_url: str) -> None:
        hub, spoke = _charts()
        self.sim: FamilySimulator | None = None
        self.runner: Runner | None = None
        if driver == "simulator":
            self.sim = FamilySimulator([hub, spoke])
            self.sim.start("hub", "h")
            self.sim.start("hub", "o")
        else:
            self.runner = Runner(hub, open_store(store_url), charts=[spoke])
            self.runner.create("h")
            self.runner.create("o")
        self.count = 0

    def send(self, to: str, event: str, payload: dict[str, Any] | None = None) -> None:
        self.count += 1
        if self.sim is not None:
            step = self.sim.send(event, payload, to=to)
            assert step.result is not None and step.result.applied
        else:
            assert self.runner is not None
            outcome = self.runner.apply(to, f"e{self.count}", event, payload or {})
            assert outcome.status.value == "APPLIED", outcome

    def context(self, instance: str) -> dict[str, Any]:
        if self.sim is not None:
            return dict(self.sim.member(instance).state.context)
        assert self.runner is not None
        return dict(self.runner.load(instance).state.context)

    def verified(self) -> bool:
        if self.runner is None:
            return True
        return all(self.runner.verify(i).ok for i in ("h", CHILD, "o", "o/spoke/0"))


@pytest.fixture(params=["simulator", "sqlite", "postgresql"])
def family(request: pytest.FixtureRequest, tmp_path: Path) -> Family:
    """The family in the FamilySimulator, or in the runner on a fresh store of each kind."""
    if request.param == "simulator":
        return Family("simulator", "")
    if request.param == "sqlite":
        return Family("runner", f"sqlite:///{tmp_path / 'statekit.db'}")
    return Family("runner", request.getfixturevalue("pg_url"))


@pytest.mark.parametrize("address", sorted(REACHED))
def test_an_address_reaches_the_member_it_names(family: Family, address: str) -> None:
    family.send("h", "aim", {"address": address})
    family.send("h", "fire")
    receiver, _ = REACHED[address]
    for member in ("h", CHILD, "o", "o/spoke/0"):
        expected = "pong;" if member == receiver else ""
        assert family.context(member)["got"] == expected, member
    assert family.context("h")["errors"] == ""
    assert family.verified()


@pytest.mark.parametrize("address", sorted(UNREACHABLE, key=str))
def test_an_address_that_reaches_nobody_sends_error_communication_back(
    family: Family, address: str | None
) -> None:
    family.send("h", "aim", {"address": address})
    family.send("h", "fire")
    errors = family.context("h")["errors"]
    assert errors.count(";") == 1 and UNREACHABLE[address] in errors, errors
    assert f"the address {(address or '')!r}" in errors  # (null: '')
    for member in ("h", CHILD, "o", "o/spoke/0"):
        assert family.context(member)["got"] == "", member
    assert family.verified()


def test_a_child_reaches_its_parent_by_address(family: Family) -> None:
    family.send(CHILD, "up")
    assert family.context("h")["got"] == "pong;"
    assert family.context("o")["got"] == ""


# (the runner tells a family step's delivery from another member only its payload:
# `_event.origin` of such an event is null there, live and in replay; so this origin's
# round trip runs in the FamilySimulator, and the runner is given the address above;
# an instance's own send's origin is the instance on every driver, as the last test shows)
def test_a_reply_goes_back_to_the_origin_and_the_origin_can_be_kept() -> None:
    family = Family("simulator", "")
    family.send(CHILD, "ask")  # hello to the parent, which replies to _event.origin
    assert family.context(CHILD)["got"] == "reply;"
    assert family.context("h")["asker"] == CHILD
    family.send("h", "aim", {"address": CHILD})  # the kept origin, used later
    family.send("h", "fire")
    assert family.context(CHILD)["got"] == "reply;pong;"
    assert family.verified()


@pytest.mark.parametrize("address", ["#_spoke", CHILD])
def test_a_finished_child_is_no_longer_reached(family: Family, address: str) -> None:
    family.send(CHILD, "stop")
    family.send("h", "aim", {"address": address})
    family.send("h", "fire")
    errors = family.context("h")["errors"]
    assert errors.count(";") == 1, errors
    assert family.context(CHILD)["got"] == ""
    assert family.verified()


def test_an_instance_alone_reaches_itself_and_nobody_else() -> None:
    sim = Simulator(chart_from(ALONE), instance_id="me")
    sim.send("aim", {"address": "#_scxml_me"})
    sim.send("fire")
    sim.send("aim", {"address": "#_parent"})  # (no family: every other address fails)
    sim.send("fire")
    context = sim.state.context
    assert context["got"] == "pong;"
    assert context["errors"].count(";") == 1 and "alone" in context["errors"]


ALONE = """
statechart: alone
version: 1
description: Sends pong to the address it is given.
context:
  target: {type: string, nullable: true}
  got: {type: string, default: ""}
  errors: {type: string, default: ""}
events:
  aim: {address: {type: string, nullable: true}}
  fire: {}
  pong: {}
initial: running
states:
  running:
    on:
      aim: {do: [{assign: {target: event.address}}]}
      fire: {do: [{send: {event: pong, to: {address: ctx.target}}}]}
      pong: {do: [{assign: {got: "ctx.got + 'pong;'"}}]}
      error.communication: {do: [{assign: {errors: "ctx.errors + event.reason + ';'"}}]}
"""


ECHO = """
statechart: echo
version: 1
description: Sends itself a note, and answers the note's origin.
context:
  origin: {type: string, nullable: true}
  got: {type: string, default: ""}
events:
  start: {}
  note: {}
  pong: {}
initial: running
states:
  running:
    on:
      start: {do: [{send: {event: note}}]}
      note:
        do:
          - assign: {origin: _event.origin}
          - send: {event: pong, to: {address: _event.origin}}
      pong: {do: [{assign: {got: "ctx.got + str(_event.origintype is not None)"}}]}
"""


@pytest.mark.parametrize("driver", ["simulator", "sqlite", "postgresql"])
def test_an_own_sends_origin_is_the_instance_itself_on_every_driver(
    request: pytest.FixtureRequest, tmp_path: Path, driver: str
) -> None:
    chart = chart_from(ECHO)
    if driver == "simulator":
        sim = Simulator(chart, instance_id="e1")
        sim.send("start")
        context = sim.state.context
    else:
        url = f"sqlite:///{tmp_path / 'db.sqlite'}"
        runner = Runner(
            chart, open_store(url if driver == "sqlite" else request.getfixturevalue("pg_url"))
        )
        runner.create("e1")
        assert runner.apply("e1", "s1", "start").status.value == "APPLIED"
        context = runner.load("e1").state.context
        assert runner.verify("e1").ok  # the replay tells the note the same
    assert context["origin"] == "e1"
    assert context["got"] == "true"  # a send delivered it
