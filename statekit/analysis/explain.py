"""`statekit explain`: what every reachable configuration does with every event.

The classification table lists, per reachable configuration (history values
merged) and declared event, each distinct outcome the exploration found: the
configuration it leads to (APPLIED), ALREADY_APPLIED, REJECTED with its
reason (a guard's `else`, a `reject` entry, TERMINAL_STATE,
UNDEFINED_TRANSITION, LIVELOCK), each with the data-guard outcomes it
assumed. `statekit.analysis.answer_groups` folds it per event into groups of
configurations with the same answers. Invariants are listed with their status:
`proven` (no reachable configuration breaks it), `violated` (with the first configuration that
does), `runtime` (an expression over data: enforced by the engine after every
step) or `not proven` (the exploration hit a bound).

Timers: each row lists the timer events armed in its configuration (an
`after` timer while its state is active), and its verdicts answer them as
they answer declared events (after those); `Explanation.timers` describes
every timer of the chart (its state, its due time, its transitions). The
JSON form has `timers` (top level and per configuration) only for charts
with timers, so the output for a chart without them is unchanged.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any

from statekit.analysis.exploration import Exploration
from statekit.analysis.facts import selected_transitions
from statekit.analysis.guards import ThreeValued
from statekit.analysis.macrostep_branches import MacrostepBranch
from statekit.analysis.paused_timers import paused_while_active, timer_controls
from statekit.analysis.report import state_name, transition_label
from statekit.analysis.timers import ArmedTimers, armed_sends, send_timer_id, sends_of
from statekit.analysis.tracked_context import shown_value
from statekit.compiler.chart_set import invoking_states
from statekit.compiler.invariant_ir import ExpressionInvariant, StateInvariant
from statekit.compiler.ir import CompiledChart, TimerKind
from statekit.compiler.model.timers import timer_spec
from statekit.engine.result import UNDEFINED_TRANSITION
from statekit.engine.tables import Configuration


@dataclass(frozen=True, slots=True)
class Verdict:
    """One outcome of an event in a configuration."""

    status: str
    reason: str | None
    target: tuple[str, ...] | None
    assuming: tuple[str, ...]
    cannot_arrive: str | None = None
    """Why the event cannot arrive in this configuration (an invocation's `done.invoke.<id>`
    or `error.invoke.<id>` where its state is not active: no child runs there), so the
    answer is no gap to fill; None for an event that can."""

    def text(self) -> str:
        """`→ {a, b}`, `ALREADY_APPLIED`, `REJECTED REASON`, with why the event cannot
        arrive when it cannot."""
        if self.target is not None:
            return "→ " + ", ".join(self.target)
        text = self.status if self.reason is None else f"{self.status} {self.reason}"
        if self.cannot_arrive is not None:
            text += f", but it cannot arrive here: {self.cannot_arrive}"
        return text

    def to_json(self) -> dict[str, Any]:
        """JSON form (`cannot_arrive` only for an event that cannot arrive here)."""
        out: dict[str, Any] = {"status": self.status, "reason": self.reason}
        if self.target is not None:
            out["target"] = list(self.target)
        out["assuming"] = list(self.assuming)
        if self.cannot_arrive is not None:
            out["cannot_arrive"] = self.cannot_arrive
        return out


@dataclass(frozen=True, slots=True)
class Row:
    """A reachable configuration: its atomic states, all active states, and its verdicts
    per event (several when data guards or history values make a difference); `timers`
    are the timer events armed in it (their verdicts follow the declared events'),
    `sends` the send timers that may be armed in it (`timers.armed_sends`)."""

    states: tuple[str, ...]
    active: tuple[str, ...]
    histories: int
    verdicts: dict[str, tuple[Verdict, ...]]
    timers: tuple[str, ...] = ()
    sends: tuple[str, ...] = ()
    nodes: tuple[int, ...] = ()
    """The configuration's abstract states, first reached first (`histories` of them)."""
    witnesses: dict[str, tuple[tuple[int, MacrostepBranch], ...]] = field(default_factory=dict)
    """Per event, where each verdict was first found (node, outcome), in `verdicts`' order
    (`explain_payloads` replays them)."""


@dataclass(frozen=True, slots=True)
class TimerInfo:
    """A timer of the chart: its event's name, its owning state's path, when it is due
    (`15m`, `delay ctx.backoff_ms`, `at ctx.lease_until_ms`), its transitions (labels,
    in document order), the states in which it is paused whatever the path (never
    delivered there: `analysis.paused_timers`) and where `pause:`/`resume:` name it."""

    name: str
    state: str
    due: str
    transitions: tuple[str, ...]
    paused_in: tuple[str, ...] = ()
    controls: tuple[str, ...] = ()

    def to_json(self) -> dict[str, Any]:
        """JSON form (`paused_in` and `controls` only for a timer a `pause:` names)."""
        out: dict[str, Any] = {
            "name": self.name,
            "state": self.state,
            "due": self.due,
            "transitions": list(self.transitions),
        }
        if self.controls:
            out["paused_in"] = list(self.paused_in)
            out["controls"] = list(self.controls)
        return out


@dataclass(frozen=True, slots=True)
class InvariantStatus:
    """An invariant and what the analysis established about it."""

    name: str
    form: str
    status: str
    detail: str


@dataclass(frozen=True, slots=True)
class Explanation:
    """Everything `statekit explain` shows."""

    chart: str
    file: str
    complete: bool
    limits: tuple[str, ...]
    rows: tuple[Row, ...]
    invariants: tuple[InvariantStatus, ...]
    counts: dict[str, int] = field(default_factory=dict)
    timers: tuple[TimerInfo, ...] = ()
    send_timers: tuple[str, ...] = ()
    """The send timers of the chart's delayed `send`s (`timers.send_timer_id`)."""

    def to_json(self) -> dict[str, Any]:
        """The machine-readable form (`--format json`; `timers`, `send_timers` and each
        configuration's `timers` and `sends` only for a chart with timers or delayed
        sends)."""
        out = self._json()
        if self.timers or self.send_timers:
            out["timers"] = [t.to_json() for t in self.timers]
            out["send_timers"] = list(self.send_timers)
            for row, entry in zip(self.rows, out["configurations"], strict=True):
                entry["timers"] = list(row.timers)
                entry["sends"] = list(row.sends)
        return out

    def _json(self) -> dict[str, Any]:
        return {
            "version": 1,
            "chart": self.chart,
            "file": self.file,
            "complete": self.complete,
            "limits": list(self.limits),
            "counts": dict(self.counts),
            "configurations": [
                {
                    "states": list(row.states),
                    "active": list(row.active),
                    "history_variants": row.histories,
                    "events": {
                        event: [v.to_json() for v in verdicts]
                        for event, verdicts in row.verdicts.items()
                    },
                }
                for row in self.rows
            ],
            "invariants": [
                {"name": i.name, "form": i.form, "status": i.status, "detail": i.detail}
                for i in self.invariants
            ],
        }


def _names(exploration: Exploration, config: Configuration) -> tuple[str, ...]:
    states = exploration.chart.states
    return tuple(states[s].path for s in config.atomic)


class _Verdicts:
    """Verdicts shared by every outcome with the same answer, and each configuration's
    names built once: an explored chart of 100,000 abstract states has millions of
    outcomes, but each configuration is the target of a handful of them."""

    def __init__(self, exploration: Exploration) -> None:
        self.exploration = exploration
        self.names: dict[int, tuple[str, ...]] = {}
        self.shared: dict[Verdict, Verdict] = {}

    def names_of(self, number: int) -> tuple[str, ...]:
        """The atomic states' paths of configuration `number` (`Exploration.configs`)."""
        found = self.names.get(number)
        if found is None:
            states = self.exploration.chart.states
            found = self.names[number] = tuple(
                states[s].path for s in self.exploration.configs[number] if states[s].is_atomic
            )
        return found

    def of(self, outcome: MacrostepBranch, source: int | None = None) -> Verdict:
        """The verdict of one outcome (of node `source`: where other nodes of its
        configuration differ in tracked context values, its own values come first
        among the conditions, `ctx.cancel_at_period_end = true`)."""
        exploration = self.exploration
        target = None
        if outcome.fired:
            target = (
                self.names_of(exploration.config_index[outcome.target])
                if outcome.target >= 0
                else ("(not explored)",)
            )
        assuming = tuple(a.describe(exploration.chart) for a in outcome.assumptions)
        if source is not None and exploration.tracked:
            values = exploration.tracked_nodes.distinguishing(source)
            held = tuple(f"ctx.{k} = {shown_value(v)}" for k, v in values.items())
            assuming = (*held, *assuming)
        verdict = Verdict(outcome.status.value, outcome.reason, target, assuming)
        return self.shared.setdefault(verdict, verdict)

    def cannot_arrive(self, verdict: Verdict, event: str, state: int) -> Verdict:
        """`verdict` of an invocation's `event` where its state `state` is not active: an
        UNDEFINED_TRANSITION there is no gap (no child runs to send it)."""
        if verdict.reason != UNDEFINED_TRANSITION:
            return verdict
        path = self.exploration.chart.states[state].path
        why = f"its invocation runs only while '{path}' is active"
        marked = replace(verdict, cannot_arrive=why)
        return self.shared.setdefault(marked, marked)


def _due(chart: CompiledChart, timer: int) -> str:
    decl = chart.timers[timer]
    if decl.kind is TimerKind.AFTER:
        return timer_spec(decl, chart.states[decl.state].path)
    assert decl.expression is not None
    return f"{decl.kind.value} {decl.expression.source}"


def timer_infos(chart: CompiledChart) -> tuple[TimerInfo, ...]:
    """Every timer of the chart, in document order (see `TimerInfo`)."""
    paused = paused_while_active(chart)
    return tuple(
        TimerInfo(
            decl.name,
            state_name(chart, decl.state),
            _due(chart, decl.id),
            tuple(
                transition_label(chart, t.id)
                for t in chart.transitions
                if t.event == decl.name and t.source == decl.state
            ),
            tuple(state_name(chart, s) for s, names in paused.items() if decl.name in names),
            timer_controls(chart, decl.label),
        )
        for decl in chart.timers
    )


def explain(
    exploration: Exploration, *, state: int | None = None, event: str | None = None
) -> Explanation:
    """The classification table, restricted to configurations with `state` active and to
    `event` when given; invariants and counts always cover the whole chart."""
    chart = exploration.chart
    states = chart.states
    # Per configuration number: its abstract states, and per event its verdicts (a
    # list, not a set: one verdict per event in most rows, a few with data guards).
    rows: dict[int, tuple[list[int], dict[str, list[Verdict]]]] = {}
    witnesses: dict[tuple[int, str], list[tuple[int, MacrostepBranch]]] = {}
    may_be_armed = armed_sends(exploration)
    sends: dict[int, set[str]] = {}
    shared = _Verdicts(exploration)
    numbers = exploration.config_index
    invoking = invoking_states(chart)
    for node_id in range(len(numbers)):
        number = numbers[node_id]
        if state is not None and state not in exploration.configs[number]:
            continue
        ids, verdicts = rows.setdefault(number, ([], {}))
        ids.append(node_id)
        if may_be_armed[node_id]:
            sends.setdefault(number, set()).update(may_be_armed[node_id])
        for outcome in exploration.outcomes_of(node_id) or ():
            assert outcome.event is not None
            if event is not None and outcome.event != event:
                continue
            verdict = shared.of(outcome, node_id)
            runs_in = invoking.get(outcome.event)
            if runs_in is not None and runs_in not in exploration.configs[number]:
                verdict = shared.cannot_arrive(verdict, outcome.event, runs_in)
            found = verdicts.get(outcome.event)
            if found is None:
                verdicts[outcome.event] = [verdict]
                witnesses[number, outcome.event] = [(node_id, outcome)]
            elif verdict not in found:
                found.append(verdict)
                witnesses[number, outcome.event].append((node_id, outcome))
    order = exploration.event_order()
    armed = ArmedTimers(chart)
    table = tuple(
        Row(
            shared.names_of(number),
            tuple(states[s].path for s in exploration.configs[number]),
            len(ids),
            {e: tuple(v) for e, v in sorted(verdicts.items(), key=lambda kv: order[kv[0]])},
            armed.events(exploration.config_at(number)) if chart.timers else (),
            tuple(sorted(sends.get(number, ()))),
            tuple(ids),
            {e: tuple(witnesses[number, e]) for e in verdicts},
        )
        for number, (ids, verdicts) in rows.items()
    )
    selectable = selected_transitions(exploration)
    counts = {
        "configurations": len(set(exploration.config_index)),
        "abstract_states": len(exploration.nodes),
        "events": len(exploration.events),
        "checks": exploration.checks,
        "transitions": len(chart.transitions),
        "transitions_selectable": len(selectable),
    }
    return Explanation(
        chart.name,
        chart.file,
        exploration.complete,
        tuple(limit.message for limit in exploration.limits),
        table,
        invariant_statuses(exploration),
        counts,
        timer_infos(chart),
        tuple(dict.fromkeys(send_timer_id(s) for s in sends_of(chart) if s.delayed)),
    )


def invariant_statuses(exploration: Exploration) -> tuple[InvariantStatus, ...]:
    """Each invariant: proven, violated, runtime-enforced or not proven."""
    chart, tables = exploration.chart, exploration.tables
    three = ThreeValued()
    out: list[InvariantStatus] = []
    for inv in chart.invariants:
        if isinstance(inv, StateInvariant):
            broken = next(
                (
                    n
                    for n in exploration.nodes
                    if inv.name in tables.broken_state_invariants(n.config)
                ),
                None,
            )
            form = "state"
            runtime = False
        else:
            assert isinstance(inv, ExpressionInvariant)
            values = [three.truth(inv.expression, c.ids) for c in exploration.configurations()]
            broken = next(
                (
                    n
                    for n in exploration.nodes
                    if three.truth(inv.expression, n.config.ids) is False
                ),
                None,
            )
            form = "expression"
            runtime = any(v is not True for v in values)
        if broken is not None:
            where = "{" + ", ".join(_names(exploration, broken.config)) + "}"
            out.append(InvariantStatus(inv.name, form, "violated", f"broken in {where}"))
        elif not exploration.complete:
            out.append(InvariantStatus(inv.name, form, "not proven", "the exploration hit a bound"))
        elif runtime:
            assert isinstance(inv, ExpressionInvariant)
            out.append(
                InvariantStatus(
                    inv.name,
                    form,
                    "runtime",
                    f"`{inv.expression.source}` reads data: checked after every step",
                )
            )
        else:
            out.append(
                InvariantStatus(
                    inv.name,
                    form,
                    "proven",
                    f"holds in all {len(exploration.configurations())} reachable configurations",
                )
            )
    return tuple(out)
