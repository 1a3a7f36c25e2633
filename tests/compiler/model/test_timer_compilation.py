"""`after:` timers and `send`/`cancel` effects compiled into the IR."""

from __future__ import annotations

import json

from chart_helpers import chart_of

from statekit.compiler.ir import Cancel, Send, TimerKind, TransitionKind
from statekit.compiler.serialize import chart_to_json

CHART = """
statechart: pay
context:
  lease_until_ms: {type: integer, default: 0}
  backoff_ms: {type: integer, default: 100}
  budget: {type: integer, default: 3}
events:
  Go: {}
  Remind: {n: integer}
guards:
  left: ctx.budget > 0
initial: processing
after:
  1h: {do: [{assign: {budget: 0}}]}
states:
  processing:
    after:
      15m: {to: closed, do: [{emit: {type: PaymentTimedOut}}]}
      90m: [{to: closed, guard: left}, running]
      1h30m: running
    on: {Go: running}
  running:
    entry: [{send: {event: Remind, payload: {n: 1}, delay: 30s, id: rem}}]
    exit: [{cancel: rem}, {send: {event: Go}}]
    after:
      - at: ctx.lease_until_ms
        to: waiting_retry
        do: [{send: {event: Remind, payload: {n: ctx.budget}, at: ctx.lease_until_ms + 5}}]
  waiting_retry:
    after:
      - delay: ctx.backoff_ms
        to: processing
        guard: left
      - delay: " ctx.backoff_ms"
        to: closed
      - {delay: 0s, to: closed}
      - {delay: 000ms, to: processing}
  closed: {final: true}
"""


def test_timers_are_named_numbered_and_owned_in_document_order() -> None:
    chart = chart_of(CHART)
    assert [
        (t.id, t.name, chart.states[t.state].path, t.kind, t.delay_ms) for t in chart.timers
    ] == [
        (0, "after(1h)@", "", TimerKind.AFTER, 3_600_000),
        (1, "after(15m)@processing", "processing", TimerKind.AFTER, 900_000),
        (2, "after(90m)@processing", "processing", TimerKind.AFTER, 5_400_000),
        (3, "after(1h30m)@processing", "processing", TimerKind.AFTER, 5_400_000),
        (4, "at(ctx.lease_until_ms)@running", "running", TimerKind.AT, None),
        (5, "after(ctx.backoff_ms)@waiting_retry", "waiting_retry", TimerKind.DELAY, None),
        (6, "after(0ms)@waiting_retry", "waiting_retry", TimerKind.AFTER, 0),
    ]
    assert [s.timers for s in chart.states] == [(0,), (1, 2, 3), (4,), (5, 6), ()]
    for timer in chart.timers:
        assert chart.timer(timer.name) is timer
        assert timer.name not in chart.events
        assert (timer.expression is None) == (timer.kind is TimerKind.AFTER)
    assert chart.timer("Go") is None
    assert chart.timer("after(15m)@running") is None


def test_timer_entries_are_event_transitions_on_the_timer_event() -> None:
    chart = chart_of(CHART)
    processing = chart.state("processing")
    table = chart.candidates[processing.id]
    # the root's timer is a candidate in every state, after the state's own transitions
    assert set(table) == {"Go", "after(15m)@processing", "after(90m)@processing",
                          "after(1h30m)@processing", "after(1h)@"}  # fmt: skip
    ninety = [chart.transitions[t] for t in table["after(90m)@processing"]]
    assert [t.kind for t in ninety] == [TransitionKind.EVENT, TransitionKind.EVENT]
    assert [chart.states[t.targets[0]].path for t in ninety] == ["closed", "running"]
    assert [g.name for g in ninety[0].guards] == ["left"]
    # entries with one name (ctx.backoff_ms, written twice; 0s and 000ms) are alternatives
    retry = chart.candidates[chart.state("waiting_retry").id]
    assert len(retry["after(ctx.backoff_ms)@waiting_retry"]) == 2
    assert len(retry["after(0ms)@waiting_retry"]) == 2
    assert chart.eventless[processing.id] == ()


def test_send_and_cancel_effects() -> None:
    chart = chart_of(CHART)
    running = chart.state("running")
    (send,) = running.entry
    assert isinstance(send, Send)
    assert (send.event, send.delay_ms, send.delay, send.at, send.id) == (
        "Remind",
        30_000,
        None,
        None,
        "rem",
    )
    assert [(k, e.source) for k, e in send.payload] == [("n", "1")]
    cancel, undelayed = running.exit
    assert isinstance(cancel, Cancel) and cancel.id == "rem"
    assert isinstance(undelayed, Send) and not undelayed.delayed and undelayed.id is None
    assert send.delayed
    (timed,) = chart.transitions[
        chart.candidates[running.id]["at(ctx.lease_until_ms)@running"][0]
    ].effects
    assert isinstance(timed, Send) and timed.at is not None
    assert timed.at.source == "ctx.lease_until_ms + 5" and timed.delay_ms is None


def test_the_ir_json_writes_timers_and_new_effects() -> None:
    chart = chart_of(CHART)
    data = chart_to_json(chart, positions=False)
    assert [t["name"] for t in data["timers"]] == [t.name for t in chart.timers]
    assert data["timers"][5]["expression"]["source"] == "ctx.backoff_ms"
    assert data["timers"][1] == {"id": 1, "name": "after(15m)@processing", "state": 1,
                                 "kind": "after", "delay_ms": 900_000}  # fmt: skip
    running = data["states"][chart.state("running").id]
    assert running["timers"] == [4]
    assert running["entry"][0]["send"] == "Remind" and running["entry"][0]["id"] == "rem"
    assert running["exit"] == [{"cancel": "rem"}, {"send": "Go", "payload": []}]
    assert "timers" not in data["states"][chart.state("closed").id]
    json.dumps(chart_to_json(chart))  # serialisable with positions too


def test_timers_change_the_digest() -> None:
    base = "statechart: t\nevents: {Go: {}}\ninitial: a\nstates:\n  a: {on: {Go: b}}\n  b: {}\n"
    with_timer = base.replace("a: {on: {Go: b}}", "a: {on: {Go: b}, after: {5s: b}}")
    longer = with_timer.replace("5s", "6s")
    digests = {chart_of(text).digest for text in (base, with_timer, longer)}
    assert len(digests) == 3


def test_a_secret_copied_into_a_sent_payload_is_redacted_in_that_event() -> None:
    chart = chart_of(
        """
        statechart: secrets
        context: {token: {type: string, default: "", secret: true}, n: integer}
        events: {Use: {token: string, n: integer}, Go: {}}
        initial: a
        states:
          a:
            entry: [{send: {event: Use, payload: {token: ctx.token, n: ctx.n}, delay: 1s}}]
            on: {Go: a}
        """
    )
    assert chart.redacted.payload["Use"] == frozenset({"token"})
