"""The event streams the engine benchmarks share (bench/engine_core.py, bench/peers.py).

`FLAT_CHART` is a flat 6-state chart with no guards and no context; `flat_stream`
cycles it; `task_stream` drives the task chart through four kinds of history.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

Stream = Sequence[tuple[str, Mapping[str, Any] | None, str]]

FLAT_CHART = """
statechart: flat
description: A media loader with six flat states and seven events, no guards, no context.
events: {LOAD: {}, LOADED: {}, PLAY: {}, PAUSE: {}, RESUME: {}, STOP: {}, RESET: {}}
initial: idle
states:
  idle: {on: {LOAD: loading}}
  loading: {on: {LOADED: ready, STOP: stopped}}
  ready: {on: {PLAY: playing, STOP: stopped}}
  playing: {on: {PAUSE: paused, STOP: stopped}}
  paused: {on: {RESUME: playing, STOP: stopped}}
  stopped: {on: {RESET: idle}}
"""
FLAT_CYCLE = ("LOAD", "LOADED", "PLAY", "PAUSE", "RESUME", "STOP", "RESET")


def flat_stream(cycles: int = 2000) -> Stream:
    """The flat chart's cycle: idle, loading, ready, playing, paused, playing, stopped, idle."""
    return [(event, None, f"e{i}") for i in range(cycles) for event in FLAT_CYCLE]


def task_stream(tasks: int = 500) -> Stream:
    """Task histories, each from `queued` to a final state (the runner restarts from there):
    a clean completion; a retryable failure, a retry and a completion; a cancel while
    running and its reconciliation; a cancel while queued."""
    out: list[tuple[str, Mapping[str, Any] | None, str]] = []

    def start(attempt: int) -> tuple[str, Mapping[str, Any]]:
        return ("TaskStarted", {"attempt": attempt, "worker_id": "w-7", "lease_until_ms": 10**12})

    def complete(attempt: int) -> list[tuple[str, Mapping[str, Any]]]:
        return [
            start(attempt),
            ("ArtifactUploaded", {"attempt": attempt, "sha256": "9f86d0"}),
            ("ArtifactVerified", {"attempt": attempt, "sha256": "9f86d0"}),
            ("TaskCompleted", {"attempt": attempt}),
        ]

    failed: Mapping[str, Any] = {"attempt": 1, "error": "timeout", "retryable": True}
    reconciled: Mapping[str, Any] = {"attempt": 1}
    histories: list[list[tuple[str, Mapping[str, Any]]]] = [
        complete(1),
        [start(1), ("TaskFailed", failed), *complete(2)],
        [start(1), ("TaskCancelled", {"requested_by": "ann"}), ("EffectsReconciled", reconciled)],
        [("TaskCancelled", {"requested_by": "ann"})],
    ]
    n = 0
    for i in range(tasks):
        for event, payload in histories[i % len(histories)]:
            out.append((event, payload, f"e{n}"))
            n += 1
    return out
