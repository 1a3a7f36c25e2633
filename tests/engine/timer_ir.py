"""Charts with `after` timers built from a chart without time (until the DSL compiles them).

`with_after_timers(text, {"PLACEHOLDER": ("state.path", "30s", 30_000)})` compiles
`text`, in which each placeholder is a declared event standing for a timer, and
turns each placeholder into the `after` timer of that state: its transitions
become the timer event's, the event is no longer declared.
"""

from __future__ import annotations

from dataclasses import replace
from types import MappingProxyType

from chart_helpers import compile_text

import statekit
from statekit.compiler.ir import TimerDecl, TimerKind
from statekit.compiler.serialize import chart_digest


def with_after_timers(text: str, timers: dict[str, tuple[str, str, int]]) -> statekit.Chart:
    ir = compile_text(text).chart
    assert ir is not None
    names = {p: f"after({literal})@{path}" for p, (path, literal, _ms) in timers.items()}
    decls: list[TimerDecl] = []
    owned: dict[int, list[int]] = {}
    for placeholder, (path, _literal, ms) in timers.items():
        sid = ir.path_index[path]
        decl = TimerDecl(
            id=len(decls),
            name=names[placeholder],
            state=sid,
            kind=TimerKind.AFTER,
            delay_ms=ms,
            expression=None,
            span=ir.states[sid].span,
        )
        decls.append(decl)
        owned.setdefault(sid, []).append(decl.id)
    transitions = tuple(
        replace(t, event=names.get(t.event, t.event)) if t.event else t for t in ir.transitions
    )
    states = tuple(replace(s, timers=tuple(owned.get(s.id, ()))) for s in ir.states)
    candidates = tuple(
        MappingProxyType({names.get(e, e): ids for e, ids in c.items()}) for c in ir.candidates
    )
    events = MappingProxyType({e: d for e, d in ir.events.items() if e not in names})
    chart = replace(
        ir,
        states=states,
        transitions=transitions,
        candidates=candidates,
        events=events,
        timers=tuple(decls),
    )
    return statekit.Chart(replace(chart, digest=chart_digest(chart)))
