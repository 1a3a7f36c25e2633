"""A chart's diagram for the inspector's pages: laid out once per chart version, then
highlighted per request by adding SVG classes.

The drawing is statekit's own (`diagrams.dot`, the whole chart, tagged: each
state's node or cluster has the classes `state s_<id>`, each edge
`transition t_<id>` per transition it draws). Graphviz lays it out once per
chart digest (it takes tens to hundreds of milliseconds, more on large
charts) and the SVG text is kept in memory. A step or a distribution is then
drawn by adding classes to that text (`before`, `after`, `taken`) and small
count badges, never by laying the chart out again: a page answers without
running `dot`, and the states do not move between steps, so the eye can
follow what changed. The stylesheet says what each class looks like.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Mapping
from dataclasses import dataclass

from statekit.diagrams.dot import to_dot
from statekit.diagrams.layout import LayoutError, render
from statekit.diagrams.model import extract
from statekit.diagrams.views import whole_view
from statekit.engine.chart import Chart

LAYOUT_TIMEOUT = 20.0
"""Seconds `dot` may take for one chart before the page says there is no diagram."""
CACHED_CHARTS = 64
"""How many charts' drawings are kept (the oldest laid out goes first)."""

_STATE_GROUP = re.compile(r'<g id="[^"]*" class="(?:node|cluster) state s_(\d+)">')
_EDGE_GROUP = re.compile(r'<g id="[^"]*" class="edge transition((?: t_\d+)+)">')
_TRANSITION = re.compile(r"t_(\d+)")
_SHAPE = re.compile(r"<(?:path|polygon|ellipse)\b[^>]*>")
_NUMBERS = re.compile(r"-?\d+(?:\.\d+)?")


@dataclass(frozen=True, slots=True)
class Drawing:
    """A chart's laid-out SVG (the `<svg>` element only), or why there is none (`problem`)."""

    svg: str | None
    problem: str | None = None


_drawings: dict[str, Drawing] = {}
_lock = threading.Lock()


def drawing(chart: Chart) -> Drawing:
    """The chart's tagged SVG, laid out on the first call for its digest and then kept."""
    with _lock:
        found = _drawings.get(chart.digest)
    if found is not None:
        return found
    # the states and transitions only: the pages show the classification and the
    # invariants as tables of their own, and the diagram's copies of them made a chart's
    # drawing two to three times as tall, too small to read when fitted to its box
    dot = to_dot(
        whole_view(extract(chart.ir)), tagged=True, classifications=False, invariants=False
    )
    try:
        svg = render(dot, "svg", timeout=LAYOUT_TIMEOUT, what=f"chart {chart.name!r}").decode()
        made = Drawing(svg[svg.find("<svg") :])
    except LayoutError as exc:
        made = Drawing(None, str(exc))
    with _lock:
        if len(_drawings) >= CACHED_CHARTS:
            _drawings.pop(next(iter(_drawings)))
        _drawings[chart.digest] = made
    return made


def highlight(
    svg: str,
    *,
    before: frozenset[int] = frozenset(),
    after: frozenset[int] = frozenset(),
    taken: frozenset[int] = frozenset(),
) -> str:
    """`svg` with `before` on the states active before a step, `after` on those active
    after it (state ids), and `taken` on the edges drawing a transition it took."""

    def state(match: re.Match[str]) -> str:
        sid = int(match.group(1))
        extra = ("before" if sid in before else "") + (" after" if sid in after else "")
        return _with_classes(match.group(0), extra)

    def edge(match: re.Match[str]) -> str:
        ids = {int(t) for t in _TRANSITION.findall(match.group(1))}
        return _with_classes(match.group(0), "taken" if ids & taken else "")

    return _EDGE_GROUP.sub(edge, _STATE_GROUP.sub(state, svg))


def with_counts(svg: str, counts: Mapping[int, int]) -> str:
    """`svg` with a count badge in the top right corner of each state in `counts` (state
    id → instances there) and the class `occupied` on it."""
    out: list[str] = []
    position = 0
    for match in _STATE_GROUP.finditer(svg):
        sid = int(match.group(1))
        count = counts.get(sid, 0)
        if not count:
            continue
        out.append(svg[position : match.start()])
        out.append(_with_classes(match.group(0), "occupied"))
        position = match.end()
        shape = _SHAPE.search(svg, position)
        box = _box(shape.group(0)) if shape is not None else None
        end = svg.find("</g>", shape.end()) if shape is not None else -1
        if box is not None and end >= 0:  # drawn last in its group: above the shapes
            right, top = box
            out.append(svg[position:end])
            out.append(
                f'<text class="count" x="{right - 4:.1f}" y="{top + 12:.1f}" '
                f'text-anchor="end">{int(count)}</text>'
            )
            position = end
    out.append(svg[position:])
    return "".join(out)


def _with_classes(tag: str, extra: str) -> str:
    extra = extra.strip()
    if not extra:
        return tag
    head, _, rest = tag.rpartition('">')
    return f'{head} {extra}">{rest}'


def _box(shape: str) -> tuple[float, float] | None:
    """The right and top edges of an SVG shape (a path's, polygon's or ellipse's)."""
    if shape.startswith("<ellipse"):
        found = {k: float(v) for k, v in re.findall(r'\b(cx|cy|rx|ry)="(-?\d+(?:\.\d+)?)"', shape)}
        if len(found) < 4:
            return None
        return found["cx"] + found["rx"], found["cy"] - found["ry"]
    attribute = re.search(r'\b(?:d|points)="([^"]*)"', shape)
    if attribute is None:
        return None
    numbers = [float(n) for n in _NUMBERS.findall(attribute.group(1))]
    xs, ys = numbers[0::2], numbers[1::2]
    if not xs or not ys:
        return None
    return max(xs), min(ys)
