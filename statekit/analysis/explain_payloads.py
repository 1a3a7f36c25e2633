"""Concrete payloads for `statekit explain`: how to reach each configuration, and how to
make each of its answers happen.

For every row of an `Explanation`, the shortest known path to the configuration
(the events from the start, each with a payload checked by replaying the path
through `Chart.send`), and for every answer the payload of the answering
event, checked the same way from where that path ends. An answer first found
in another abstract state of the configuration (another history value, say)
carries the path to that state instead. The search is `witness.PathReplays`:
lazy (only the rows printed are searched), cached per abstract state (a path
is its parent's plus one step) and bounded (`witness.STEP_BUDGET` sends per
answer); an answer or step with no payload found is printed as assumed, with
its data-guard assumptions.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from statekit.analysis.explain import Explanation, Row, Verdict
from statekit.analysis.exploration import Exploration
from statekit.analysis.macrostep_branches import MacrostepBranch
from statekit.analysis.witness import PathReplays, Payload


@dataclass(frozen=True, slots=True)
class ReplayedEvent:
    """One event of a path from the start, with its checked payload (None: assumed)."""

    event: str
    payload: Payload | None

    def to_json(self) -> dict[str, Any]:
        """`{"event": ..., "payload": {...} or null}`."""
        return {"event": self.event, "payload": self.payload}


@dataclass(frozen=True, slots=True)
class ReplayedAnswer:
    """A verdict of a row with the payload that makes the chart answer it, and the path to
    the abstract state it was found in when that is not the row's (else None)."""

    event: str
    verdict: Verdict
    payload: Payload | None
    path: ReplayedPath | None


@dataclass(frozen=True, slots=True)
class ReplayedPath:
    """The shortest known path to an abstract state: the context to start the instance
    with (the tracked fields whose start values differ from the declared defaults;
    empty: the defaults) and the events, each with its checked payload."""

    start: dict[str, object]
    events: tuple[ReplayedEvent, ...]

    def to_json(self) -> list[dict[str, Any]]:
        """The events, as `ReplayedEvent.to_json` gives each."""
        return [e.to_json() for e in self.events]


def replayed_path(replays: PathReplays, node: int) -> ReplayedPath:
    """The shortest known path to `node`, each event with its checked payload."""
    exploration = replays.exploration
    events = [o.event for _p, o in exploration.path(node) if o.event is not None]
    payloads = replays.node(node).payloads
    return ReplayedPath(
        exploration.tracked_nodes.start_context(node),
        tuple(ReplayedEvent(e, p) for e, p in zip(events, payloads, strict=True)),
    )


ROW_TRIES = 4
"""Abstract states of a configuration tried, first reached first, for one whose path
replays (the first path the exploration found may take a branch that only its abstract
context allows: a guard on a context value no payload of the path sets)."""


def row_node(replays: PathReplays, row: Row) -> int:
    """The abstract state whose path a row shows: the first of its first `ROW_TRIES`
    whose path replays to the end, else its first."""
    for node in row.nodes[:ROW_TRIES]:
        if replays.node(node).state is not None:
            return node
    return row.nodes[0]


def replayed_answers(replays: PathReplays, row: Row) -> Iterator[ReplayedAnswer]:
    """Each verdict of `row`, in its order, with its checked payload (see the module
    docstring): from the row's shown abstract state (`row_node`) when it answers the
    same, else from where the verdict was first found, with the path to there."""
    home = row_node(replays, row)
    exploration = replays.exploration
    for event, verdicts in row.verdicts.items():
        for verdict, (node, outcome) in zip(verdicts, row.witnesses[event], strict=True):
            if node != home:
                same = _same_answer(exploration, home, outcome)
                if same is not None:
                    node, outcome = home, same
            path = None if node == home else replayed_path(replays, node)
            yield ReplayedAnswer(event, verdict, replays.answer(node, outcome), path)


def _same_answer(
    exploration: Exploration, node: int, outcome: MacrostepBranch
) -> MacrostepBranch | None:
    """An outcome of `node` that answers as `outcome` does (event, classification,
    transitions and the configuration it leads to), if any."""

    def target(o: MacrostepBranch) -> int:
        return exploration.config_index[o.target] if o.target >= 0 else o.target

    for other in exploration.outcomes_of(node) or ():
        if (
            other.event == outcome.event
            and other.status == outcome.status
            and other.reason == outcome.reason
            and other.transitions() == outcome.transitions()
            and target(other) == target(outcome)
        ):
            return other
    return None


def path_text(path: ReplayedPath) -> str:
    """`PAY {"amount": 11}, SHIP` (`?` after an event whose payload is only assumed;
    nothing after one without fields), after `start context {...}:` when the instance
    starts with other values than the declared defaults."""
    events = ", ".join(_event_text(e) for e in path.events) or "(the initial configuration)"
    if path.start:
        return f"start context {_json(path.start)}: {events}"
    return events


def _event_text(step: ReplayedEvent) -> str:
    if step.payload is None:
        return f"{step.event} ?"
    if not step.payload:
        return step.event
    return f"{step.event} {_json(step.payload)}"


def answer_payload_text(answer: ReplayedAnswer) -> str:
    """The payload column of `explain`'s text: the payload, `{}`, or `assumed`; prefixed
    with the path when the answer was found in another abstract state."""
    shown = "assumed" if answer.payload is None else _json(answer.payload)
    if answer.path is not None:
        return f"after {path_text(answer.path)}: {shown}"
    return shown


def _json(payload: Payload) -> str:
    return json.dumps(payload, ensure_ascii=False)


def explanation_json(explanation: Explanation, replays: PathReplays) -> dict[str, Any]:
    """`explanation.to_json()` with, per configuration, the checked `path` to it and, per
    answer, its checked `payload` (and its own `path` when found elsewhere): additive."""
    out = explanation.to_json()
    for row, entry in zip(explanation.rows, out["configurations"], strict=True):
        path = replayed_path(replays, row_node(replays, row))
        entry["path"] = path.to_json()
        if path.start:
            entry["start_context"] = path.start
        answers = iter(replayed_answers(replays, row))
        for event, verdicts in entry["events"].items():
            for verdict in verdicts:
                answer = next(answers)
                assert answer.event == event
                verdict["payload"] = answer.payload
                if answer.path is not None:
                    verdict["path"] = answer.path.to_json()
                    if answer.path.start:
                        verdict["start_context"] = answer.path.start
    return out
