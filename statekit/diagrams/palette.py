"""Colours that carry meaning in the Graphviz drawings, and the legend that names them.

Each colour says one thing, and the legend of a drawing lists only the
meanings it uses: the regions of a parallel state are tinted boxes (one tint
per region), a final state is green, one whose name says the work failed or
was called off (`failed`, `cancelled`, `rejected`, ...) and the transitions
into it are vermillion (an error path), a history state is purple, a timer's
transition (`after`, `at`) is blue, and a transition between regions or to a
state outside the drawing grey. The hues are from Okabe and Ito's set, told
apart with the common colour-vision deficiencies; every meaning is also in
the shape or the text (a double circle, `H`, `after 3d`), so a grey print
loses nothing.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from statekit.compiler.ir import StateKind
from statekit.diagrams.dot_text import html
from statekit.diagrams.model import Diagram, DState, DTransition

INK = "#263238"
MUTED = "#78909c"
TIMER = "#0072b2"
ERROR = "#d55e00"
ERROR_FILL = "#fbe9e0"
FINAL = "#009e73"
FINAL_FILL = "#e3f4ee"
HISTORY = "#7b3294"
HISTORY_FILL = "#f1e6f5"
REGION_BORDER = "#8096b0"
REGION_FILLS = ("#edf3fa", "#fdf6e4", "#eef6ee", "#f6eff8", "#eaf5f5")
"""The tints of the regions of a parallel state, in document order (then again)."""

_FAILURE = re.compile(
    r"fail|error|abort|cancel|reject|revok|expire|breach|timed_?out|timeout|deni|declin|refus|"
    r"unpaid|lost|dead",
    re.IGNORECASE,
)


def is_failure_end(state: DState) -> bool:
    """A final state whose name says the work failed or was called off (an error path's end)."""
    return state.kind is StateKind.FINAL and _FAILURE.search(state.name) is not None


def region_fill(d: Diagram, region: DState) -> str:
    """The tint of a region: its place among its parallel parent's regions."""
    assert region.parent is not None
    index = d.states[region.parent].children.index(region.id)
    return REGION_FILLS[index % len(REGION_FILLS)]


def edge_colour(d: Diagram, transitions: tuple[int, ...]) -> str | None:
    """The colour of an edge drawing `transitions`: vermillion into a failed end, blue for a
    timer, None for the ink of an ordinary transition."""
    drawn: list[DTransition] = [d.transitions[t] for t in transitions]
    if any(is_failure_end(d.states[x]) for t in drawn for x in t.targets[:1]):
        return ERROR
    if drawn and all(t.timer is not None for t in drawn):
        return TIMER
    return None


@dataclass(frozen=True, slots=True)
class LegendEntry:
    """One meaning of the legend: a sign in its colour, and words."""

    glyph: str
    colour: str
    words: str


REGION_ENTRY = LegendEntry("▭", REGION_BORDER, "tinted, dashed: a region (runs in parallel)")
FINAL_ENTRY = LegendEntry("◎", FINAL, "final state")
ERROR_ENTRY = LegendEntry("→", ERROR, "into a failed or cancelled end")
TIMER_ENTRY = LegendEntry("→", TIMER, "timer (after, at)")
HISTORY_ENTRY = LegendEntry("H", HISTORY, "history")
OUTSIDE_ENTRY = LegendEntry("→", MUTED, "between regions, or outside the drawing")


def legend_table(entries: list[LegendEntry]) -> str:
    """The legend as one row of an HTML-like table (or "" without entries): a cell per
    sign and per words, so that no line of text mixes two colours (an SVG viewer whose
    font is narrower or wider than Graphviz measured would open gaps or overlaps)."""
    if not entries:
        return ""
    cells = "".join(
        f'<TD><FONT COLOR="{e.colour}">{html(e.glyph)}</FONT></TD>'
        f'<TD ALIGN="LEFT">{html(e.words)}</TD><TD WIDTH="8"></TD>'
        for e in entries
    )
    return (
        '<TABLE BORDER="0" CELLBORDER="0" CELLSPACING="0" CELLPADDING="1"><TR>'
        f'<TD ALIGN="LEFT"><FONT COLOR="{MUTED}">legend:</FONT></TD><TD WIDTH="6"></TD>'
        f"{cells}</TR></TABLE>"
    )
