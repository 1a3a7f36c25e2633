"""Inline charts for the tests of the runner and its CLI, and random commands for them."""

from __future__ import annotations

import textwrap
from pathlib import Path

from hypothesis import strategies as st

from statekit.compiler.pipeline import compile_source
from statekit.engine.chart import Chart
from statekit.runner.transaction import Command

MACHINES = Path(__file__).resolve().parents[1] / "machines"

COUNTER = """
statechart: counter
version: 1
description: A counter whose every increment emits a message (for the runner's tests).
context:
  total: {type: integer, default: 0}
  count: {type: integer, default: 0}
events:
  Incr: {by: integer}
  Ping: {}
guards:
  positive:
    if: event.by > 0
    else: NOT_POSITIVE
initial: open
states:
  open:
    already: [Ping]
    on:
      Incr:
        guard: positive
        do:
          - assign: {total: ctx.total + event.by, count: ctx.count + 1}
          - emit: {type: Counted, payload: {total: ctx.total, by: event.by}}
"""

JOB_CANCEL_WINS = """
statechart: job
version: 1
description: A job where a cancellation wins over a completion, even one recorded first.
context:
  progress: {type: integer, default: 0}
  cancelled_by: {type: string, nullable: true, default: null}
events:
  JobStarted: {}
  JobProgressed: {percent: integer}
  JobCompleted: {}
  JobCancelled: {requested_by: string}
initial: queued
states:
  queued:
    on:
      JobStarted: running
      JobCancelled: {to: cancelled, do: [{assign: {cancelled_by: event.requested_by}}]}
  running:
    on:
      JobProgressed: {do: [{assign: {progress: event.percent}}]}
      JobCompleted: completed
      JobCancelled: {to: cancelled, do: [{assign: {cancelled_by: event.requested_by}}]}
  completed:
    description: Not final, so that a cancellation still overrides the completion.
    already: [JobCompleted]
    on:
      JobCancelled:
        to: cancelled
        do:
          - assign: {cancelled_by: event.requested_by}
          - emit: {type: CompletionRevoked, payload: {requested_by: event.requested_by}}
    reject: {JobProgressed: JOB_COMPLETED}
  cancelled:
    final: true
    already: [JobCancelled]
    reject: {"*": JOB_CANCELLED}
"""


FACTS = """
statechart: facts
version: 1
description: A task whose start and payments are facts with business keys (idempotency).
context:
  attempt: {type: integer, default: 0}
  worker: {type: string, nullable: true, default: null}
  paid: {type: integer, default: 0}
events:
  TaskStarted: {attempt: integer, worker: string}
  PAY_SUCCESS: {channel_ref: string, amount: integer}
  Heartbeat: {attempt: integer}
idempotency:
  TaskStarted: [attempt]
  PAY_SUCCESS: [channel_ref]
  Heartbeat: [attempt]
initial: queued
states:
  queued:
    on:
      TaskStarted:
        to: running
        do:
          - assign: {attempt: event.attempt, worker: event.worker}
          - emit: {type: Started, payload: {attempt: event.attempt}}
  running:
    already: [Heartbeat]
    reject: {TaskStarted: ALREADY_RUNNING}
    on:
      PAY_SUCCESS:
        do:
          - assign: {paid: ctx.paid + event.amount}
          - emit: {type: Paid, payload: {amount: event.amount}}
"""


LEASE = """
statechart: lease
version: 1
description: A lease for the timer tests (an after timer, delayed and undelayed sends).
context:
  beats: {type: integer, default: 0}
  reminders: {type: integer, default: 0}
  expired: {type: boolean, default: false}
  allow_expiry: {type: boolean, default: true}
  deadline: {type: integer, default: 0}
events:
  Start: {}
  Beat: {}
  Hold: {}
  Snooze: {}
  Finish: {}
  Odd: {}
  Remind: {n: integer}
  Echo: {n: integer}
  Noted: {n: integer}
  Deadline: {at: integer}
guards:
  expiry_allowed:
    if: ctx.allow_expiry
    else: EXPIRY_HELD
initial: idle
states:
  idle:
    after:
      1d: stale
    on:
      Start: running
      Deadline: {to: pinned, do: [{assign: {deadline: event.at}}]}
  running:
    entry:
      - send: {event: Remind, payload: {n: 1}, delay: 10s, id: reminder}
    after:
      30s: {to: expired, guard: expiry_allowed, do: [{assign: {expired: true}}]}
    on:
      Beat: {to: running, do: [{assign: {beats: ctx.beats + 1}}]}
      Hold: {do: [{assign: {allow_expiry: false}}]}
      Snooze: {do: [{send: {event: Remind, payload: {n: 2}, delay: 1m, id: reminder}}]}
      Finish: {to: done, do: [{cancel: reminder}]}
      Remind: {do: [{assign: {reminders: ctx.reminders + 1}}]}
      Echo:
        do:
          - send: {event: Noted, payload: {n: event.n}}
          - send: {event: Odd}
          - send: {event: Beat}
      Noted: {do: [{emit: {type: NotedIt, payload: {n: event.n}}}]}
  pinned:
    after:
      - at: ctx.deadline
        to: done
  stale:
    on:
      Start: running
  expired:
    on:
      Start: running
  done:
    final: true
"""

TICKER = """
statechart: ticker
version: 1
description: Ten delayed sends armed at creation, each counted once when delivered.
context:
  ticks: {type: integer, default: 0}
  seen: {type: integer, default: 0}
events:
  Tick: {n: integer}
initial: ticking
states:
  ticking:
    entry:
      - send: {event: Tick, payload: {n: 1}, delay: 100ms, id: t1}
      - send: {event: Tick, payload: {n: 2}, delay: 200ms, id: t2}
      - send: {event: Tick, payload: {n: 3}, delay: 300ms, id: t3}
      - send: {event: Tick, payload: {n: 4}, delay: 400ms, id: t4}
      - send: {event: Tick, payload: {n: 5}, delay: 500ms, id: t5}
      - send: {event: Tick, payload: {n: 6}, delay: 600ms, id: t6}
      - send: {event: Tick, payload: {n: 7}, delay: 700ms, id: t7}
      - send: {event: Tick, payload: {n: 8}, delay: 800ms, id: t8}
      - send: {event: Tick, payload: {n: 9}, delay: 900ms, id: t9}
      - send: {event: Tick, payload: {n: 10}, delay: 1s, id: t10}
    on:
      Tick: {do: [{assign: {ticks: ctx.ticks + 1, seen: ctx.seen + event.n}}]}
"""


def chart_from(text: str, file: str = "inline.yaml") -> Chart:
    """Compile inline YAML that must have no errors."""
    result = compile_source(textwrap.dedent(text).lstrip("\n"), file)
    assert result.chart is not None, [d.message for d in result.diagnostics]
    return Chart(result.chart)


def write_chart(text: str, folder: Path, name: str) -> Path:
    """Write inline YAML to `folder/name.yaml` (for CLI and worker processes)."""
    path = folder / f"{name}.yaml"
    path.write_text(textwrap.dedent(text).lstrip("\n"), encoding="utf-8")
    return path


def cancellation_wins(task_v1: str) -> str:
    """Version 2 of an evolution test's task chart: where version 1 lets a completion that
    arrives while cancelling win, version 2 rejects it with `CANCELLATION_WON`."""
    completion_wins = "  cancelling:\n    on:\n      TaskCompleted: completed\n"
    assert completion_wins in task_v1 and "version: 1" in task_v1
    return task_v1.replace("version: 1", "version: 2", 1).replace(
        completion_wins, "  cancelling:\n    reject: {TaskCompleted: CANCELLATION_WON}\n    on:\n"
    )


def fact_commands(
    instances: tuple[str, ...], *, ids: st.SearchStrategy[int]
) -> st.SearchStrategy[tuple[str, Command]]:
    """Random commands for `FACTS` instances (`f-<name>`): `TaskStarted` facts and
    `PAY_SUCCESS` facts with a business key (`channel_ref`), their event IDs (`y<n>`)
    drawn from `ids` so that redeliveries, payload conflicts and key duplicates occur."""
    return st.builds(
        lambda i, e, attempt, ref, amount: (
            f"f-{i}",
            Command(
                f"y{e}",
                "TaskStarted" if ref is None else "PAY_SUCCESS",
                {"attempt": attempt, "worker": "w"}
                if ref is None
                else {"channel_ref": f"r{ref}", "amount": amount},
            ),
        ),
        st.sampled_from(instances),
        ids,
        st.integers(1, 2),
        st.none() | st.integers(0, 3),
        st.integers(1, 2),
    )
