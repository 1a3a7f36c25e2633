"""An instance's history as the JSON lines `statekit run --input` reads, so that a test can
reproduce it: `statekit run CHART --db NEW --input FILE` ends in the same state.

One line per timeline entry a caller sent (`{"instance", "event_id", "type",
"payload"}`, in the order they happened): the accepted events, and the audited
rejections and conflicts, which replay as the same answers (a rejection
changes nothing, but the new store then audits it too). The first line
carries the instance's creation context when it was created with one.

Left out, because `statekit run` cannot send them and does not need to: timer
deliveries (the runner fires them itself, from its clock: replay with `--now`
or `statekit worker` at the times the page shows), the events the chart sent
itself (`statekit.send/...`: applying the event that sent them sends them
again), migration entries (`statekit migrate`), and a version conflict (it
depended on a concurrent writer). An instance retention thinned has lost the
payloads of its early events: its lines start after them, and do not
reproduce it. `skipped` counts what was left out, by kind.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from statekit.inspect.timeline import (
    ALREADY_APPLIED,
    APPLIED,
    CONFLICT,
    REJECTED,
    TimelineEntry,
)

SENDABLE = frozenset({APPLIED, ALREADY_APPLIED, REJECTED, CONFLICT})
"""The kinds of entries a caller sent (the others the runner made itself)."""
NOT_SENDABLE_CONFLICTS = frozenset(
    {"VERSION_CONFLICT", "SEQUENCE_GAP", "DUPLICATE_OR_OLD_SEQUENCE"}
)
"""Conflicts that depended on what a concurrent writer did, or on a sequence number the
store does not keep: not reproducible from the history."""


@dataclass(frozen=True, slots=True)
class RunLines:
    """The text (one JSON object per line, each ending in a newline) and how many entries of
    each kind were left out."""

    text: str
    lines: int
    skipped: Mapping[str, int]


def run_lines(instance_id: str, initial_context: Any, entries: Iterable[TimelineEntry]) -> RunLines:
    """The lines of `entries` (see the module docstring); `initial_context` is the
    creation context as stored (parsed; {} or None: the chart's defaults)."""
    out: list[str] = []
    skipped: dict[str, int] = {}
    for entry in entries:
        payload = entry.payload if entry.kind in SENDABLE else None
        if (
            entry.kind not in SENDABLE
            or entry.reason in NOT_SENDABLE_CONFLICTS
            or not isinstance(payload, dict)
        ):
            if entry.kind not in SENDABLE:
                what = entry.kind
            elif entry.reason in NOT_SENDABLE_CONFLICTS:
                what = f"{entry.kind} ({entry.reason})"
            else:
                what = "unreadable payload"
            skipped[what] = skipped.get(what, 0) + 1
            continue
        line: dict[str, Any] = {
            "instance": instance_id,
            "event_id": entry.event_id,
            "type": entry.type,
            "payload": payload,
        }
        if not out and isinstance(initial_context, dict) and initial_context:
            line["context"] = initial_context
        out.append(json.dumps(line, ensure_ascii=False, separators=(", ", ": ")) + "\n")
    return RunLines("".join(out), len(out), skipped)


def run_lines_count(entries: Iterable[TimelineEntry]) -> RunLines:
    """What `run_lines` would give, counted without reading any payload (for the page,
    which shows the count): `text` is empty, and an entry whose stored payload is damaged
    is counted as a line (`run_lines` leaves it out)."""
    lines = 0
    skipped: dict[str, int] = {}
    for entry in entries:
        if entry.kind not in SENDABLE:
            skipped[entry.kind] = skipped.get(entry.kind, 0) + 1
        elif entry.reason in NOT_SENDABLE_CONFLICTS:
            what = f"{entry.kind} ({entry.reason})"
            skipped[what] = skipped.get(what, 0) + 1
        else:
            lines += 1
    return RunLines("", lines, skipped)
