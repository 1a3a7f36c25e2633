"""python-statemachine 3.2.2: the flat chart (class syntax, as `StateMachine` and as
`StateChart`) and the task chart (`StateChart` from its dict loader).

The task chart is machines/task.yaml one to one: a parallel top-level state with the
three regions, multi-target transitions (space-separated targets), the eventless
transition of `cancelling`, guards and effects as callbacks on the model (guards and
effects named by string, as the library resolves them on the model; the guards that
test another region's state read `machine.configuration_values`).
"""

from __future__ import annotations

from typing import Any

from statemachine import State, StateChart, StateMachine
from statemachine.factory import StateMachineMetaclass
from statemachine.io import create_machine_class_from_definition

from bench._peer_common import (
    FLAT_STATES,
    FLAT_TRANSITIONS,
    TASK_LEAVES,
    Adapter,
    Payload,
    TaskModel,
)


def flat_class(base: type[StateChart[Any]]) -> type[StateChart[Any]]:
    """The flat chart in class syntax, on `base` (`StateMachine` or `StateChart`)."""
    states = {name: State(initial=name == "idle") for name in FLAT_STATES}
    attrs: dict[str, Any] = dict(states)
    for event, source, target in FLAT_TRANSITIONS:
        transition = states[source].to(states[target])
        attrs[event] = attrs[event] | transition if event in attrs else transition
    return StateMachineMetaclass(f"Flat{base.__name__}", (base,), attrs)  # type: ignore[return-value]


def _send(machine: StateChart[Any], event: str, payload: Payload) -> Any:
    return machine.send(event, **payload) if payload else machine.send(event)


def flat(base: type[StateChart[Any]]) -> Adapter:
    """The flat chart as an adapter."""
    cls = flat_class(base)
    return Adapter(
        f"python-statemachine {base.__name__}",
        cls,
        _send,
        lambda m: frozenset(m.configuration_values),
        lambda m: False,
    )


def _active(state: str) -> Any:
    return lambda machine: state in machine.configuration_values


def _notice(kind: str) -> Any:
    return lambda model: model.notice(kind)


def task_class() -> type[StateChart[Any]]:
    """machines/task.yaml as a python-statemachine `StateChart` class."""
    running, verified = _active("running"), _active("verified")
    same_artifact = lambda model, attempt: model.artifact_attempt == attempt  # noqa: E731
    lease_expired = "LEASE_EXPIRED"
    lifecycle = {
        "queued": {
            "initial": True,
            "on": {
                "TaskStarted": [
                    {
                        "target": "running",
                        "cond": ["retry_budget_left", "next_attempt"],
                        "on": "start",
                    }
                ],
                "TaskCancelled": [
                    {"target": "cancelled reconciled discarded", "on": "cancel_queued"}
                ],
            },
        },
        "running": {
            "on": {
                "TaskCompleted": [
                    {
                        "target": "completed not_needed verified",
                        "cond": ["current_attempt", verified, same_artifact],
                    }
                ],
                "TaskFailed": [
                    {
                        "target": "queued none absent",
                        "cond": [
                            "current_attempt",
                            "retry_budget_left",
                            lambda retryable: retryable,
                        ],
                        "on": "requeue",
                    },
                    {
                        "target": "failed not_needed discarded",
                        "cond": "current_attempt",
                        "on": lambda model, error: model.fail(error),
                    },
                ],
                "LeaseExpired": [
                    {
                        "target": "queued none absent",
                        "cond": ["current_attempt", "retry_budget_left"],
                        "on": lambda model, attempt: model.requeue(attempt, lease_expired),
                    },
                    {
                        "target": "failed not_needed discarded",
                        "cond": "current_attempt",
                        "on": lambda model: model.fail(lease_expired, release=True),
                    },
                ],
                "TaskCancelled": [{"target": "cancelling", "on": "cancel_running"}],
            },
        },
        "cancelling": {
            "transitions": [
                {"target": "cancelled reconciled discarded", "cond": _active("reconciled")}
            ],
            "on": {
                "LeaseExpired": [
                    {
                        "target": None,
                        "cond": ["current_attempt", lambda model: model.worker_id is not None],
                        "on": "release",
                    }
                ]
            },
        },
        "completed": {"final": True, "enter": _notice("completed")},
        "failed": {"final": True, "enter": _notice("failed")},
        "cancelled": {"final": True, "enter": _notice("cancelled")},
    }
    cancellation = {
        "none": {
            "initial": True,
            "on": {"TaskCancelled": [{"target": "requested", "cond": running}]},
        },
        "requested": {
            "on": {"EffectsReconciled": [{"target": "reconciled", "cond": "current_attempt"}]}
        },
        "reconciled": {"final": True},
        "not_needed": {"final": True},
    }
    artifact = {
        "absent": {
            "initial": True,
            "on": {
                "ArtifactUploaded": [
                    {"target": "uploaded", "cond": [running, "current_attempt"], "on": "upload"}
                ]
            },
        },
        "uploaded": {
            "on": {
                "ArtifactVerified": [
                    {
                        "target": "verified",
                        "cond": [running, "current_attempt", "checksum_matches"],
                    }
                ]
            }
        },
        "verified": {"final": True},
        "discarded": {"final": True},
    }
    definition: Any = {
        "task": {
            "parallel": True,
            "initial": True,
            "states": {
                "lifecycle": {"states": lifecycle},
                "cancellation": {"states": cancellation},
                "artifact": {"states": artifact},
            },
        }
    }
    return create_machine_class_from_definition(
        "Task", states=definition, validate_disconnected_states=False
    )


def task() -> Adapter:
    """The task chart as an adapter (a new instance has a new `TaskModel`)."""
    cls = task_class()
    return Adapter(
        "python-statemachine StateChart",
        lambda: cls(model=TaskModel()),
        _send,
        lambda m: frozenset(TASK_LEAVES[s] for s in m.configuration_values if s in TASK_LEAVES),
        lambda m: bool(m.is_terminated),
        lambda m: m.model.outbox,
    )


def adapters() -> tuple[list[Adapter], list[Adapter]]:
    """(flat chart adapters, task chart adapters)."""
    return [flat(StateMachine), flat(StateChart)], [task()]
