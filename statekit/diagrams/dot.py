"""Graphviz DOT text for a view, built as text (deterministic, fast, no Graphviz needed).

Drawing conventions: a compound state is a rounded cluster with its name and
a small filled dot for its initial state; the regions of a parallel state
are dashed clusters side by side (edges between regions do not constrain
the ranks); a final state is a double circle; a history state an `H`/`H*`
circle with a dashed edge to its default. Transitions on a compound state
start or end on its cluster's border (`compound=true`, `ltail`/`lhead`).
Edge labels read `EVENT [guard] / effects`, wrapped to `wrap` characters.
Targetless transitions, entry and exit effects are listed inside the state;
a transition that leaves and re-enters a cluster is listed in its label
with `↻`. `already`/`reject` entries form a compact table beside the chart
and the invariants a note.
"""

from __future__ import annotations

from collections import defaultdict

from statekit.compiler.ir import HistoryKind, StateKind
from statekit.compiler.terminal_text import is_unsafe
from statekit.diagrams.model import DState, DTransition
from statekit.diagrams.views import EdgeKind, View, ViewEdge

FONT = "Helvetica"
WRAP = 36
UNTESTED_MARK = "✗ untested"
"""The last label line of a marked (untested) transition: readable without colour."""
MARKED_EDGE = 'class="untested", color="#c62828", fontcolor="#c62828", style="dashed,bold"'
"""The attributes of a marked edge."""
NOTE_WRAP = 64
CELL = '<TABLE BORDER="0" CELLBORDER="0" CELLSPACING="0" CELLPADDING="0">'
TABLE = '<TABLE BORDER="0" CELLBORDER="1" CELLSPACING="0" CELLPADDING="3">'


# Controls draw as a space; a surrogate or a noncharacter (which Graphviz refuses: "in label
# of node") as U+FFFD, the replacement character.
_CONTROL: dict[str, str] = {
    **{chr(code): " " for code in (*range(0x20), *range(0x7F, 0xA0))},
    **{chr(code): "\ufffd" for code in range(0xD800, 0xE000)},
    **{chr(code): "\ufffd" for code in range(0xFDD0, 0xFDF0)},
    **{
        chr(plane + low): "\ufffd"
        for plane in range(0, 0x110000, 0x10000)
        for low in (0xFFFE, 0xFFFF)
    },
}
_HTML = str.maketrans({**_CONTROL, "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;"})
_QUOTED = str.maketrans({**_CONTROL, "\n": "\\n", "\\": "\\\\", '"': '\\"'})


def html(text: str) -> str:
    """Escape text for a Graphviz HTML-like label: the one escaping function of DOT labels
    (controls become spaces, surrogates and noncharacters U+FFFD, format characters such
    as a bidirectional override entity references, so the DOT text is safe on a terminal)."""
    return _entities(text.translate(_HTML))


def quoted(text: str) -> str:
    """A DOT double-quoted string (for tooltips and ids): backslashes and quotes escaped, lines
    kept, other characters as `html` writes them."""
    return '"' + _entities(text.translate(_QUOTED)) + '"'


def _entities(text: str) -> str:
    if text.isprintable():
        return text
    return "".join(f"&#{ord(c)};" if c != "\n" and is_unsafe(c) else c for c in text)


def wrap_lines(text: str, width: int) -> list[str]:
    """`text` in lines of at most `width` characters (greedy, at spaces; long words cut)."""
    lines: list[str] = []
    line = ""
    for word in text.split():
        while len(word) > width:
            if line:
                lines.append(line)
                line = ""
            lines.append(word[:width])
            word = word[width:]
        if not line:
            line = word
        elif len(line) + 1 + len(word) <= width:
            line += " " + word
        else:
            lines.append(line)
            line = word
    if line or not lines:
        lines.append(line)
    return lines


def _lines(texts: str | list[str], width: int) -> str:
    """Each text wrapped and escaped, all lines joined with `<BR/>`."""
    texts = [texts] if isinstance(texts, str) else texts
    return "<BR/>".join(html(line) for text in texts for line in wrap_lines(text, width))


def _transition_line(t: DTransition, recurring: bool) -> str:
    parts = [("↻ " if recurring else "") + t.trigger]
    if t.guards:
        parts.append(f"[{t.guard_text()}]")
    if t.effects:
        parts.append(f"/ {t.effects_text()}")
    return " ".join(parts)


class _Writer:
    def __init__(
        self,
        view: View,
        wrap: int,
        classifications: bool,
        invariants: bool,
        marked: frozenset[int] = frozenset(),
    ) -> None:
        self.view, self.d, self.wrap = view, view.diagram, wrap
        self.marked = marked
        self.classifications, self.invariants = classifications, invariants
        self.out: list[str] = []
        # Labelled edges go through a small text node, so that dot places labels like
        # nodes: no label overlaps another or sits on an edge. Edges between regions keep
        # an ordinary label (a node would pull the regions together).
        self.heads = {edge.target for edge in view.edges}
        self.label_node: dict[int, str] = {}
        self.labels_in: dict[int | None, list[tuple[str, ViewEdge]]] = defaultdict(list)
        for index, edge in enumerate(view.edges):
            if edge.label is not None and not edge.cross_region:
                name = f"l{index}"
                self.label_node[index] = name
                self.labels_in[self.container(edge)].append((name, edge))

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

    # -- labels ----------------------------------------------------------
    def body(self, state: DState) -> list[str]:
        rows = [f"entry / {e.short}" for e in state.entry]
        rows += [f"exit / {e.short}" for e in state.exit]
        rows += [_transition_line(t, bool(t.targets)) for t in self.view.internal(state)]
        return rows

    def state_label(self, state: DState, title: str) -> str:
        rows = [f"<TR><TD><B>{_lines(title, self.wrap)}</B></TD></TR>"]
        body = self.body(state) if self.view.labels else []
        if body:
            rows.append("<HR/>")
            rows += [
                f'<TR><TD ALIGN="LEFT" BALIGN="LEFT"><FONT POINT-SIZE="9">{_lines(body, self.wrap)}'
                "</FONT></TD></TR>"
            ]
        table = '<TABLE BORDER="0" CELLBORDER="0" CELLSPACING="0" CELLPADDING="1">'
        return f"<{table}{''.join(rows)}</TABLE>>"

    def edge_label(self, edge: ViewEdge) -> str:
        assert edge.label is not None
        lines = wrap_lines(edge.label.text(), self.wrap)
        trigger = edge.label.trigger
        first = html(lines[0])
        if lines[0] == trigger or lines[0].startswith(trigger + " "):
            first = f"<B>{html(trigger)}</B>{html(lines[0][len(trigger) :])}"
        rest = [html(x) for x in lines[1:]]
        if self.is_marked(edge):
            rest.append(f"<I>{UNTESTED_MARK}</I>")
        return "<" + "<BR/>".join([first, *rest]) + ">"

    def is_marked(self, edge: ViewEdge) -> bool:
        """Whether the edge draws a transition in `marked` (an untested one)."""
        return edge.kind is not EdgeKind.INITIAL and any(t in self.marked for t in edge.transitions)

    # -- graph -----------------------------------------------------------
    def node(self, state: DState, indent: str) -> None:
        sid = f"s{state.id}"
        if state.kind is StateKind.HISTORY:
            mark = "H*" if state.history is HistoryKind.DEEP else "H"
            self.out.append(
                f'{indent}{sid} [shape=circle, label="{mark}", width=0.32, fixedsize=true, '
                f"fontsize=10, tooltip={quoted(state.path)}];"
            )
        elif state.kind is StateKind.FINAL:
            name = html(state.name)
            self.out.append(
                f"{indent}{sid} [shape=doublecircle, margin=0.02, label=<<B>{name}</B>>];"
            )
            body = self.body(state) if self.view.labels else []
            together = [sid]
            if body:
                # A text node beside the circle (a circle grows with its text, and an
                # xlabel may sit on an edge): dot routes edges around nodes.
                self.out.append(
                    f"{indent}n{state.id} [shape=plaintext, margin=0.02, width=0, height=0, "
                    f'label=<{CELL}<TR><TD BALIGN="LEFT"><FONT POINT-SIZE="9">'
                    f"{_lines(body, self.wrap)}</FONT></TD></TR></TABLE>>];"
                )
                self.out.append(f"{indent}{sid} -> n{state.id} [style=invis];")
                together.append(f"n{state.id}")
            # A final state entered only from other regions would float to the top of
            # its region: keep it at the bottom, where final states are read.
            rank = "same" if state.id in self.heads else "max"
            if len(together) > 1 or rank == "max":
                self.out.append(f"{indent}{{rank={rank}; {'; '.join(together)};}}")
        elif state.id in self.view.collapsed:
            inner = state.last_descendant - state.id
            label = (
                f'<<B>{html(state.name)}</B><BR/><FONT POINT-SIZE="9">{inner} states inside</FONT>>'
            )
            self.out.append(
                f'{indent}{sid} [style="rounded,filled,bold", fillcolor="#eeeeee", label={label}];'
            )
        else:
            self.out.append(f"{indent}{sid} [label={self.state_label(state, state.name)}];")

    def cluster(self, state: DState, indent: str) -> None:
        style = "rounded,dashed" if state.region else "rounded"
        self.out.append(f"{indent}subgraph cluster_{state.id} {{")
        inner = indent + "  "
        self.out.append(
            f'{inner}label={self.state_label(state, state.name)}; labeljust="l"; style="{style}"; '
            "peripheries=1; fontsize=11;"
        )
        self.contents(state, inner)
        self.out.append(f"{indent}}}")

    def contents(self, state: DState, indent: str) -> None:
        if state.kind is StateKind.COMPOUND and (state.id in self.view.clusters or state.id == 0):
            self.out.append(f'{indent}i{state.id} [shape=point, width=0.11, label=""];')
        for child_id in state.children:
            child = self.d.states[child_id]
            if child_id in self.view.clusters:
                self.cluster(child, indent)
            elif child_id in self.view.nodes:
                self.node(child, indent)
        if state.kind is StateKind.PARALLEL:
            self.side_by_side(state, indent)
        self.label_nodes(state.id, indent)

    def side_by_side(self, state: DState, indent: str) -> None:
        """Keep the regions of a parallel state in document order, left to right.

        dot orders sibling clusters as crossing minimisation finds them (often in
        reverse), and ignores flat edges between clusters; a row of invisible
        points above the regions, each with an edge into its region, does hold.
        """
        regions = [c for c in state.children if self.view.drawn(c)]
        if len(regions) < 2:
            return
        spine = [f"h{r}" for r in regions]
        for name in spine:
            self.out.append(f"{indent}{name} [shape=point, style=invis, width=0, height=0];")
        self.out.append(f"{indent}{{rank=same; {'; '.join(spine)};}}")
        self.out.append(f"{indent}{' -> '.join(spine)} [style=invis];")
        for name, region in zip(spine, regions, strict=True):
            self.out.append(f"{indent}{name} -> {self.anchor(region)} [style=invis];")

    def label_nodes(self, container: int | None, indent: str) -> None:
        for name, edge in self.labels_in.get(container, ()):
            colour = ', class="untested", fontcolor="#c62828"' if self.is_marked(edge) else ""
            self.out.append(
                f'{indent}{name} [shape=plaintext, margin="0.08,0.05", height=0, width=0, '
                f"label={self.edge_label(edge)}{colour}];"
            )

    def container(self, edge: ViewEdge) -> int | None:
        """The innermost drawn cluster holding both ends (None: the top level)."""
        source = edge.initial_of if edge.source is None else edge.source
        assert source is not None
        if edge.stub_source or edge.stub_target:
            return None
        for state_id in self.d.ancestry(self.d.common_ancestor(source, edge.target)):
            if state_id in self.view.clusters:
                return state_id
        return None

    def clip(self, cluster: int | None, other: int | None, inner: int | None) -> int | None:
        """`cluster` for ltail/lhead unless it holds the other end or the label node."""
        if cluster is None:
            return None
        states = self.d.states
        for held in (other, inner):
            if held is not None and (held == cluster or states[cluster].contains(held)):
                return None
        return cluster

    def edge(self, index: int, edge: ViewEdge) -> None:
        if edge.kind is EdgeKind.INITIAL:
            assert edge.initial_of is not None
            tail, tail_cluster, source = f"i{edge.initial_of}", None, edge.initial_of
        else:
            assert edge.source is not None
            tail, source = self.anchor(edge.source), edge.source
            tail_cluster = edge.source if edge.source in self.view.clusters else None
        head = self.anchor(edge.target)
        head_cluster = edge.target if edge.target in self.view.clusters else None
        common: list[str] = []
        if edge.kind is EdgeKind.HISTORY:
            common.append("style=dashed, arrowhead=vee")
        if edge.tooltip:
            common.append(f"tooltip={quoted(edge.tooltip)}")
        if edge.cross_region:
            common.append("constraint=false")
        if edge.stub_source or edge.stub_target:
            common.append('color="#777777"')
        if self.is_marked(edge):
            common.append(MARKED_EDGE)
        if index in self.label_node:
            inner = self.container(edge)
            name = self.label_node[index]
            first = [*common, "arrowhead=none"]
            if (cluster := self.clip(tail_cluster, edge.target, inner)) is not None:
                first.append(f"ltail=cluster_{cluster}")
            second = list(common)
            if (cluster := self.clip(head_cluster, source, inner)) is not None:
                second.append(f"lhead=cluster_{cluster}")
            self.out.append(f"  {tail} -> {name} [{', '.join(first)}];")
            self.out.append(
                f"  {name} -> {head}" + (f" [{', '.join(second)}]" if second else "") + ";"
            )
            return
        attrs = list(common)
        if edge.label is not None:
            attrs.append(f"label={self.edge_label(edge)}")
        if (cluster := self.clip(tail_cluster, edge.target, None)) is not None:
            attrs.append(f"ltail=cluster_{cluster}")
        if (cluster := self.clip(head_cluster, source, None)) is not None:
            attrs.append(f"lhead=cluster_{cluster}")
        self.out.append(f"  {tail} -> {head}" + (f" [{', '.join(attrs)}]" if attrs else "") + ";")

    def stub(self, state_id: int) -> None:
        path = self.d.states[state_id].path
        self.out.append(
            f'    x{state_id} [style="rounded,dashed", color="#777777", fontcolor="#555555", '
            f"label=<{html(path)}>, tooltip={quoted('outside: ' + path)}];"
        )

    def classification_table(self) -> str:
        """`already`/`reject` entries of the drawn states, as an HTML table (or "")."""
        rows = []
        for state in self.d.states:
            if not self.view.drawn(state.id) or not (state.already or state.reject):
                continue
            by_reason: dict[str, list[str]] = defaultdict(list)
            for event, reason in state.reject:
                by_reason[reason].append(event)
            texts = [f"already: {', '.join(state.already)}"] if state.already else []
            texts += [f"{reason}: {', '.join(events)}" for reason, events in by_reason.items()]
            cell = _lines(texts, NOTE_WRAP)
            rows.append(
                f'<TR><TD ALIGN="LEFT" VALIGN="TOP">{html(state.ref)}</TD>'
                f'<TD ALIGN="LEFT" BALIGN="LEFT">{cell}</TD></TR>'
            )
        if not rows:
            return ""
        head = '<TR><TD COLSPAN="2"><B>already / reject</B></TD></TR>'
        return f"{TABLE}{head}{''.join(rows)}</TABLE>"

    def invariant_table(self) -> str:
        """The invariants as an HTML table (or "")."""
        if not self.d.invariants:
            return ""
        rows = [
            f'<TR><TD ALIGN="LEFT" VALIGN="TOP">{html(i.name)}</TD>'
            f'<TD ALIGN="LEFT" BALIGN="LEFT">{_lines(i.text, NOTE_WRAP)}</TD></TR>'
            for i in self.d.invariants
        ]
        head = '<TR><TD COLSPAN="2"><B>invariants</B></TD></TR>'
        return f"{TABLE}{head}{''.join(rows)}</TABLE>"

    def title(self) -> str:
        """The title, with the invariants as a table below it (root views with labels)."""
        name = html(self.view.title)
        title = f'<TR><TD ALIGN="LEFT"><FONT POINT-SIZE="14"><B>{name}</B></FONT></TD></TR>'
        if self.view.labels and self.invariants and self.view.focus == 0 and self.d.invariants:
            title += f'<TR><TD ALIGN="LEFT">{self.invariant_table()}</TD></TR>'
        return f'<<TABLE BORDER="0" CELLSPACING="4" CELLPADDING="0">{title}</TABLE>>'

    def legend(self) -> str:
        """The `already`/`reject` table below the chart, as the graph label (or "")."""
        table = self.classification_table() if self.view.labels and self.classifications else ""
        return f", labelloc=b, labeljust=l, label=<{table}>" if table else ""

    def write(self) -> str:
        view, d = self.view, self.d
        self.out += [
            f"// Generated by statekit from chart {d.name}: edit the chart, not this file.",
            f"digraph {quoted(d.name)} {{",
            f'  graph [compound=true, fontname="{FONT}", fontsize=9, '
            f"nodesep=0.3, ranksep=0.35, pad=0.2{self.legend()}];",
            f'  node [fontname="{FONT}", fontsize=11, shape=box, style=rounded, '
            'margin="0.1,0.04"];',
            f'  edge [fontname="{FONT}", fontsize=9, arrowsize=0.7];',
            "  subgraph cluster_chart {",
            f"    peripheries=0; labelloc=t; labeljust=l; label={self.title()};",
        ]
        focus = d.states[view.focus]
        if view.focus == 0:
            self.contents(focus, "    ")
        else:
            self.cluster(focus, "    ")
        self.label_nodes(None, "    ")
        for stub in view.stubs:
            self.stub(stub)
        self.out.append("  }")
        for index, edge in enumerate(view.edges):
            self.edge(index, edge)
        self.out.append("}")
        return "\n".join(self.out) + "\n"


def to_dot(
    view: View,
    *,
    wrap: int = WRAP,
    classifications: bool = True,
    invariants: bool = True,
    marked: frozenset[int] = frozenset(),
) -> str:
    """The DOT text of one view: same view, same bytes. Edges drawing a transition of
    `marked` (the coverage report's untested ones) are drawn red, dashed and thick, in
    the SVG class `untested`, their label ending in `UNTESTED_MARK`."""
    return _Writer(view, wrap, classifications, invariants, marked).write()
