"""transitions 0.9.3: the flat chart (`Machine`) and the task chart (`HierarchicalMachine`).

`HierarchicalMachine` has parallel states but neither multi-target nor eventless
transitions, so the task chart is written region by region: an event that moves
several regions of machines/task.yaml at once (`to: [lifecycle.cancelled,
cancellation.reconciled, artifact.discarded]`) is one transition per region, each
with the same guard, and the eventless `cancelling -> cancelled` (when the
cancellation region is reconciled) becomes part of EffectsReconciled. The regions
handle an event one after the other, so a guard that tests another region's state
reads the configuration as it was when the event arrived (`TaskModel.before`, set by
the adapter before each trigger), as SCXML's selection would. Transition effects are
`before` callbacks: transitions runs `after` ones after the target's `on_enter`, and
the final states' notices must see the context the transition set.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from transitions import Machine
from transitions.extensions import HierarchicalMachine
from transitions.extensions.nesting import NestedState

from bench._peer_common import (
    FLAT_STATES,
    FLAT_TRANSITIONS,
    TASK_ENDS,
    Adapter,
    Payload,
    TaskModel,
)

NestedState.separator = "."  # state paths as ours: task.lifecycle.running


class _Flat:
    state: str


def flat() -> Adapter:
    """The flat chart on `Machine` (the model's `trigger(event)` sends an event)."""

    def new() -> Any:
        model = _Flat()
        Machine(
            model=model,
            states=list(FLAT_STATES),
            transitions=[{"trigger": e, "source": s, "dest": d} for e, s, d in FLAT_TRANSITIONS],
            initial="idle",
            auto_transitions=False,
        )
        return model

    return Adapter(
        "transitions Machine",
        new,
        lambda model, event, payload: model.trigger(event),
        lambda model: frozenset({model.state}),
        lambda model: False,
    )


Guard = Callable[[Any], bool]
L, C, A = "task.lifecycle.", "task.cancellation.", "task.artifact."


def _was(state: str) -> Guard:
    return lambda ev: state in ev.model.before


def _arg(name: str) -> Callable[[Any], Any]:
    return lambda ev: ev.kwargs[name]


def _both(*guards: Guard) -> Guard:
    return lambda ev: all(g(ev) for g in guards)


def _task_transitions() -> list[dict[str, Any]]:
    current: Guard = lambda ev: ev.model.current_attempt(ev.kwargs["attempt"])  # noqa: E731
    budget: Guard = lambda ev: ev.model.retry_budget_left()  # noqa: E731
    retryable: Guard = _arg("retryable")
    retry_failed = _both(current, budget, retryable)
    retry_expired = _both(current, budget)
    completes = _both(
        current,
        _was(A + "verified"),
        lambda ev: ev.model.artifact_attempt == ev.kwargs["attempt"],
    )
    reconciles = _both(_was(C + "requested"), current)

    def t(trigger: str, source: str | list[str], dest: str | None, **kw: Any) -> dict[str, Any]:
        return {"trigger": trigger, "source": source, "dest": dest, **kw}

    held = [A + "absent", A + "uploaded", A + "verified"]
    return [
        t(
            "TaskStarted",
            L + "queued",
            L + "running",
            conditions=[budget, lambda ev: ev.model.next_attempt(ev.kwargs["attempt"])],
            before=lambda ev: ev.model.start(**ev.kwargs),
        ),
        # TaskCancelled while queued: [lifecycle.cancelled, cancellation.reconciled,
        # artifact.discarded]; while running: lifecycle.cancelling and, by the
        # cancellation region's own transition, cancellation.requested.
        t(
            "TaskCancelled",
            L + "queued",
            L + "cancelled",
            before=lambda ev: ev.model.cancel_queued(ev.kwargs["requested_by"]),
        ),
        t("TaskCancelled", C + "none", C + "reconciled", conditions=_was(L + "queued")),
        t("TaskCancelled", A + "absent", A + "discarded", conditions=_was(L + "queued")),
        t(
            "TaskCancelled",
            L + "running",
            L + "cancelling",
            before=lambda ev: ev.model.cancel_running(ev.kwargs["requested_by"]),
        ),
        t("TaskCancelled", C + "none", C + "requested", conditions=_was(L + "running")),
        # TaskCompleted: [lifecycle.completed, cancellation.not_needed, artifact.verified]
        t("TaskCompleted", L + "running", L + "completed", conditions=completes),
        t(
            "TaskCompleted",
            C + "none",
            C + "not_needed",
            conditions=_both(_was(L + "running"), completes),
        ),
        # TaskFailed: back to [queued, none, absent] or on to [failed, not_needed, discarded]
        t(
            "TaskFailed",
            L + "running",
            L + "queued",
            conditions=retry_failed,
            before=lambda ev: ev.model.requeue(ev.kwargs["attempt"], ev.kwargs["error"]),
        ),
        t(
            "TaskFailed",
            held[1:],
            A + "absent",
            conditions=_both(_was(L + "running"), retry_failed),
        ),
        t(
            "TaskFailed",
            L + "running",
            L + "failed",
            conditions=current,
            before=lambda ev: ev.model.fail(ev.kwargs["error"]),
        ),
        t(
            "TaskFailed",
            C + "none",
            C + "not_needed",
            conditions=_both(_was(L + "running"), current),
            unless=retry_failed,
        ),
        t(
            "TaskFailed",
            held,
            A + "discarded",
            conditions=_both(_was(L + "running"), current),
            unless=retry_failed,
        ),
        # LeaseExpired: the same two ways out of running; a targetless one in cancelling
        t(
            "LeaseExpired",
            L + "running",
            L + "queued",
            conditions=retry_expired,
            before=lambda ev: ev.model.requeue(ev.kwargs["attempt"], "LEASE_EXPIRED"),
        ),
        t(
            "LeaseExpired",
            held[1:],
            A + "absent",
            conditions=_both(_was(L + "running"), retry_expired),
        ),
        t(
            "LeaseExpired",
            L + "running",
            L + "failed",
            conditions=current,
            before=lambda ev: ev.model.fail("LEASE_EXPIRED", release=True),
        ),
        t(
            "LeaseExpired",
            C + "none",
            C + "not_needed",
            conditions=_both(_was(L + "running"), current),
            unless=retry_expired,
        ),
        t(
            "LeaseExpired",
            held,
            A + "discarded",
            conditions=_both(_was(L + "running"), current),
            unless=retry_expired,
        ),
        t(
            "LeaseExpired",
            L + "cancelling",
            None,
            conditions=_both(current, lambda ev: ev.model.worker_id is not None),
            before=lambda ev: ev.model.release(),
        ),
        # EffectsReconciled, and the eventless cancelling -> [cancelled, reconciled, discarded]
        t("EffectsReconciled", C + "requested", C + "reconciled", conditions=reconciles),
        t("EffectsReconciled", L + "cancelling", L + "cancelled", conditions=reconciles),
        t("EffectsReconciled", held, A + "discarded", conditions=reconciles),
        t(
            "ArtifactUploaded",
            A + "absent",
            A + "uploaded",
            conditions=_both(_was(L + "running"), current),
            before=lambda ev: ev.model.upload(ev.kwargs["attempt"], ev.kwargs["sha256"]),
        ),
        t(
            "ArtifactVerified",
            A + "uploaded",
            A + "verified",
            conditions=_both(
                _was(L + "running"),
                current,
                lambda ev: ev.model.checksum_matches(ev.kwargs["sha256"]),
            ),
        ),
    ]


def _task_states() -> list[dict[str, Any]]:
    def notice(kind: str) -> dict[str, Any]:
        return {"name": kind, "on_enter": lambda ev: ev.model.notice(kind)}

    lifecycle = ["queued", "running", "cancelling", *(notice(k) for k in sorted(TASK_ENDS))]
    regions = [
        {"name": "lifecycle", "initial": "queued", "children": lifecycle},
        {
            "name": "cancellation",
            "initial": "none",
            "children": ["none", "requested", "reconciled", "not_needed"],
        },
        {
            "name": "artifact",
            "initial": "absent",
            "children": ["absent", "uploaded", "verified", "discarded"],
        },
    ]
    return [{"name": "task", "parallel": regions}]


def task() -> Adapter:
    """The task chart on `HierarchicalMachine` (one machine per model, as for `Machine`)."""
    states, transitions = _task_states(), _task_transitions()

    def new() -> Any:
        model = TaskModel()
        HierarchicalMachine(
            model=model,
            states=states,
            transitions=transitions,
            initial="task",
            auto_transitions=False,
            send_event=True,
            ignore_invalid_triggers=True,
        )
        return model

    def send(model: TaskModel, event: str, payload: Payload) -> Any:
        model.before = model.state
        return model.trigger(event, **(payload or {}))  # type: ignore[attr-defined]

    return Adapter(
        "transitions HierarchicalMachine",
        new,
        send,
        lambda model: frozenset(s.removeprefix("task.") for s in model.state),
        lambda model: any(s.removeprefix(L) in TASK_ENDS for s in model.state),
        lambda model: model.outbox,
    )


def adapters() -> tuple[list[Adapter], list[Adapter]]:
    """(flat chart adapters, task chart adapters)."""
    return [flat()], [task()]
