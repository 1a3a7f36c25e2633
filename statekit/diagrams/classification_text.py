"""One cell of the classification of each leaf state and event as plain text, for every page that
shows the table (the Markdown docs escape it for a table cell; the inspector's pages
escape it as HTML)."""

from __future__ import annotations

from statekit.diagrams.classify import Cell, Fallback
from statekit.diagrams.model import Diagram

_FALLBACK = {
    Fallback.NONE: "",
    Fallback.ALREADY: "ALREADY_APPLIED",
    Fallback.GUARD: "the guard's reason",
    Fallback.TERMINAL: "TERMINAL_STATE",
    Fallback.UNDEFINED: "—",
}


def cell_words(d: Diagram, c: Cell) -> str:
    """`→ target` per transition the event selects there (`if guard`, `internal` for a
    targetless one), then `else` what answers when none is taken: `ALREADY_APPLIED`, the
    guard's reason, the reject reason, `TERMINAL_STATE` or `—` (UNDEFINED_TRANSITION)."""
    parts = []
    for tid in c.transitions:
        t = d.transitions[tid]
        text = "→ " + (", ".join(d.states[x].ref for x in t.targets) if t.targets else "internal")
        if t.guards:
            text += " if " + ", ".join(g.text for g in t.guards)
        parts.append(text)
    fallback = c.reason or "" if c.fallback is Fallback.REJECT else _FALLBACK[c.fallback]
    if fallback:
        parts.append(fallback)
    return " · else ".join(parts)
