"""Generated charts of parallel regions, with and without interactions between them.

`region_chart(seed, regions, couplings)` writes a chart whose root is parallel
with `regions` small regions (two to four states, own events, payload guards,
`reject` entries, sometimes a final state or an `after` timer, sometimes states
no transition reaches or leaves), then adds each coupling named in `couplings`
between two regions the seed picks: `shared` (a transition on another region's
event), `active` (a guard reading another region's state), `raise` (raising
another region's event), `invariant` (a state invariant across two regions),
`field` (a context field one region assigns and another's guard reads),
`target` (a transition to another region's state: it leaves and re-enters every
region).
"""

from __future__ import annotations

import random

COUPLINGS = ("shared", "active", "raise", "invariant", "field", "target")


class _Region:
    def __init__(self, rng: random.Random, number: int) -> None:
        self.name = f"r{number}"
        self.events = [f"E{number}_{i}" for i in range(rng.randint(1, 3))]
        self.states = [f"s{i}" for i in range(rng.randint(2, 4))]
        self.final = rng.random() < 0.4
        self.on: dict[str, dict[str, str]] = {s: {} for s in self.states}
        self.reject: dict[str, dict[str, str]] = {}
        self.timer: str | None = None
        for state in self.states[:-1] if self.final else self.states:
            for _ in range(rng.randint(0, 2)):
                event = rng.choice(self.events)
                target = rng.choice(self.states)
                if rng.random() < 0.3:
                    self.on[state][event] = f"{{to: {target}, if: event.ok, else: NOT_OK}}"
                else:
                    self.on[state][event] = target
            if rng.random() < 0.2:
                self.reject[state] = {rng.choice(self.events): "NOT_NOW"}
        self.on[self.states[0]].setdefault(self.events[0], rng.choice(self.states))
        if rng.random() < 0.15:
            self.timer = rng.choice(self.states[:-1] if self.final else self.states)

    def lines(self) -> list[str]:
        out = [f"  {self.name}:", f"    initial: {self.states[0]}", "    states:"]
        for state in self.states:
            if self.final and state == self.states[-1]:
                out.append(f"      {state}: {{final: true}}")
                continue
            out.append(f"      {state}:")
            if self.on[state]:
                out.append("        on:")
                out.extend(f"          {e}: {t}" for e, t in self.on[state].items())
            if state in self.reject:
                entries = ", ".join(f"{e}: {r}" for e, r in self.reject[state].items())
                out.append(f"        reject: {{{entries}}}")
            if state == self.timer:
                out.append(f"        after: {{5s: {self.states[0]}}}")
            if not self.on[state] and state not in self.reject and state != self.timer:
                out[-1] += " {}"
        return out


def region_chart(seed: int, regions: int, couplings: tuple[str, ...] = ()) -> str:
    """A generated chart (see the module docstring) as YAML text."""
    rng = random.Random(seed)
    parts = [_Region(rng, r) for r in range(regions)]
    invariants: list[str] = []
    context: list[str] = []
    for kind in couplings:
        a, b = rng.sample(parts, 2)
        source = rng.choice(b.states[:-1] if b.final else b.states)
        target = rng.choice(b.states)
        if kind == "shared":
            b.on[source][a.events[0]] = target
        elif kind == "active":
            b.on[source][b.events[-1]] = (
                f"{{to: {target}, if: \"active('{a.name}.{a.states[1]}')\", else: WAIT}}"
            )
        elif kind == "raise":
            first = rng.choice(a.states[:-1] if a.final else a.states)
            raised = f"{{raise: {{event: {b.events[0]}, payload: {{ok: true}}}}}}"
            a.on[first][a.events[0]] = f"{{to: {rng.choice(a.states)}, do: [{raised}]}}"
        elif kind == "invariant":
            invariants.append(
                f"  cross: {{when: {a.name}.{a.states[1]}, forbid: {b.name}.{b.states[1]}}}"
            )
        elif kind == "field":
            context = ["context:", "  flag: {type: boolean, default: false}"]
            first = rng.choice(a.states[:-1] if a.final else a.states)
            a.on[first][a.events[-1]] = (
                f"{{to: {rng.choice(a.states)}, do: [{{assign: {{flag: true}}}}]}}"
            )
            b.on[source][b.events[0]] = f"{{to: {target}, if: ctx.flag, else: NO_FLAG}}"
        elif kind == "target":
            b.on[source][b.events[-1]] = f"{a.name}.{a.states[1]}"
    lines = ["statechart: generated", "version: 1", "events:"]
    lines += [f"  {e}: {{ok: boolean}}" for part in parts for e in part.events]
    lines.append("  UNHANDLED: {}")
    lines += context
    if invariants:
        lines += ["invariants:", *invariants]
    lines += ["parallel: true", "states:"]
    for part in parts:
        lines += part.lines()
    return "\n".join(lines) + "\n"
