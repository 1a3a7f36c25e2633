"""The sections of a chart's docs page that state its policies, read from the IR: who
sends which events (`producers:`), the race decisions (`races:`) and the convergent
pairs of events, the idempotency keys (`idempotency:`) and the named timers (`id:` in
`after:`), and what the analysis established about each invariant (`InvariantCheck`);
the analysis's findings are given by the caller, which explores the chart as `statekit
explain` and `statekit races` do. Pure: the same inputs give the same lines."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from statekit.compiler.ir import CompiledChart, Producer, RaceDecision
from statekit.compiler.markdown_text import markdown_code, markdown_text
from statekit.compiler.model.timers import timer_trigger

NONE = "None declared."


@dataclass(frozen=True, slots=True)
class InvariantCheck:
    """What `statekit explain` established about one invariant: `status` (`proven`,
    `violated`, `runtime`, `not proven`) and its detail."""

    name: str
    status: str
    detail: str

    def text(self) -> str:
        """How the docs page says it: `proven: holds in all 12 reachable configurations`."""
        if self.status == "runtime":
            return "at runtime: it reads data, checked after every step"
        return f"{self.status}: {self.detail}"


def policy_sections(chart: CompiledChart, convergent: Sequence[tuple[str, str]] = ()) -> list[str]:
    """The Markdown lines of the producers, race decisions, idempotency keys and named
    timers sections (each says `None declared.` when the chart has none); the race
    section lists the `convergent` pairs of events too (their two orders end in the
    same state with the same answers everywhere, so they need no decision)."""
    code, cell = markdown_code, markdown_text
    out = ["## Producers", ""]
    if chart.producers:
        out += ["| producer | events, in the order it sends them |", "|---|---|"]
        out += [f"| {code(p.name)} | {_producer_events(p)} |" for p in chart.producers]
    else:
        out.append(NONE)
    out += ["", "## Race decisions", ""]
    if chart.races:
        out += ["| race | events | in | decision |", "|---|---|---|---|"]
        out += [
            f"| {code(r.name)} | {_race_events(r)} | "
            f"{code(r.state_ref) if r.state_ref else 'everywhere'} | {cell(r.decision)} |"
            for r in chart.races
        ]
    else:
        out.append(NONE)
    if convergent:
        out += [
            "",
            "Convergent pairs (either order ends in the same state with the same answers, "
            "so no decision is needed):",
            "",
        ]
        out += [f"- {code(a)} · {code(b)}" for a, b in convergent]
    out += ["", "## Idempotency keys", ""]
    if chart.idempotency:
        out += ["| event | key (payload fields) |", "|---|---|"]
        out += [
            f"| {code(event)} | {', '.join(code(f) for f in fields)} |"
            for event, fields in sorted(chart.idempotency.items())
        ]
    else:
        out.append(NONE)
    out += ["", "## Named timers", ""]
    named = [t for t in chart.timers if t.label is not None]
    if named:
        out += ["| timer | state | fires | identity |", "|---|---|---|---|"]
        for t in named:
            path = chart.states[t.state].path
            trigger = timer_trigger(t, path).split(": ", 1)[-1]
            out.append(
                f"| {code(t.label or '')} | {code(path or chart.name)} | {code(trigger)} | "
                f"{code(t.name)} |"
            )
    else:
        out.append(NONE)
    return out


def _producer_events(producer: Producer) -> str:
    """`A`, `B`; an unordered producer's say so, with its decision."""
    events = ", ".join(markdown_code(e) for e in producer.events)
    if not producer.unordered:
        return events
    return f"{events} (in any order: {markdown_text(producer.decision or '')})"


def _race_events(race: RaceDecision) -> str:
    """`A` · `B` for a decision (each side a name, a list or `*`), `A` before `B` for an
    ordering fact."""
    return (" before " if race.precedes else " · ").join(markdown_code(e) for e in race.events)
