"""How wide a drawing of a chart will be, estimated from the chart alone (no Graphviz run).

`dot` stacks states in ranks from the top and puts the label of an edge in a
rank of its own between its ends; a drawing is as wide as its widest rank.
The estimate follows that: in each compound state, its children are ranked by
the longest path from the initial state along transitions (edges leading
back left out), each edge's label sits on the rank mid-way between its ends
and takes a little room on the ranks it passes, and a rank's width is the sum
of its items' widths; a composite child counts with its own estimate, the
regions of a parallel state side by side (or in rows, `region_rows`). Text
widths are the average glyph widths of Helvetica at the drawing's sizes.

The estimate decides two things that must not depend on how `dot` behaves:
whether `--split auto` draws an overview plus one drawing per composite
state, and where the regions of a parallel state wrap into a second row. It
is deterministic and errs on the wide side.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass

from statekit.compiler.ir import StateKind
from statekit.diagrams.dot_text import LONGEST_WORD, label_rows, wrap_lines
from statekit.diagrams.model import Diagram, DState, EffectDetail

PAGE_WIDTH = 1200.0
"""The width a drawing should fit, in points: 1,600 px at 96 dpi, a page or a laptop screen."""
LABEL_CHAR = 4.3
"""Average width of a lower-case letter (or a narrow sign) of a 9 pt label, in points;
capitals, digits, `_` and the bold event line take more (`text_width`)."""
NAME_CHAR = 7.0
"""Average width of a character of an 11 pt bold state name, in points."""
_WIDE = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_mw")
GAP = 9.0
"""The space `dot` leaves between neighbours of a rank (nodesep 0.12 in)."""
MARGIN = 16.0
"""What a cluster adds around its contents, both sides together."""
PASSING = 8.0
"""What an edge takes on a rank it passes through (besides the gap on either side)."""
WIDE_SIDE = 1.25
"""How much wider than estimated a region may come out (the estimate ranks states as a
breadth-first walk does; dot's crossing reduction spreads them further): regions are
packed into a row as if they were this much wider, so that a row fits the page."""


@dataclass(frozen=True, slots=True)
class Sizing:
    """What the estimate needs to know of the drawing: label wrap and effects shown."""

    wrap: int
    effects: EffectDetail


def text_width(rows: list[str], char: float = LABEL_CHAR) -> float:
    """The width of the widest line, plus the label's padding (the first line is bold)."""
    widths = [
        sum(1.3 if c in _WIDE else 1.0 for c in row) * char * (1.08 if index == 0 else 1.0)
        for index, row in enumerate(rows)
    ]
    return max(widths, default=0.0) + 12.0


class _Estimator:
    def __init__(self, d: Diagram, sizing: Sizing) -> None:
        self.d, self.sizing = d, sizing
        self.memo: dict[int, float] = {}

    def label_width(self, tid: int) -> float:
        t = self.d.transitions[tid]
        effects = t.effects_label(self.sizing.effects)
        return text_width(label_rows(t.trigger, t.guard_text(), effects, "", self.sizing.wrap))

    def node_width(self, state: DState) -> float:
        if state.is_composite:
            return self.width(state.id) + MARGIN
        if state.kind is StateKind.HISTORY:
            return 24.0
        name = len(state.name) * NAME_CHAR + 24.0
        if state.kind is StateKind.FINAL:
            name += 20.0  # the double circle around the name
        body = [f"entry / {e.short}" for e in state.entry]
        body += [f"exit / {e.short}" for e in state.exit]
        own = [self.d.transitions[t].trigger for t in state.transitions]
        rows = [r for text in body for r in wrap_lines(text, self.sizing.wrap, LONGEST_WORD)]
        loops = [
            self.label_width(t)
            for t in state.transitions
            if self.d.transitions[t].targets == (state.id,)
        ]
        return max(name, text_width(rows)) + sum(loops) + (8.0 if own else 0.0)

    def width(self, state_id: int) -> float:
        """The estimated width of a composite state's contents, in points."""
        if state_id not in self.memo:
            state = self.d.states[state_id]
            if state.kind is StateKind.PARALLEL:
                rows = self.rows(state)
                found = max(
                    sum(self.node_width(self.d.states[r]) for r in row) + GAP * (len(row) - 1)
                    for row in rows
                )
            else:
                found = self.compound_width(state)
            title = len(state.name) * NAME_CHAR + 24.0
            self.memo[state_id] = max(found, title)
        return self.memo[state_id]

    def rows(self, state: DState) -> list[list[int]]:
        """The regions of a parallel state in rows no wider than the page, in order."""
        rows: list[list[int]] = [[]]
        used = 0.0
        for region in state.children:
            width = self.node_width(self.d.states[region]) * WIDE_SIDE
            if rows[-1] and used + GAP + width > PAGE_WIDTH:
                rows.append([])
                used = 0.0
            used += width + (GAP if rows[-1] else 0.0)
            rows[-1].append(region)
        return rows

    def child_of(self, state: DState, inner: int) -> int | None:
        """The child of `state` that is or holds `inner` (None: outside `state`)."""
        if not state.contains(inner):
            return None
        return next(a for a in self.d.ancestry(inner) if self.d.states[a].parent == state.id)

    def compound_width(self, state: DState) -> float:
        """Children ranked as `ranks` does; each edge's label on the rank mid-way."""
        edges: dict[int, list[tuple[int, int]]] = defaultdict(list)
        for t in self.d.transitions:
            source = self.child_of(state, t.source)
            if source is None or not t.targets:
                continue
            target = self.child_of(state, t.targets[0])
            if target is not None and target != source:
                edges[source].append((target, t.id))
        rank = _ranks(state, edges)
        bottom = max(rank.values(), default=0)
        for c in state.children:  # final states are drawn on the lowest rank together
            if self.d.states[c].kind is StateKind.FINAL:
                rank[c] = bottom
        widths: dict[tuple[int, int], list[float]] = defaultdict(list)
        for c in state.children:
            widths[(rank[c], 0)].append(self.node_width(self.d.states[c]))
            for target, tid in edges[c]:
                low, high = sorted((rank[c], rank[target]))
                between = (low + high - 1) // 2 if high > low else low  # mid-way, as dot does
                widths[(between, 1)].append(self.label_width(tid))
                for passed in range(low, high):  # the edge passes the ranks between its ends
                    if passed > low:
                        widths[(passed, 0)].append(PASSING)
                    if passed != between:
                        widths[(passed, 1)].append(PASSING)
        return max((sum(items) + GAP * (len(items) - 1) for items in widths.values()), default=0.0)


def _ranks(state: DState, edges: dict[int, list[tuple[int, int]]]) -> dict[int, int]:
    """Children ranked by the longest path from the initial state, edges that lead back
    (to a state on the way there) left out: what dot's ranking gives a chart's flow."""
    start = [c for c in state.initial if c in state.children] or list(state.children[:1])
    order: list[int] = []
    back: set[tuple[int, int]] = set()
    seen: set[int] = set()
    on_path: set[int] = set()

    def visit(node: int) -> None:
        seen.add(node)
        on_path.add(node)
        for target, _ in edges[node]:
            if target in on_path:
                back.add((node, target))
            elif target not in seen:
                visit(target)
        on_path.discard(node)
        order.append(node)

    for root in [*start, *state.children]:
        if root not in seen:
            visit(root)
    rank = dict.fromkeys(state.children, 0)
    for node in reversed(order):  # a topological order of the edges kept
        for target, _ in edges[node]:
            if (node, target) not in back:
                rank[target] = max(rank[target], rank[node] + 1)
    return rank


def estimated_width(d: Diagram, sizing: Sizing) -> float:
    """The estimated width, in points, of the whole chart drawn with every label."""
    return _Estimator(d, sizing).width(0) + MARGIN


def region_rows(d: Diagram, parallel: int, sizing: Sizing) -> list[list[int]]:
    """The regions of a parallel state in rows that each fit `PAGE_WIDTH`, in document
    order: side by side while they fit, then on a new row below."""
    return _Estimator(d, sizing).rows(d.states[parallel])
