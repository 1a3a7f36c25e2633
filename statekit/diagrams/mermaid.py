"""Mermaid `stateDiagram-v2` text for a view (what GitHub renders from a fenced block).

Mermaid cannot draw a transition between states of different composite
states, so each edge is written in the block of the innermost composite
holding both ends and drawn between the children of that block that hold
them; the label then names the real source or target. Edges between two
regions of a parallel state cannot be drawn at all and are left out (the
Graphviz drawing and the transition table show them). Labels are
`EVENT [guard]` without effects, to keep the block readable on one line.

Mermaid's layout fails on an edge to or from a composite state drawn inside
a parallel state's regions (`Cannot set properties of undefined (setting
'rank')`, mermaid-js/mermaid#4052; GitHub's renderer fails the same way),
whatever the depth, unless something else in the drawing happens to steer its
layout clear (a note beside a region does). So the rule is structural: every
parallel state around a composite state that an edge starts or ends on is
written without Mermaid's region separators (`--`); its regions are dashed
composite boxes side by side (class `region`) and its name is followed by
`(parallel)`. Every edge stays drawn, on the composite's border; only the
separators' shading is lost.

A final state gets the end marker (`sN --> [*]`) in its block. A targetless
transition (no exit, no entry) is listed rather than drawn: a self-loop would
read as leaving and re-entering the state, which is what a targetless
transition does not do. It is written as UML writes an internal transition,
`EVENT [guard] / effects`, inside the state's box (a description line) for a
simple state, and in a note beside the box for a composite state (Mermaid
refuses a description on one); the chart root's own go in a note on its
initial marker. A transition that leaves and re-enters a composite state (an
edge cannot loop on a composite) is listed in that note too, as `↻ EVENT
[guard] / effects`. The DOT drawing lists them in the same words. A state's
`invoke:` entries are listed the same way, first: `invoke payment → payment`
(Mermaid's state diagrams have no links: the page's table of invoked charts
links to each child's page).

An edge label longer than `LABEL_WRAP` characters is broken into lines of at
most that many (`<br>` between them), at spaces, and a word longer than that
after a `.`, `_`, `-`, `(`, `,` or `/` inside it, or cut: Mermaid fits a label into
200 pixels, wraps it only at spaces, and clips a word wider than that (the
clipped label then runs into its neighbours, whose places were laid out for
the unclipped one).

Text from the chart is written with Mermaid's entity codes (`#58;` for `:`)
wherever Mermaid's grammar would read it as syntax: `:` and `;` end a label,
`"` ends a state name, `%%` starts a comment, `#` starts an entity, braces
and angle brackets are structure or HTML, and a line holding the word
`direction` followed by TB/BT/LR/RL is taken as a direction statement.
"""

from __future__ import annotations

import re
import unicodedata
from collections import defaultdict

from statekit.compiler.ir import HistoryKind, StateKind
from statekit.compiler.terminal_text import is_noncharacter, is_unsafe
from statekit.diagrams.model import DState
from statekit.diagrams.views import EdgeKind, EdgeLabel, View, ViewEdge

_SPECIAL = re.compile(r'[#:;"%<>&{}]')
_DIRECTION = re.compile(r"(?i)(directio)(n)(?=\s)")

CLASS_DEFS = (
    "classDef final stroke-width:3px",
    "classDef history fill:#ffffff",
    "classDef collapsed fill:#eeeeee,stroke-width:2px",
    "classDef stub stroke-dasharray:4 3,color:#555555",
)
REGION_CLASS_DEF = "classDef region stroke-dasharray:5 5"
"""The dashed box of a region of a parallel state written without separators."""
PARALLEL_MARK = " (parallel)"
"""Follows the name of a parallel state written without separators."""


def escape(text: str) -> str:
    """Text made safe for a Mermaid label or state name (entity codes, one line): the one
    escaping function of Mermaid text. Mermaid's own characters and every character a
    terminal could act on (`is_unsafe`) become entity codes (`#27;`); a surrogate or a
    noncharacter the replacement character's (`#65533;`)."""
    text = " ".join(text.split())
    text = _SPECIAL.sub(lambda m: f"#{ord(m.group())};", text)
    if not text.isprintable():
        text = "".join(_entity(c) if is_unsafe(c) else c for c in text)
    return _DIRECTION.sub(lambda m: f"{m.group(1)}#{ord(m.group(2))};", text)


def _entity(char: str) -> str:
    if is_noncharacter(char) or unicodedata.category(char) == "Cs":
        return "#65533;"
    return f"#{ord(char)};"


LABEL_WRAP = 24
"""An edge label's lines have at most this many characters (Mermaid's 200 pixels)."""
_BREAK_AFTER = re.compile(r"(?<=[._\-(,/])")


def _pieces(word: str, width: int) -> list[str]:
    """A word in pieces of at most `width` characters, broken after punctuation where
    it has some, else cut."""
    pieces: list[str] = []
    for part in _BREAK_AFTER.split(word):
        while len(part) > width:
            pieces.append(part[:width])
            part = part[width:]
        if pieces and len(pieces[-1]) + len(part) <= width:
            pieces[-1] += part
        elif part:
            pieces.append(part)
    return pieces


def label_lines(text: str, width: int = LABEL_WRAP) -> list[str]:
    """An edge label in lines of at most `width` characters: filled word by word, a word
    longer than `width` broken (`_pieces`) with its pieces on lines of their own."""
    lines: list[str] = []
    for word in text.split():
        pieces = _pieces(word, width) if len(word) > width else [word]
        for index, piece in enumerate(pieces):
            whole = index == 0 and lines and len(lines[-1]) + 1 + len(piece) <= width
            if whole:
                lines[-1] += " " + piece
            else:
                lines.append(piece)
    return lines or [""]


_TOP = -1


def view_is_root(view: View) -> bool:
    """Whether the view's top level is the chart's root (not a composite's own drawing)."""
    return view.focus == 0


class _Writer:
    def __init__(self, view: View) -> None:
        self.view, self.d = view, view.diagram
        self.out: list[str] = []
        self.classes: dict[str, list[str]] = defaultdict(list)
        self.blocks: dict[int, list[str]] = defaultdict(list)
        touched: set[int] = set()
        for edge in view.edges:
            placed = self.place(edge)
            if placed is not None:
                block, line, ends = placed
                self.blocks[block].append(line)
                touched.update(end for end in ends if end in view.clusters)
        self.undivided = self.around_parallel(touched)

    def around_parallel(self, composites: set[int]) -> set[int]:
        """The parallel states written as blocks that hold one of `composites` at any
        depth: Mermaid cannot lay out an edge on a composite inside regions (#4052)."""
        found = set()
        for state_id in composites:
            parent = self.d.states[state_id].parent
            while parent is not None:
                written = parent in self.view.clusters or parent == self.view.focus
                if written and self.d.states[parent].kind is StateKind.PARALLEL:
                    found.add(parent)
                parent = self.d.states[parent].parent
        return found

    def title(self, state_id: int, name: str) -> str:
        """A block's name, marked when it is a parallel state written without separators."""
        return escape(name + (PARALLEL_MARK if state_id in self.undivided else ""))

    def targetless(self, state: DState) -> list[str]:
        """`EVENT [guard] / effects` of the transitions the view lists inside the state:
        its targetless ones and, on a composite, `↻ ` and those that re-enter it; its
        invocations first."""
        return [i.text() for i in self.d.invocations_of(state.id)] + [
            ("↻ " if t.targets else "")
            + EdgeLabel(t.trigger, t.guard_text(), t.effects_text()).text()
            for t in self.view.internal(state)
        ]

    def note(self, sid: str, lines: list[str], indent: str) -> None:
        if lines:
            self.out.append(f"{indent}note right of {sid}")
            # a line starts with an event name, so it is never the `end note` that closes it
            self.out.extend(f"{indent}  {escape(line)}" for line in lines)
            self.out.append(f"{indent}end note")

    def name(self, state_id: int) -> str:
        return f"s{state_id}" if self.view.drawn(state_id) else f"x{state_id}"

    def parent(self, state_id: int) -> int:
        """The drawn block holding a state (`_TOP` for the top level)."""
        view = self.view
        if state_id == view.focus or state_id in view.stubs:
            return _TOP
        parent = self.d.states[state_id].parent
        return _TOP if parent is None or parent == 0 else parent

    def chain(self, state_id: int) -> list[int]:
        chain = [state_id]
        while chain[-1] != _TOP:
            chain.append(self.parent(chain[-1]))
        return chain

    def place(self, edge: ViewEdge) -> tuple[int, str, tuple[int, ...]] | None:
        """(block, line, the states the line joins) of an edge, or None when Mermaid
        cannot draw it."""
        if edge.kind is EdgeKind.INITIAL:
            assert edge.initial_of is not None
            block = _TOP if edge.initial_of == 0 else edge.initial_of
            target = self.chain(edge.target)
            child = target[target.index(block) - 1] if block in target else edge.target
            return block, f"[*] --> {self.name(child)}", ()
        assert edge.source is not None
        a, b = self.chain(edge.source), self.chain(edge.target)
        common = next(x for x in a if x in b)
        block = self.parent(common) if common in (edge.source, edge.target) else common
        holder = 0 if block == _TOP and view_is_root(self.view) else block
        if holder != _TOP and self.d.states[holder].kind is StateKind.PARALLEL:
            return None  # between two regions
        tail = a[a.index(block) - 1] if block in a else a[-2]
        head = b[b.index(block) - 1] if block in b else b[-2]
        label = ""
        if edge.label is not None:
            text = edge.label.text(effects=False)
            # the view's note already names an end it does not draw, more precisely
            named = {part.split(" ", 1)[0] for part in edge.label.note.split("; ")}
            notes = []
            if tail != edge.source and "from" not in named:
                notes.append(f"from {self.d.states[edge.source].ref}")
            if head != edge.target and "to" not in named:
                notes.append(f"to {self.d.states[edge.target].ref}")
            lines = label_lines(text + (f" ({'; '.join(notes)})" if notes else ""))
            label = " : " + "<br>".join(escape(line) for line in lines)
        return block, f"{self.name(tail)} --> {self.name(head)}{label}", (tail, head)

    def declare(self, state: DState, indent: str) -> None:
        sid = self.name(state.id)
        if state.kind is StateKind.HISTORY:
            mark = "H*" if state.history is HistoryKind.DEEP else "H"
            self.out.append(f'{indent}state "{mark}" as {sid}')
            self.classes["history"].append(sid)
            return
        if state.id in self.view.clusters:
            self.block(state, indent)
            return
        label = state.name
        if state.id in self.view.collapsed:
            label += f" ({state.last_descendant - state.id} states inside)"
            self.classes["collapsed"].append(sid)
        elif state.kind is StateKind.FINAL:
            self.classes["final"].append(sid)
        self.out.append(f'{indent}state "{escape(label)}" as {sid}')
        self.out.extend(f"{indent}{sid} : {escape(line)}" for line in self.targetless(state))

    def contents(self, state: DState, indent: str, block: int) -> None:
        children = [c for c in state.children if self.view.drawn(c)]
        if state.kind is StateKind.PARALLEL and state.id in self.undivided:
            for child in children:
                self.declare(self.d.states[child], indent)
            self.classes["region"].extend(self.name(child) for child in children)
        elif state.kind is StateKind.PARALLEL:
            for index, child in enumerate(children):
                if index:
                    self.out.append(f"{indent}--")
                self.declare(self.d.states[child], indent)
        else:
            for child in children:
                self.declare(self.d.states[child], indent)
        self.out.extend(f"{indent}{line}" for line in self.blocks.get(block, ()))
        for child in children:
            if child in self.view.nodes and self.d.states[child].kind is StateKind.FINAL:
                self.out.append(f"{indent}{self.name(child)} --> [*]")

    def block(self, state: DState, indent: str) -> None:
        sid = self.name(state.id)
        self.out.append(f'{indent}state "{self.title(state.id, state.name)}" as {sid} {{')
        self.contents(state, indent + "  ", state.id)
        self.out.append(f"{indent}}}")
        self.note(sid, self.targetless(state), indent)

    def write(self) -> str:
        view, d = self.view, self.d
        self.out.append("stateDiagram-v2")
        focus = d.states[view.focus]
        if view.focus == 0 and focus.kind is StateKind.COMPOUND:
            self.contents(focus, "  ", _TOP)
            self.note("[*]", self.targetless(focus), "  ")
        else:
            if view.focus == 0:  # a parallel root: one composite holding the regions
                self.out.append(f'  state "{self.title(0, d.name)}" as s0 {{')
                self.contents(focus, "    ", _TOP)
                self.out.append("  }")
                self.out.append("  [*] --> s0")
                self.note("s0", self.targetless(focus), "  ")
            else:
                self.block(focus, "  ")
                self.out.extend(f"  {line}" for line in self.blocks.get(_TOP, ()))
            for stub in view.stubs:
                self.out.append(f'  state "{escape(d.states[stub].path)}" as x{stub}')
                self.classes["stub"].append(f"x{stub}")
        self.out.extend(f"  {c}" for c in CLASS_DEFS)
        if self.classes["region"]:
            self.out.append(f"  {REGION_CLASS_DEF}")
        for cls in ("final", "history", "collapsed", "stub", "region"):
            if self.classes[cls]:
                self.out.append(f"  class {','.join(self.classes[cls])} {cls}")
        return "\n".join(self.out) + "\n"


def to_mermaid(view: View) -> str:
    """The Mermaid `stateDiagram-v2` text of one view: same view, same bytes."""
    return _Writer(view).write()
