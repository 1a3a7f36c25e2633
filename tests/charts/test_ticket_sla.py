"""The support ticket's SLA is a pausable timer (`pause: sla` on entering
`sla.clock.paused`, `resume: sla` on leaving it): waiting on the customer does not
count against it. Tested on the Simulator's virtual clock, and in the durable runner
(SQLite and PostgreSQL) across restarts: the runner is closed while the timer is
paused and again after it resumed, and a new runner on the same database finds it,
lists it and fires it at the right time."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from cli_process import statekit as statekit_cli

import statekit
from statekit import OutcomeStatus
from statekit.testing import Simulator

CHART = Path(__file__).resolve().parent / "domain" / "support_ticket.yaml"
SLA = "after(sla)@sla.clock"
T0 = 1_767_225_600_000  # 2026-01-01T00:00:00Z
HOUR = 3_600_000

OPENED = {"ticket_id": "T-7", "priority": "urgent"}  # four hours of SLA


class Clock:
    """Epoch milliseconds, moved by the test."""

    def __init__(self) -> None:
        self.now = T0

    def __call__(self) -> int:
        return self.now


def leaves(state: statekit.State) -> set[str]:
    active = state.configuration
    return {s for s in active if not any(o.startswith(s + ".") for o in active)}


def test_in_the_simulator_the_sla_stops_while_waiting_on_the_customer() -> None:
    sim = Simulator(statekit.load(CHART), now_ms=T0)
    sim.send("TICKET_OPENED", OPENED)
    sim.send("AGENT_ASSIGNED", {"agent_id": "ana"})
    sim.advance(1 * HOUR)
    sim.send("INFO_REQUESTED", {"message_id": "m-1"})
    sla = sim.state.timer(SLA)
    assert sla is not None and (sla.paused_ms, sla.due_ms) == (3 * HOUR, None)
    # two days waiting: the SLA's first due time passes, nothing fires but no_reply's
    # timer is still six days away
    assert sim.advance(48 * HOUR) == []
    sim.send("CUSTOMER_REPLIED", {"message_id": "m-2"})
    sla = sim.state.timer(SLA)
    assert sla is not None and (sla.paused_ms, sla.due_ms) == (None, T0 + 52 * HOUR)
    assert sim.advance(3 * HOUR - 1) == []
    (breach,) = sim.advance(1)
    assert [m.type for m in breach.emitted] == ["SlaBreached", "EscalationRaised"]
    assert "sla.breached" in leaves(sim.state)
    # the history replays to the same state, pauses included
    assert statekit.load(CHART).replay(sim.history, state=sim.start_state).state == sim.state


def _runner(url: str, clock: Clock) -> statekit.Runner:
    return statekit.Runner(statekit.load(CHART), statekit.open_store(url), clock=clock)


def _listed(url: str) -> list[dict[str, Any]]:
    done = statekit_cli("timers", "--db", url, "--format", "json")
    assert done.returncode == 0, done.stderr
    return [json.loads(line) for line in done.stdout.splitlines()]


def test_in_the_runner_a_paused_sla_survives_restarts_and_fires_when_its_time_is_up(
    store_url: str,
) -> None:
    clock = Clock()
    first = _runner(store_url, clock)
    first.create("t-7")
    assert first.apply("t-7", "sys-1", "TICKET_OPENED", OPENED).status is OutcomeStatus.APPLIED
    first.apply("t-7", "agent-1", "AGENT_ASSIGNED", {"agent_id": "ana"})
    clock.now = T0 + 1 * HOUR
    first.apply("t-7", "agent-2", "INFO_REQUESTED", {"message_id": "m-1"})
    first.store.close()

    # a new runner on the same database: the timer is still paused, nothing is due
    clock.now = T0 + 30 * HOUR
    second = _runner(store_url, clock)
    sla = second.load("t-7").state.timer(SLA)
    assert sla is not None and (sla.paused_ms, sla.due_ms) == (3 * HOUR, None)
    assert second.fire_due() == []
    (listed,) = [t for t in _listed(store_url) if t["timer"] == SLA]
    assert (listed["paused_ms"], listed["due_ms"], listed["chart"]) == (
        3 * HOUR,
        None,
        "support_ticket",
    )
    # the customer answers: the SLA runs again with its three hours left
    second.apply("t-7", "mail-2", "CUSTOMER_REPLIED", {"message_id": "m-2"})
    (listed,) = [t for t in _listed(store_url) if t["timer"] == SLA]
    assert (listed.get("paused_ms"), listed["due_ms"]) == (None, T0 + 33 * HOUR)
    second.store.close()

    third = _runner(store_url, clock)
    clock.now = T0 + 33 * HOUR - 1
    assert third.fire_due() == []
    clock.now = T0 + 33 * HOUR
    (breach,) = third.fire_due()
    assert breach.status is OutcomeStatus.APPLIED
    assert [m.type for m in breach.emitted] == ["SlaBreached", "EscalationRaised"]
    assert "sla.breached" in leaves(breach.state)
    assert third.verify("t-7").ok
    third.store.close()
