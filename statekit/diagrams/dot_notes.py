"""The notes beside a Graphviz drawing: the `already`/`reject` table and the invariants.

Both are HTML-like tables of one line per row (a row of its own per wrapped
line, with padding, so that no underscore touches the line below) and of one
font and colour per line (an SVG viewer whose font is wider or narrower than
the one Graphviz measured would otherwise open gaps inside a line or run it
past a cell's border).
"""

from __future__ import annotations

from collections import defaultdict

from statekit.diagrams.dot_text import html, wrap_lines
from statekit.diagrams.model import Diagram
from statekit.diagrams.palette import ERROR, MUTED
from statekit.diagrams.views import View

NOTE_WRAP = 56
TABLE = '<TABLE BORDER="0" CELLBORDER="1" CELLSPACING="0" CELLPADDING="4" COLOR="#b0bec5">'
_LINES = '<TABLE BORDER="0" CELLBORDER="0" CELLSPACING="0" CELLPADDING="1">'


def line_table(texts: list[tuple[str, str | None]], width: int) -> str:
    """Texts (each with its colour, None for ink) wrapped at `width`, one row per line."""
    rows = []
    for text, colour in texts:
        for line in wrap_lines(text, width):
            cell = html(line)
            if colour is not None:
                cell = f'<FONT COLOR="{colour}">{cell}</FONT>'
            rows.append(f'<TR><TD ALIGN="LEFT">{cell}</TD></TR>')
    return f"{_LINES}{''.join(rows)}</TABLE>"


def classification_table(view: View) -> str:
    """`already`/`reject` entries of the drawn states, as an HTML table (or "")."""
    rows = []
    for state in view.diagram.states:
        if not view.drawn(state.id) or not (state.already or state.reject):
            continue
        by_reason: dict[str, list[str]] = defaultdict(list)
        for event, reason in state.reject:
            by_reason[reason].append(event)
        texts: list[tuple[str, str | None]] = []
        if state.already:
            texts.append((f"already: {', '.join(state.already)}", MUTED))
        texts += [(f"{reason}: {', '.join(events)}", ERROR) for reason, events in by_reason.items()]
        rows.append(
            f'<TR><TD ALIGN="LEFT" VALIGN="TOP">{html(state.ref)}</TD>'
            f'<TD ALIGN="LEFT">{line_table(texts, NOTE_WRAP)}</TD></TR>'
        )
    if not rows:
        return ""
    head = (
        '<TR><TD COLSPAN="2" ALIGN="LEFT"><B>already / reject</B></TD></TR>'
        '<TR><TD COLSPAN="2" ALIGN="LEFT">what a state answers to an event it has no '
        "transition for:</TD></TR>"
        '<TR><TD COLSPAN="2" ALIGN="LEFT">already (grey), or rejected with the reason '
        "(vermillion)</TD></TR>"
    )
    return f"{TABLE}{head}{''.join(rows)}</TABLE>"


def invariant_table(d: Diagram) -> str:
    """The invariants as an HTML table (or "")."""
    if not d.invariants:
        return ""
    rows = [
        f'<TR><TD ALIGN="LEFT" VALIGN="TOP">{html(i.name)}</TD>'
        f'<TD ALIGN="LEFT">{line_table([(i.text, None)], NOTE_WRAP)}</TD></TR>'
        for i in d.invariants
    ]
    head = '<TR><TD COLSPAN="2" ALIGN="LEFT"><B>invariants</B></TD></TR>'
    return f"{TABLE}{head}{''.join(rows)}</TABLE>"
