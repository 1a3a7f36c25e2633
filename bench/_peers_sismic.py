"""sismic 1.6.14: the flat chart and the task chart from its YAML format.

Guards are Python conditions and actions Python statements (sismic runs them with
`eval`/`exec` against the interpreter's context); alternatives of one event are
ordered with `priority`. sismic has eventless transitions and parallel states but no
multi-target transitions, so, as for transitions, an event that moves several regions
of machines/task.yaml at once is one transition per region with the same guard. sismic
selects every transition of a step before it runs any, so `active(...)` in a guard
sees the configuration as it was when the event arrived. Contracts are not checked
(`ignore_contract=True`), and time is sismic's simulated clock. sismic takes
eventless transitions in steps of their own, so sending an event is `queue` and then
`execute()` (steps until none is left).
"""

from __future__ import annotations

from typing import Any

from sismic.interpreter import Interpreter
from sismic.io import import_from_yaml

from bench._peer_common import (
    FLAT_STATES,
    FLAT_TRANSITIONS,
    TASK_ENDS,
    TASK_LEAVES,
    Adapter,
    Payload,
)


def _flat_yaml() -> str:
    lines = ["statechart:", "  name: flat", "  root state:", "    name: root", "    initial: idle"]
    lines.append("    states:")
    for state in FLAT_STATES:
        lines += [f"      - name: {state}", "        transitions:"]
        for event, source, target in FLAT_TRANSITIONS:
            if source == state:
                lines += [f"          - target: {target}", f"            event: {event}"]
        if lines[-1].endswith("transitions:"):
            lines.pop()
    return "\n".join(lines) + "\n"


TASK_YAML = """
statechart:
  name: task
  preamble: |
    attempt = 0
    max_attempts = 3
    worker_id = None
    lease_until_ms = 0
    artifact_attempt = 0
    artifact_sha256 = None
    last_error = None
    cancelled_by = None
    outbox = []
  root state:
    name: task
    parallel states:
      - name: lifecycle
        initial: queued
        states:
          - name: queued
            transitions:
              - event: TaskStarted
                target: running
                guard: attempt < max_attempts and event.attempt == attempt + 1
                action: |
                  attempt = event.attempt
                  worker_id = event.worker_id
                  lease_until_ms = event.lease_until_ms
              - event: TaskCancelled
                target: cancelled
                action: cancelled_by = event.requested_by
          - name: running
            transitions:
              - event: TaskCompleted
                target: completed
                guard: >-
                  event.attempt == attempt and active('verified')
                  and artifact_attempt == event.attempt
              - event: TaskFailed
                target: queued
                priority: 1
                guard: event.attempt == attempt and attempt < max_attempts and event.retryable
                action: |
                  last_error = event.error
                  worker_id = None
                  artifact_attempt = 0
                  artifact_sha256 = None
                  outbox.append(('TaskRequeued', {'attempt': event.attempt, 'error': event.error}))
              - event: TaskFailed
                target: failed
                guard: event.attempt == attempt
                action: last_error = event.error
              - event: LeaseExpired
                target: queued
                priority: 1
                guard: event.attempt == attempt and attempt < max_attempts
                action: |
                  last_error = 'LEASE_EXPIRED'
                  worker_id = None
                  artifact_attempt = 0
                  artifact_sha256 = None
                  outbox.append(('TaskRequeued',
                      {'attempt': event.attempt, 'error': 'LEASE_EXPIRED'}))
              - event: LeaseExpired
                target: failed
                guard: event.attempt == attempt
                action: |
                  last_error = 'LEASE_EXPIRED'
                  worker_id = None
              - event: TaskCancelled
                target: cancelling
                action: |
                  cancelled_by = event.requested_by
                  outbox.append(('TaskCancellationRequested', {'attempt': attempt,
                      'worker_id': worker_id, 'requested_by': event.requested_by}))
          - name: cancelling
            transitions:
              - target: cancelled
                guard: active('reconciled')
              - event: LeaseExpired
                guard: event.attempt == attempt and worker_id is not None
                action: worker_id = None
          - name: completed
            type: final
            on entry: |
              outbox.append(('TaskCompletedNotice',
                  {'attempt': attempt, 'sha256': artifact_sha256}))
          - name: failed
            type: final
            on entry: |
              outbox.append(('TaskFailedNotice', {'attempt': attempt, 'error': last_error}))
          - name: cancelled
            type: final
            on entry: |
              outbox.append(('TaskCancelledNotice',
                  {'attempt': attempt, 'requested_by': cancelled_by}))
      - name: cancellation
        initial: none
        states:
          - name: none
            transitions:
              - event: TaskCancelled
                target: requested
                guard: active('running')
              - event: TaskCancelled
                target: reconciled
                guard: active('queued')
              - event: TaskCompleted
                target: not_needed
                guard: >-
                  active('running') and event.attempt == attempt and active('verified')
                  and artifact_attempt == event.attempt
              - event: TaskFailed
                target: not_needed
                guard: >-
                  active('running') and event.attempt == attempt
                  and not (attempt < max_attempts and event.retryable)
              - event: LeaseExpired
                target: not_needed
                guard: active('running') and event.attempt == attempt and attempt >= max_attempts
          - name: requested
            transitions:
              - event: EffectsReconciled
                target: reconciled
                guard: event.attempt == attempt
          - name: reconciled
            type: final
          - name: not_needed
            type: final
      - name: artifact
        initial: held
        states:
          - name: held
            initial: absent
            transitions:
              - event: TaskCancelled
                target: discarded
                guard: active('queued')
              - target: discarded
                guard: active('cancelling') and active('reconciled')
              - event: TaskFailed
                target: absent
                priority: 1
                guard: >-
                  active('running') and event.attempt == attempt
                  and attempt < max_attempts and event.retryable
              - event: TaskFailed
                target: discarded
                guard: active('running') and event.attempt == attempt
              - event: LeaseExpired
                target: absent
                priority: 1
                guard: active('running') and event.attempt == attempt and attempt < max_attempts
              - event: LeaseExpired
                target: discarded
                guard: active('running') and event.attempt == attempt
            states:
              - name: absent
                transitions:
                  - event: ArtifactUploaded
                    target: uploaded
                    guard: active('running') and event.attempt == attempt
                    action: |
                      artifact_attempt = event.attempt
                      artifact_sha256 = event.sha256
              - name: uploaded
                transitions:
                  - event: ArtifactVerified
                    target: verified
                    guard: >-
                      active('running') and event.attempt == attempt
                      and event.sha256 == artifact_sha256
              - name: verified
          - name: discarded
            type: final
"""
"""machines/task.yaml for sismic. One more simplification: the artifact region's ways
out (to `absent` on a retry, to `discarded` at the end) are written once, on a
compound state `held` around absent/uploaded/verified; `verified` is therefore not a
final state here (sismic does not allow transitions out of a final state's parent)."""


def _adapter(name: str, yaml_text: str, leaves: dict[str, str] | None) -> Adapter:
    statechart = import_from_yaml(yaml_text)

    def new() -> Any:
        interpreter = Interpreter(statechart, ignore_contract=True)
        interpreter.execute()  # enter the initial configuration
        return interpreter

    def send(interpreter: Any, event: str, payload: Payload) -> Any:
        interpreter.queue(event, **(payload or {}))
        return interpreter.execute()  # the event's step, then eventless steps until none

    if leaves is None:
        names = frozenset(FLAT_STATES)
        return Adapter(
            name,
            new,
            send,
            lambda i: frozenset(s for s in i.configuration if s in names),
            lambda i: False,
        )
    return Adapter(
        name,
        new,
        send,
        lambda i: frozenset(leaves[s] for s in i.configuration if s in leaves),
        lambda i: any(s in TASK_ENDS for s in i.configuration),
        lambda i: i.context["outbox"],
    )


def adapters() -> tuple[list[Adapter], list[Adapter]]:
    """(flat chart adapters, task chart adapters)."""
    return [_adapter("sismic", _flat_yaml(), None)], [_adapter("sismic", TASK_YAML, TASK_LEAVES)]
