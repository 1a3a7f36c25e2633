"""Graphviz DOT text for a view, built as text (deterministic, fast, no Graphviz needed).

Drawing conventions: a compound state is a rounded cluster with its name and
a small filled dot for its initial state; the regions of a parallel state
are tinted, dashed clusters side by side, wrapping into rows below when they
would not fit a page (`estimate.region_rows`; edges between regions do not
constrain the ranks); a final state is a double circle; a history state an
`H`/`H*` circle with a dashed edge to its default. Transitions on a compound
state start or end on its cluster's border (`compound=true`, `ltail`/`lhead`):
they enter at its top, and leave a cluster of simple states from its bottom.
Colours carry meaning and a legend names those a drawing uses (`palette`).

An edge's label sits next to it (Graphviz's own edge label, placed beside
the edge's middle, in the SVG group of its edge): the event in bold on its
own line, then `[guard]`, `/ effects` (as much as `View.effects` asks) and a
note, each wrapped to `wrap` characters, one table row per line so that
lines never touch. Targetless transitions, entry and exit effects are listed
inside the state; a transition that leaves and re-enters a cluster is listed
in its label with `↻`. `already`/`reject` entries form a table below the
chart, after the invariants (`dot_notes`); the title and the legend are above.
A state's `invoke:` entries are boxes (`shape=component`) beside a simple
state, joined to it by a dotted line, or inside a composite state's cluster;
a box whose child chart has a page (`statekit docs`) links to it (`URL`, a
link in the SVG).
"""

from __future__ import annotations

from statekit.compiler.ir import HistoryKind, StateKind
from statekit.diagrams import palette
from statekit.diagrams.dot_invocations import invocation_boxes
from statekit.diagrams.dot_notes import classification_table, invariant_table
from statekit.diagrams.dot_text import LONGEST_WORD, WRAP, html, quoted, wrap_lines
from statekit.diagrams.estimate import Sizing, region_rows
from statekit.diagrams.model import DState, DTransition, effects_label
from statekit.diagrams.views import EdgeKind, View, ViewEdge

__all__ = ["MARKED_EDGE", "UNTESTED_MARK", "WRAP", "html", "quoted", "to_dot", "wrap_lines"]

FONT = "Helvetica"
UNTESTED_MARK = "✗ untested"
"""The last label line of a marked (untested) transition: readable without colour."""
UNTESTED = "#c62828"
MARKED_EDGE = f'class="untested", color="{UNTESTED}", fontcolor="{UNTESTED}", style="dashed,bold"'
"""The attributes of a marked edge."""
_ROWS = '<TABLE BORDER="0" CELLBORDER="0" CELLSPACING="0" CELLPADDING="1">'


def _row_table(rows: list[str], first_bold: bool = False, red: frozenset[int] = frozenset()) -> str:
    """Escaped lines as table rows, left-aligned (the first in bold; those at the indices
    `red` in the colour of an untested transition)."""
    cells = []
    for index, row in enumerate(rows):
        text = html(row)
        if first_bold and index == 0:
            text = f"<B>{text}</B>"
        if index in red:
            text = f'<FONT COLOR="{UNTESTED}">{text}</FONT>'
        cells.append(f'<TR><TD ALIGN="LEFT">{text}</TD></TR>')
    return f"{_ROWS}{''.join(cells)}</TABLE>"


def _transition_line(t: DTransition, recurring: bool, view: View) -> str:
    parts = [("↻ " if recurring else "") + t.trigger]
    if t.guards:
        parts.append(f"[{t.guard_text()}]")
    if effects := effects_label(t.effects, view.effects):
        parts.append(f"/ {effects}")
    return " ".join(parts)


class _Writer:
    def __init__(
        self,
        view: View,
        wrap: int,
        classifications: bool,
        invariants: bool,
        marked: frozenset[int] = frozenset(),
        tagged: bool = False,
    ) -> None:
        self.view, self.d, self.wrap = view, view.diagram, wrap
        self.marked, self.tagged = marked, tagged
        self.classifications, self.invariants = classifications, invariants
        self.out: list[str] = []
        self.heads = {edge.target for edge in view.edges}
        self.legend: set[palette.LegendEntry] = set()

    # -- names -----------------------------------------------------------
    def anchor(self, state_id: int) -> str:
        """The node an edge to this drawn state aims at (inside it, for a cluster)."""
        if state_id in self.view.nodes:
            return f"s{state_id}"
        if state_id not in self.view.clusters:
            return f"x{state_id}"
        state = self.d.states[state_id]
        if state.kind is StateKind.COMPOUND:
            return f"i{state_id}"
        regions = [c for c in state.children if self.view.drawn(c)]
        return f"h{regions[0]}" if len(regions) > 1 else self.anchor(regions[0])

    def has_exit_point(self, state: DState) -> bool:
        """Whether edges leave this cluster from a point on its lowest rank: a compound
        cluster of simple states only (edges enter it at the top and leave at the bottom,
        instead of pulling its top up to their targets' ranks; around nested clusters the
        point would push their siblings apart)."""
        return (
            state.id in self.view.clusters
            and state.kind is StateKind.COMPOUND
            and not any(c in self.view.clusters for c in state.children)
        )

    def exit_anchor(self, state_id: int) -> str:
        """The node an edge from this drawn state starts at (`has_exit_point`)."""
        if self.has_exit_point(self.d.states[state_id]):
            return f"o{state_id}"
        return self.anchor(state_id)

    # -- labels ----------------------------------------------------------
    def body(self, state: DState) -> tuple[list[str], frozenset[int]]:
        """The lines listed inside a state (entry and exit effects, then its internal
        transitions), and the indices of those that belong to a `marked` transition (an
        untested one: drawn red, its last line `UNTESTED_MARK`)."""
        detail = self.view.effects
        rows = [f"entry / {text}" for e in state.entry if (text := effects_label((e,), detail))]
        rows += [f"exit / {text}" for e in state.exit if (text := effects_label((e,), detail))]
        lines = [line for row in rows for line in wrap_lines(row, self.wrap, LONGEST_WORD)]
        red: set[int] = set()
        for t in self.view.internal(state):
            text = _transition_line(t, bool(t.targets), self.view)
            own = wrap_lines(text, self.wrap, LONGEST_WORD)
            if t.id in self.marked:
                own.append(UNTESTED_MARK)
                red.update(range(len(lines), len(lines) + len(own)))
            lines += own
        return lines, frozenset(red)

    def state_label(self, state: DState, title: str) -> str:
        rows = [f"<TR><TD><B>{html(title)}</B></TD></TR>"]
        body, red = self.body(state) if self.view.labels else ([], frozenset[int]())
        if body:
            rows.append("<HR/>")
            rows.append(
                f'<TR><TD ALIGN="LEFT"><FONT POINT-SIZE="9">{_row_table(body, red=red)}'
                "</FONT></TD></TR>"
            )
        table = '<TABLE BORDER="0" CELLBORDER="0" CELLSPACING="0" CELLPADDING="1">'
        return f"<{table}{''.join(rows)}</TABLE>>"

    def edge_label(self, edge: ViewEdge) -> str:
        assert edge.label is not None
        rows = edge.label.rows(self.wrap)
        if self.is_marked(edge):
            rows.append(UNTESTED_MARK)
        return f"<{_row_table(rows, first_bold=True)}>"

    def is_marked(self, edge: ViewEdge) -> bool:
        """Whether the edge draws a transition in `marked` (an untested one)."""
        return edge.kind is not EdgeKind.INITIAL and any(t in self.marked for t in edge.transitions)

    # -- graph -----------------------------------------------------------
    def tag(self, state: DState) -> str:
        """`, class="state s_<id>"` for a tagged drawing (`to_dot`), else ""."""
        return f', class="state s_{state.id}"' if self.tagged else ""

    def node(self, state: DState, indent: str) -> None:
        sid = f"s{state.id}"
        if state.kind is StateKind.HISTORY:
            mark = "H*" if state.history is HistoryKind.DEEP else "H"
            self.legend.add(palette.HISTORY_ENTRY)
            self.out.append(
                f'{indent}{sid} [shape=circle, label="{mark}", width=0.32, fixedsize=true, '
                f'fontsize=10, style=filled, color="{palette.HISTORY}", '
                f'fillcolor="{palette.HISTORY_FILL}", fontcolor="{palette.HISTORY}", '
                f"tooltip={quoted(state.path)}{self.tag(state)}];"
            )
        elif state.kind is StateKind.FINAL:
            self.final(state, indent)
        elif state.id in self.view.collapsed:
            inner = state.last_descendant - state.id
            label = (
                f'<<B>{html(state.name)}</B><BR/><FONT POINT-SIZE="9">{inner} states inside</FONT>>'
            )
            self.out.append(
                f'{indent}{sid} [style="rounded,filled,bold", fillcolor="#eceff1", '
                f"label={label}{self.tag(state)}];"
            )
        else:
            self.out.append(
                f"{indent}{sid} [label={self.state_label(state, state.name)}{self.tag(state)}];"
            )

    def final(self, state: DState, indent: str) -> None:
        sid = f"s{state.id}"
        failed = palette.is_failure_end(state)
        colour, fill = (
            (palette.ERROR, palette.ERROR_FILL) if failed else (palette.FINAL, palette.FINAL_FILL)
        )
        self.legend.add(palette.ERROR_ENTRY if failed else palette.FINAL_ENTRY)
        body, red = self.body(state) if self.view.labels else ([], frozenset[int]())
        table = _row_table(body, red=red)
        xlabel = f', xlabel=<<FONT POINT-SIZE="9">{table}</FONT>>' if body else ""
        # The effects beside the circle, placed after the layout (a circle grows with
        # its text, and a text node beside it would widen the drawing).
        self.out.append(
            f"{indent}{sid} [shape=doublecircle, margin=0.02, style=filled, "
            f'color="{colour}", fillcolor="{fill}", label=<<B>{html(state.name)}</B>>{xlabel}'
            f"{self.tag(state)}];"
        )
        # A final state entered only from other regions would float to the top of
        # its region: keep it at the bottom, where final states are read.
        if state.id not in self.heads:
            self.out.append(f"{indent}{{rank=max; {sid};}}")

    def cluster(self, state: DState, indent: str) -> None:
        if state.region:
            self.legend.add(palette.REGION_ENTRY)
            style = (
                f'style="rounded,dashed,filled"; color="{palette.REGION_BORDER}"; '
                f'fillcolor="{palette.region_fill(self.d, state)}";'
            )
        else:
            style = f'style="rounded,filled"; color="{palette.INK}"; fillcolor="#ffffff";'
        self.out.append(f"{indent}subgraph cluster_{state.id} {{")
        inner = indent + "  "
        self.out.append(
            f'{inner}label={self.state_label(state, state.name)}; labeljust="l"; {style} '
            "peripheries=1; fontsize=11;" + (f' class="state s_{state.id}";' if self.tagged else "")
        )
        self.contents(state, inner)
        self.out.append(f"{indent}}}")

    def contents(self, state: DState, indent: str) -> None:
        if state.kind is StateKind.COMPOUND and (state.id in self.view.clusters or state.id == 0):
            self.out.append(
                f'{indent}i{state.id} [shape=point, width=0.11, label="", '
                f'fillcolor="{palette.INK}"];'
            )
        if self.has_exit_point(state):
            self.out.append(f"{indent}o{state.id} [shape=point, style=invis, width=0, height=0];")
            self.out.append(f"{indent}{{rank=max; o{state.id};}}")
        if state.id in self.view.clusters or state.id == self.view.focus:
            self.out.extend(invocation_boxes(self.d, state, indent, beside=False))
        for child_id in state.children:
            child = self.d.states[child_id]
            if child_id in self.view.clusters:
                self.cluster(child, indent)
            elif child_id in self.view.nodes:
                self.node(child, indent)
                if child_id not in self.view.collapsed:
                    self.out.extend(invocation_boxes(self.d, child, indent, beside=True))
        if state.kind is StateKind.PARALLEL:
            self.side_by_side(state, indent)

    def side_by_side(self, state: DState, indent: str) -> None:
        """Keep the regions of a parallel state in document order, left to right, in rows.

        dot orders sibling clusters as crossing minimisation finds them (often in
        reverse), and ignores flat edges between clusters; a row of invisible
        points above the regions, each with an edge into its region, does hold.
        A later row's points hang below every state of the row above it.
        """
        regions = [c for c in state.children if self.view.drawn(c)]
        if len(regions) < 2:
            return
        sizing = Sizing(self.wrap, self.view.effects)
        rows = [[r for r in row if r in regions] for row in region_rows(self.d, state.id, sizing)]
        above: list[str] = []
        for row in (r for r in rows if r):
            spine = [f"h{r}" for r in row]
            for name in spine:
                self.out.append(f"{indent}{name} [shape=point, style=invis, width=0, height=0];")
            if len(spine) > 1:
                self.out.append(f"{indent}{{rank=same; {'; '.join(spine)};}}")
                self.out.append(f"{indent}{' -> '.join(spine)} [style=invis];")
            for name, region in zip(spine, row, strict=True):
                self.out.append(f"{indent}{name} -> {self.anchor(region)} [style=invis];")
            for tail in above:
                self.out.append(f"{indent}{tail} -> {spine[0]} [style=invis];")
            drawn = sorted(self.view.nodes)
            above = [f"s{s}" for r in row for s in drawn if self.d.states[r].contains(s)]

    def clip(self, cluster: int | None, other: int | None) -> int | None:
        """`cluster` for ltail/lhead unless it holds the other end."""
        if cluster is None:
            return None
        if other is not None and (other == cluster or self.d.states[cluster].contains(other)):
            return None
        return cluster

    def edge_style(self, edge: ViewEdge) -> list[str]:
        """The attributes that say what kind of edge it is (colour, dashes, tooltip)."""
        attrs: list[str] = []
        if edge.kind is EdgeKind.HISTORY:
            attrs.append(f'style=dashed, arrowhead=vee, color="{palette.HISTORY}"')
        if edge.tooltip:
            attrs.append(f"tooltip={quoted(edge.tooltip)}")
        if edge.cross_region:
            attrs.append("constraint=false")
        tags = ""
        if self.tagged and edge.kind is EdgeKind.TRANSITION:
            tags = "transition " + " ".join(f"t_{t}" for t in edge.transitions)
        if self.is_marked(edge):
            marked = MARKED_EDGE.replace('class="untested"', f'class="untested {tags}"')
            attrs.append(marked if tags else MARKED_EDGE)
            return attrs
        if tags:
            attrs.append(f'class="{tags}"')
        colour = None
        if edge.stub_source or edge.stub_target or edge.cross_region:
            colour = palette.MUTED
            self.legend.add(palette.OUTSIDE_ENTRY)
        elif edge.kind is EdgeKind.TRANSITION:
            colour = palette.edge_colour(self.d, edge.transitions)
            if colour == palette.TIMER:
                self.legend.add(palette.TIMER_ENTRY)
        if colour is not None:
            attrs.append(f'color="{colour}", fontcolor="{colour}"')
        return attrs

    def edge(self, edge: ViewEdge) -> None:
        if edge.kind is EdgeKind.INITIAL:
            assert edge.initial_of is not None
            tail, tail_cluster, source = f"i{edge.initial_of}", None, edge.initial_of
        else:
            assert edge.source is not None
            tail, source = self.exit_anchor(edge.source), edge.source
            tail_cluster = edge.source if edge.source in self.view.clusters else None
        head = self.anchor(edge.target)
        head_cluster = edge.target if edge.target in self.view.clusters else None
        attrs = self.edge_style(edge)
        if edge.label is not None:
            attrs.append(f"label={self.edge_label(edge)}")
        elif edge.events:  # an overview keeps the events
            attrs.append(f"label=<{_row_table(wrap_lines(', '.join(edge.events), self.wrap))}>")
        if (cluster := self.clip(tail_cluster, edge.target)) is not None:
            attrs.append(f"ltail=cluster_{cluster}")
        if (cluster := self.clip(head_cluster, source)) is not None:
            attrs.append(f"lhead=cluster_{cluster}")
        self.out.append(f"  {tail} -> {head}" + (f" [{', '.join(attrs)}]" if attrs else "") + ";")

    def stub(self, state_id: int) -> None:
        path = self.d.states[state_id].path
        self.out.append(
            f'    x{state_id} [style="rounded,dashed", color="{palette.MUTED}", '
            f'fontcolor="#555555", label=<{html(path)}>, tooltip={quoted("outside: " + path)}];'
        )

    def title(self) -> str:
        """The title and, under it, the legend of the colours the drawing uses."""
        name = html(self.view.title)
        title = f'<TR><TD ALIGN="LEFT"><FONT POINT-SIZE="14"><B>{name}</B></FONT></TD></TR>'
        order = [
            palette.REGION_ENTRY,
            palette.FINAL_ENTRY,
            palette.ERROR_ENTRY,
            palette.TIMER_ENTRY,
            palette.HISTORY_ENTRY,
            palette.OUTSIDE_ENTRY,
        ]
        legend = palette.legend_table([e for e in order if e in self.legend])
        if legend:
            title += f'<TR><TD ALIGN="LEFT">{legend}</TD></TR>'
        return f'<<TABLE BORDER="0" CELLSPACING="4" CELLPADDING="0">{title}</TABLE>>'

    def notes(self) -> str:
        """The invariants (root views with labels) and the `already`/`reject` table below
        the chart, as the graph label (or "")."""
        tables = []
        if self.view.labels and self.invariants and self.view.focus == 0:
            tables.append(invariant_table(self.d))
        if self.view.labels and self.classifications:
            tables.append(classification_table(self.view))
        rows = "".join(f'<TR><TD ALIGN="LEFT">{t}</TD></TR>' for t in tables if t)
        if not rows:
            return ""
        table = f'<TABLE BORDER="0" CELLSPACING="6" CELLPADDING="0">{rows}</TABLE>'
        return f", labelloc=b, labeljust=l, label=<{table}>"

    def write(self) -> str:
        view, d = self.view, self.d
        body: list[str] = []
        self.out = body
        focus = d.states[view.focus]
        if view.focus == 0:
            self.contents(focus, "    ")
        else:
            self.cluster(focus, "    ")
        for stub in view.stubs:
            self.stub(stub)
        edges: list[str] = []
        self.out = edges
        for edge in view.edges:
            self.edge(edge)
        head = [
            f"// Generated by statekit from chart {d.name}: edit the chart, not this file.",
            f"digraph {quoted(d.name)} {{",
            f'  graph [compound=true, fontname="{FONT}", fontsize=9, '
            f"nodesep=0.12, ranksep=0.3, pad=0.2{self.notes()}];",
            f'  node [fontname="{FONT}", fontsize=11, shape=box, style="rounded,filled", '
            f'fillcolor="#ffffff", color="{palette.INK}", margin="0.1,0.04"];',
            f'  edge [fontname="{FONT}", fontsize=8.5, arrowsize=0.7, color="{palette.INK}"];',
            "  subgraph cluster_chart {",
            f"    peripheries=0; labelloc=t; labeljust=l; label={self.title()};",
        ]
        return "\n".join([*head, *body, "  }", *edges, "}"]) + "\n"


def to_dot(
    view: View,
    *,
    wrap: int = WRAP,
    classifications: bool = True,
    invariants: bool = True,
    marked: frozenset[int] = frozenset(),
    tagged: bool = False,
) -> str:
    """The DOT text of one view: same view, same bytes. Edges drawing a transition of
    `marked` (the coverage report's untested ones) are drawn red, dashed and thick, in
    the SVG class `untested`, their label ending in `UNTESTED_MARK`; a marked transition
    listed inside its state (a targetless one) is written there in red, followed by a
    line `UNTESTED_MARK`. `tagged` puts SVG classes on what the drawing shows (the layout
    is the same), for a page to highlight: `state s_<id>` on each state's node or
    cluster, `transition t_<id> ...` on each edge, one `t_<id>` per transition it draws
    (ids as in the IR)."""
    return _Writer(view, wrap, classifications, invariants, marked, tagged).write()
