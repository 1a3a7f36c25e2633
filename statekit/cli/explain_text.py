"""`statekit explain` as plain text, for a pipe or a file: one fact a line, indented under
its configuration, every name whole (a terminal gets the table, `analysis_commands`).

Nothing is wrapped or cut: a line is as long as what it says, so `grep`, `diff` and a
reader with any window width see the same names the chart has.
"""

from __future__ import annotations

from statekit.analysis.explain import Explanation, TimerInfo
from statekit.analysis.explain_payloads import (
    answer_payload_text,
    path_text,
    replayed_answers,
    replayed_path,
    row_node,
)
from statekit.analysis.exploration import Exploration
from statekit.analysis.witness import PathReplays


def explanation_lines(explanation: Explanation, explored: Exploration) -> list[str]:
    """The explanation's table, timers, invariants and counts as lines of plain text."""
    out = [f"{explanation.chart}: what each reachable configuration does with each event"]
    replays = PathReplays(explored)
    for row in explanation.rows:
        label = ", ".join(row.states)
        if row.histories > 1:
            label += f" ({row.histories} variants of history or tracked context)"
        if row.sends:
            label += f" (send timers that may be armed: {', '.join(row.sends)})"
        out += ["", f"configuration {label}"]
        via = replayed_path(replays, row_node(replays, row))
        if via.events or via.start:
            out.append(f"  via {path_text(via)}")
        answers = iter(replayed_answers(replays, row))
        for event, verdicts in row.verdicts.items():
            for verdict in verdicts:
                payload = answer_payload_text(next(answers))
                out.append(f"  {event}: {verdict.text()} (payload {payload})")
                out.extend(f"    assuming {a}" for a in verdict.assuming)
    if explanation.timers:
        out += ["", TIMERS_HEADING]
        for timer in explanation.timers:
            out.append(f"  {timer.name} in {timer.state or '(root)'}, due {timer.due}")
            out.extend(f"    {line}" for line in timer_lines(timer))
    if explanation.invariants:
        out += ["", "invariants"]
        for inv in explanation.invariants:
            status = "enforced at runtime" if inv.status == "runtime" else inv.status
            detail = f": {inv.detail}" if inv.detail else ""
            out.append(f"  {inv.name} ({inv.form}) {status}{detail}")
    out += ["", counts_line(explanation, explored)]
    return out


TIMERS_HEADING = "timers (each occurs where its state is active, unless a state keeps it paused)"


def timer_lines(timer: TimerInfo) -> list[str]:
    """A timer's transitions, then where `pause:`/`resume:` name it and the states that
    keep it paused (not delivered there)."""
    return [
        *timer.transitions,
        *timer.controls,
        *(f"paused (not delivered) while '{s}' is active" for s in timer.paused_in),
    ]


def counts_line(explanation: Explanation, explored: Exploration) -> str:
    """The closing line of `explain`'s text: what was explored, and whether all of it."""
    c = explanation.counts
    return (
        f"{c['configurations']:,} reachable configuration(s) "
        f"({c['abstract_states']:,} abstract states with history values), "
        f"{c['transitions_selectable']} of {c['transitions']} transition(s) selectable, "
        f"{c['checks']:,} (configuration, event) checks in {explored.seconds * 1000:.0f} ms"
        + ("" if explanation.complete else " (incomplete: a bound was hit)")
    )
