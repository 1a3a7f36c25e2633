"""The task chart written by hand: the limit `Chart.send` is measured against.

`TASK_CHART` is a copy of the task chart as these benchmarks were written
against (bench/task_chart.yaml), so that the figures stay comparable when
machines/task.yaml changes. `task_reducer` does what the chart does, in plain
Python: the exact payload checks (a mapping with exactly the declared fields,
integers that are not booleans and fit in 64 bits), the classification of an
event that selects nothing (`already` entries, then the first failing guard in
selection order with its reason, then the `reject` entry, then the final
chart's), the transitions of the three regions with their assigns, the
messages with their ids (`<event id>/<position>`), the eventless step from
`cancelling`, and the 6 invariants after every applied event. It keeps no
evidence and builds no `State`: the state is an immutable tuple of the three
leaves and a read-only context.
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable, Mapping
from pathlib import Path
from types import MappingProxyType
from typing import Any, NamedTuple

from bench._streams import Stream, task_stream
from statekit.engine.chart import Chart

TASK_CHART = Path(__file__).resolve().parent / "task_chart.yaml"
_INT_MIN, _INT_MAX = -(2**63), 2**63 - 1


def _int(v: Any) -> bool:
    return v.__class__ is int and _INT_MIN <= v <= _INT_MAX


def _str(v: Any) -> bool:
    return v.__class__ is str


def _bool(v: Any) -> bool:
    return v.__class__ is bool


PAYLOADS: dict[str, tuple[tuple[str, Callable[[Any], bool]], ...]] = {
    "TaskStarted": (("attempt", _int), ("worker_id", _str), ("lease_until_ms", _int)),
    "TaskCompleted": (("attempt", _int),),
    "TaskFailed": (("attempt", _int), ("error", _str), ("retryable", _bool)),
    "TaskCancelled": (("requested_by", _str),),
    "EffectsReconciled": (("attempt", _int),),
    "ArtifactUploaded": (("attempt", _int), ("sha256", _str)),
    "ArtifactVerified": (("attempt", _int), ("sha256", _str)),
    "LeaseExpired": (("attempt", _int),),
}
"""Each event's declared fields (all required) and their type checks."""

ALREADY = {
    "cancelling": {"TaskCancelled"},
    "completed": {"TaskCompleted"},
    "failed": {"TaskFailed"},
    "cancelled": {"TaskCancelled"},
    "reconciled": {"EffectsReconciled"},
    "verified": {"ArtifactVerified"},
}
REJECT = {
    "queued": {
        "TaskCompleted": "TASK_NOT_RUNNING",
        "TaskFailed": "TASK_NOT_RUNNING",
        "LeaseExpired": "TASK_NOT_RUNNING",
        "ArtifactUploaded": "TASK_NOT_RUNNING",
    },
    "running": {
        "TaskStarted": "TASK_ALREADY_RUNNING",
        "ArtifactUploaded": "ARTIFACT_ALREADY_UPLOADED",
    },
    "cancelling": {
        "TaskStarted": "CANCELLATION_IN_PROGRESS",
        "TaskCompleted": "CANCELLATION_IN_PROGRESS",
        "TaskFailed": "CANCELLATION_IN_PROGRESS",
        "ArtifactUploaded": "TASK_NOT_RUNNING",
    },
    "none": {"EffectsReconciled": "NO_CANCELLATION_REQUESTED"},
    "absent": {"ArtifactVerified": "ARTIFACT_NOT_UPLOADED"},
}
FINAL_REASON = {
    "completed": "TASK_COMPLETED",
    "failed": "TASK_FAILED",
    "cancelled": "TASK_CANCELLED",
}
INITIAL_CONTEXT: Mapping[str, Any] = MappingProxyType(
    {
        "attempt": 0,
        "max_attempts": 3,
        "worker_id": None,
        "lease_until_ms": 0,
        "artifact_attempt": 0,
        "artifact_sha256": None,
        "last_error": None,
        "cancelled_by": None,
    }
)


class TaskState(NamedTuple):
    """The reducer's state: one leaf per region and the context (read-only)."""

    lifecycle: str
    cancellation: str
    artifact: str
    context: Mapping[str, Any]


class TaskOutcome(NamedTuple):
    """What the reducer returns: status, reason, new state, messages (id, type, payload)."""

    status: str
    reason: str | None
    state: TaskState
    emitted: tuple[tuple[str, str, Mapping[str, Any]], ...]


INITIAL = TaskState("queued", "none", "absent", INITIAL_CONTEXT)


class _Fail(Exception):
    """A guard failed: its reason (the first failure in selection order is kept)."""


def _rejected(reason: str, state: TaskState) -> TaskOutcome:
    return TaskOutcome("REJECTED", reason, state, ())


def _unselected(state: TaskState, event: str, failed: str | None) -> TaskOutcome:
    leaves = (state.lifecycle, state.cancellation, state.artifact)
    for leaf in leaves:
        if event in ALREADY.get(leaf, ()):
            return TaskOutcome("ALREADY_APPLIED", None, state, ())
    if failed is not None:
        return _rejected(failed, state)
    for leaf in leaves:
        reason = REJECT.get(leaf, {}).get(event)
        if reason is not None:
            return _rejected(reason, state)
    return _rejected("UNDEFINED_TRANSITION", state)


def task_reducer(state: TaskState, event: str, payload: Any, event_id: str) -> TaskOutcome:
    """One event through the task chart, by hand (see the module docstring)."""
    fields = PAYLOADS.get(event)
    if fields is None:
        return _rejected("UNKNOWN_EVENT", state)
    if not isinstance(payload, Mapping) or len(payload) != len(fields):
        return _rejected("INVALID_PAYLOAD", state)
    for name, check in fields:
        if name not in payload or not check(payload[name]):
            return _rejected("INVALID_PAYLOAD", state)
    life, canc, art, ctx = state
    if life in FINAL_REASON:  # the chart is final (every region is)
        if (
            event in ALREADY[life]
            or event in ALREADY.get(canc, ())
            or event in ALREADY.get(art, ())
        ):
            return TaskOutcome("ALREADY_APPLIED", None, state, ())
        return _rejected(FINAL_REASON[life], state)
    p = payload
    failed: str | None = None
    new: dict[str, Any] | None = None
    out: list[tuple[str, Mapping[str, Any]]] = []
    fired = False
    whole = False  # a transition that targets every region fired
    attempt = ctx["attempt"]
    # the lifecycle region (first in document order)
    if life == "queued":
        if event == "TaskStarted":
            if not attempt < ctx["max_attempts"]:
                failed = "RETRY_BUDGET_EXHAUSTED"
            elif p["attempt"] != attempt + 1:
                failed = "ATTEMPT_OUT_OF_ORDER"
            else:
                new = dict(ctx)
                new["attempt"] = p["attempt"]
                new["worker_id"] = p["worker_id"]
                new["lease_until_ms"] = p["lease_until_ms"]
                life, fired = "running", True
        elif event == "TaskCancelled":
            new = dict(ctx)
            new["cancelled_by"] = p["requested_by"]
            life, canc, art, fired = "cancelled", "reconciled", "discarded", True
            whole = True
            out.append(
                ("TaskCancelledNotice", {"attempt": attempt, "requested_by": new["cancelled_by"]})
            )
    elif life == "running":
        if event == "TaskCompleted":
            if p["attempt"] != attempt:
                failed = "STALE_ATTEMPT"
            elif not (art == "verified" and ctx["artifact_attempt"] == p["attempt"]):
                failed = "ARTIFACT_NOT_VERIFIED"
            else:
                life, canc, art, fired = "completed", "not_needed", "verified", True
                whole = True
                out.append(
                    ("TaskCompletedNotice", {"attempt": attempt, "sha256": ctx["artifact_sha256"]})
                )
        elif event == "TaskFailed" or event == "LeaseExpired":
            error = p["error"] if event == "TaskFailed" else "LEASE_EXPIRED"
            if p["attempt"] != attempt:
                failed = "STALE_ATTEMPT"  # both alternatives start with current_attempt
            elif attempt < ctx["max_attempts"] and (event == "LeaseExpired" or p["retryable"]):
                new = dict(ctx)
                new["last_error"] = error
                new["worker_id"] = None
                new["artifact_attempt"] = 0
                new["artifact_sha256"] = None
                life, canc, art, fired = "queued", "none", "absent", True
                whole = True
                out.append(("TaskRequeued", {"attempt": p["attempt"], "error": error}))
            else:
                new = dict(ctx)
                new["last_error"] = error
                if event == "LeaseExpired":
                    new["worker_id"] = None
                life, canc, art, fired = "failed", "not_needed", "discarded", True
                whole = True
                out.append(("TaskFailedNotice", {"attempt": attempt, "error": error}))
        elif event == "TaskCancelled":
            new = dict(ctx)
            new["cancelled_by"] = p["requested_by"]
            life, fired = "cancelling", True
            body = {
                "attempt": attempt,
                "worker_id": ctx["worker_id"],
                "requested_by": p["requested_by"],
            }
            out.append(("TaskCancellationRequested", body))
    elif life == "cancelling" and event == "LeaseExpired":
        if p["attempt"] != attempt:
            failed = "STALE_ATTEMPT"
        elif ctx["worker_id"] is None:
            failed = "LEASE_ALREADY_RELEASED"
        else:
            new = dict(ctx)
            new["worker_id"] = None
            fired = True
    # the other regions select on the state before the event; a lifecycle transition
    # that ends or restarts every region wins the conflict with theirs (document order)
    if not whole:
        if state.cancellation == "none" and event == "TaskCancelled":
            if state.lifecycle != "running":
                failed = failed or "TASK_NOT_RUNNING"
            else:
                canc, fired = "requested", True
        elif state.cancellation == "requested" and event == "EffectsReconciled":
            if p["attempt"] != attempt:
                failed = failed or "STALE_ATTEMPT"
            else:
                canc, fired = "reconciled", True
        if state.artifact == "absent" and event == "ArtifactUploaded":
            if state.lifecycle != "running":
                failed = failed or "TASK_NOT_RUNNING"
            elif p["attempt"] != attempt:
                failed = failed or "STALE_ATTEMPT"
            else:
                new = dict(ctx)
                new["artifact_attempt"] = p["attempt"]
                new["artifact_sha256"] = p["sha256"]
                art, fired = "uploaded", True
        elif state.artifact == "uploaded" and event == "ArtifactVerified":
            if state.lifecycle != "running":
                failed = failed or "TASK_NOT_RUNNING"
            elif p["attempt"] != attempt:
                failed = failed or "STALE_ATTEMPT"
            elif p["sha256"] != ctx["artifact_sha256"]:
                failed = failed or "CHECKSUM_MISMATCH"
            else:
                art, fired = "verified", True
    if not fired:
        return _unselected(state, event, failed)
    after = new if new is not None else ctx
    if life == "cancelling" and canc == "reconciled":  # the eventless step
        life, canc, art = "cancelled", "reconciled", "discarded"
        out.append(
            (
                "TaskCancelledNotice",
                {"attempt": after["attempt"], "requested_by": after["cancelled_by"]},
            )
        )
    # the invariants, in declaration order
    broken = (
        (life == "completed" and art != "verified")
        or (life == "cancelled" and canc != "reconciled")
        or (canc == "requested" and life != "cancelling")
        or (life == "queued" and (canc != "none" or art != "absent"))
        or not after["attempt"] <= after["max_attempts"]
        or not (life != "running" or after["worker_id"] is not None)
    )
    if broken:
        return _rejected("INVARIANT_VIOLATION", state)
    emitted = tuple(
        (f"{event_id}/{i}", kind, MappingProxyType(body)) for i, (kind, body) in enumerate(out)
    )
    context = ctx if new is None else MappingProxyType(new)
    return TaskOutcome("APPLIED", None, TaskState(life, canc, art, context), emitted)


def varied_stream(tasks: int = 500) -> Stream:
    """bench.engine_core.task_stream with payloads that differ per task: worker ids,
    leases, checksums, errors and who cancels (every event still applies)."""
    out = []
    sha = ""
    for i, (event, payload, event_id) in enumerate(task_stream(tasks)):
        p = dict(payload or {})
        if "worker_id" in p:
            p["worker_id"] = f"w-{i % 13}"
            p["lease_until_ms"] = 10**12 + i * 1000
        if event == "ArtifactUploaded":
            sha = f"{i * 2654435761 % 2**32:08x}"
        if "sha256" in p:
            p["sha256"] = sha
        if "error" in p:
            p["error"] = ("timeout", "oom", "killed")[i % 3]
        if "requested_by" in p:
            p["requested_by"] = ("ann", "bob", "ops")[i % 3]
        out.append((event, p, event_id))
    return out


def agree(chart: Chart, stream: Stream | None = None, *, seed: int = 0, count: int = 0) -> None:
    """The reducer and `chart.send` agree on every event of `stream` (or of `count`
    random events from `seed`, see `random_event`): status, reason, active leaves,
    context and messages (ids, types, payloads). A final task restarts after a
    few more events."""
    rng = random.Random(seed)
    s0 = state = chart.start()
    mine = INITIAL
    events = iter(stream) if stream is not None else None
    ended = 0
    for i in range(len(stream) if stream is not None else count):
        if events is not None:
            event, payload, event_id = next(events)
        else:
            event, payload = random_event(rng, mine)
            event_id = f"r{i}"
        result = chart.send(state, event, payload, event_id=event_id)
        out = task_reducer(mine, event, payload, event_id)
        where = f"task reducer, event {i} ({event} {payload!r}) from {mine[:3]}"
        assert (out.status, out.reason) == (result.status.value, result.reason), where
        leaves = frozenset(result.state.leaves)
        assert leaves == {
            f"lifecycle.{out.state.lifecycle}",
            f"cancellation.{out.state.cancellation}",
            f"artifact.{out.state.artifact}",
        }, where
        assert dict(out.state.context) == dict(result.state.context), where
        theirs = [(m.message_id, m.type, dict(m.payload)) for m in result.emitted]
        assert [(i, k, dict(b)) for i, k, b in out.emitted] == theirs, where
        state, mine = result.state, out.state
        if state.is_final:
            ended += 1
            if events is not None or ended > rng.randrange(4):
                state, mine, ended = s0, INITIAL, 0


def random_event(rng: random.Random, state: TaskState) -> tuple[str, Any]:
    """An event with a payload that is often valid and near the current attempt, and
    sometimes invalid (missing, extra or mistyped fields, booleans for integers)."""
    event = rng.choices([*PAYLOADS, "TaskPaused"], (3, 3, 2, 0.5, 1, 3, 3, 2, 0.2))[0]
    ctx = state.context
    attempt = ctx["attempt"] + rng.choice((0, 0, 0, 1, 1, -1))
    sha = ctx["artifact_sha256"] if rng.random() < 0.9 and ctx["artifact_sha256"] else "abc"
    values = {
        "attempt": attempt,
        "worker_id": rng.choice(("w-1", "w-2")),
        "lease_until_ms": 10**12,
        "error": rng.choice(("timeout", "oom")),
        "retryable": rng.random() < 0.6,
        "requested_by": rng.choice(("ann", "bob")),
        "sha256": sha if event == "ArtifactVerified" else rng.choice(("abc", "def")),
    }
    fields = PAYLOADS.get(event, (("attempt", _int),))
    payload: Any = {name: values[name] for name, _check in fields}
    broken = rng.random()
    if broken < 0.04:
        payload.pop(next(iter(payload)))
    elif broken < 0.08:
        payload["extra"] = 1
    elif broken < 0.12:
        payload[next(iter(payload))] = rng.choice((True, 1.5, None, "x", 2**64))
    elif broken < 0.14:
        payload = rng.choice((None, [], "payload"))
    return event, payload


def reducer_rate(stream: Stream) -> float:
    """Events/s of `task_reducer` over `stream`; a final task restarts from `INITIAL`."""
    state = INITIAL
    reduce = task_reducer
    ends = FINAL_REASON
    began = time.process_time()
    for event, payload, event_id in stream:
        state = reduce(state, event, payload, event_id).state
        if state.lifecycle in ends:
            state = INITIAL
    return len(stream) / (time.process_time() - began)
