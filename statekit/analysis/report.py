"""How analysis findings describe configurations, transitions and paths (diagnostic notes).

Every path is an event trace from the initial configuration, one line per
event, with the data-guard outcomes it assumed on the lines below it:

    path from the initial configuration:
      start → {lifecycle.queued, cancellation.none, artifact.absent}
      1. TaskStarted → {lifecycle.running, cancellation.none, artifact.absent}
         assuming guard next_attempt (event.attempt == ctx.attempt + 1) holds
"""

from __future__ import annotations

from statekit.analysis.exploration import Exploration
from statekit.analysis.macrostep_branches import MacrostepBranch
from statekit.compiler.ir import CompiledChart, TransitionKind
from statekit.engine.tables import Configuration


def leaves(chart: CompiledChart, config: Configuration) -> str:
    """`{a, b.c}`: the active atomic states."""
    return "{" + ", ".join(chart.states[s].path for s in config.atomic) + "}"


def state_name(chart: CompiledChart, state: int) -> str:
    """A state's dotted path, the chart's name for the root."""
    return chart.states[state].path or chart.name


def trigger(chart: CompiledChart, transition: int) -> str:
    """The event of a transition, or `always` / `done`."""
    t = chart.transitions[transition]
    if t.kind is TransitionKind.EVENT:
        return t.event or ""
    return str(t.kind.value)


def transition_label(chart: CompiledChart, transition: int, *, line: bool = True) -> str:
    """`'a' --GO--> 'b' (line 12)`; a targetless transition shows `(targetless)`. Without
    `line` (for messages, which fingerprints hash: they must not move with the line)."""
    t = chart.transitions[transition]
    source = f"'{state_name(chart, t.source)}'"
    targets = ", ".join(f"'{state_name(chart, x)}'" for x in t.targets) or "(targetless)"
    where = f" (line {t.span.line})" if line else ""
    return f"{source} --{trigger(chart, transition)}--> {targets}{where}"


def outcome_text(exploration: Exploration, outcome: MacrostepBranch) -> str:
    """`→ {configuration}` for an applied event, else its classification."""
    if outcome.fired:
        if outcome.target < 0:
            return "→ (not explored: over the limit)"
        return "→ " + leaves(exploration.chart, exploration.nodes[outcome.target].config)
    if outcome.status.value == "ALREADY_APPLIED":
        return "ALREADY_APPLIED"
    return f"REJECTED {outcome.reason}"


def step_lines(exploration: Exploration, number: int, outcome: MacrostepBranch) -> list[str]:
    """One event of a path, and the assumptions it made."""
    chart = exploration.chart
    head = "start" if outcome.event is None else f"{number}. {outcome.event}"
    lines = [f"  {head} {outcome_text(exploration, outcome)}"]
    lines.extend(f"     assuming {a.describe(chart)}" for a in outcome.assumptions)
    return lines


def path_notes(
    exploration: Exploration, node: int, then: MacrostepBranch | None = None
) -> tuple[str, ...]:
    """The shortest known path to `node` (then one more macrostep, `then`), as notes."""
    path = [outcome for _parent, outcome in exploration.path(node)] if node >= 0 else []
    if then is not None:
        path.append(then)
    lines = ["path from the initial configuration:"]
    number = 0
    for outcome in path:
        if outcome.event is not None:
            number += 1
        lines.extend(step_lines(exploration, number, outcome))
    return tuple(lines)


def assumed(exploration: Exploration, node: int, then: MacrostepBranch | None = None) -> bool:
    """Whether the path to `node` (and `then`) assumed any data-guard outcome."""
    path = [o for _p, o in exploration.path(node)] if node >= 0 else []
    if then is not None:
        path.append(then)
    return any(o.assumptions for o in path)
