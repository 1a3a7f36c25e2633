"""How a drawing reads: colours by meaning and their legend, labels beside their edges,
`--effects`, regions in rows, the `auto` split, and widths measured from a real `dot` run."""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from itertools import pairwise
from pathlib import Path

import pytest
from chart_helpers import chart_of, dot_program  # noqa: F401  (a fixture)
from diagram_charts import labels, sink

from statekit.compiler.pipeline import compile_file
from statekit.diagrams import palette
from statekit.diagrams.dot import to_dot
from statekit.diagrams.estimate import PAGE_WIDTH, Sizing, estimated_width
from statekit.diagrams.layout import render
from statekit.diagrams.model import Diagram, EffectDetail, extract
from statekit.diagrams.views import Split, needs_split, plan_views, whole_view

ROOT = Path(__file__).resolve().parents[2]
SVG = "{http://www.w3.org/2000/svg}"
needs_dot = pytest.mark.usefixtures("dot_program")
PX_PER_PT = 96 / 72
FAN = 18

COLOURED = """
    statechart: coloured
    events: {PAY: {}, FAIL: {}}
    context:
      a: {type: integer, default: 0}
      b: {type: integer, default: 0}
    initial: waiting
    states:
      waiting:
        after: [{delay: 15m, to: expired}]
        on:
          PAY:
            to: paid
            do: [{assign: {a: 1, b: 2}}, {emit: {type: Paid}}]
          FAIL: failed
      paid: {final: true}
      expired: {final: true}
      failed: {final: true}
"""


def domain(name: str) -> Diagram:
    result = compile_file(ROOT / "tests" / "charts" / "domain" / f"{name}.yaml")
    assert result.chart is not None
    return extract(result.chart)


def machine(name: str) -> Diagram:
    result = compile_file(ROOT / "machines" / f"{name}.yaml")
    assert result.chart is not None
    return extract(result.chart)


def edge_line(dot: str, trigger: str) -> str:
    return next(x for x in dot.splitlines() if f"<B>{trigger}</B>" in x and " -> " in x)


def test_colours_follow_the_kind_of_state_and_transition() -> None:
    d = extract(chart_of(COLOURED))
    dot = to_dot(whole_view(d))
    ids = {s.path: f"s{s.id}" for s in d.states}
    lines = [x.strip() for x in dot.splitlines()]
    node = {p: next(x for x in lines if x.startswith(f"{n} [")) for p, n in ids.items() if p}
    assert f'color="{palette.FINAL}"' in node["paid"]  # an ordinary end: green
    for failed in ("failed", "expired"):  # an end whose name says it failed: vermillion
        assert f'color="{palette.ERROR}"' in node[failed]
    assert f'color="{palette.ERROR}"' in edge_line(dot, "FAIL")  # the path into it too
    assert f'color="{palette.ERROR}"' in edge_line(dot, "after 15m")  # error wins over timer
    assert "color=" not in edge_line(dot, "PAY").split("label=")[0]  # ink for the rest


def test_timers_history_and_regions_have_their_colours() -> None:
    d = sink()
    dot = to_dot(whole_view(d))
    again = next(s for s in d.states if s.path == "work.again")
    assert f'color="{palette.HISTORY}"' in next(
        x for x in dot.splitlines() if x.strip().startswith(f"s{again.id} [")
    )
    fills = re.findall(r'fillcolor="(#[0-9a-f]+)"; peripheries', dot)
    assert palette.REGION_FILLS[0] in fills and palette.REGION_FILLS[1] in fills
    timed = extract(chart_of(COLOURED.replace("expired", "later")))
    assert f'color="{palette.TIMER}"' in edge_line(to_dot(whole_view(timed)), "after 15m")


def test_the_legend_names_exactly_the_colours_a_drawing_uses() -> None:
    regions = to_dot(whole_view(sink()))
    title = next(x for x in regions.splitlines() if "labelloc=t" in x)
    assert "legend:" in title  # under the chart's name
    assert "region (runs in parallel)" in title and "history" in title
    assert "final state" in regions
    assert "timer (after, at)" not in regions  # the kitchen sink has no timer
    plain = to_dot(whole_view(extract(chart_of(COLOURED))))
    assert "region (runs in parallel)" not in plain
    assert "into a failed or cancelled end" in plain and "timer (after, at)" not in plain
    assert "final state" in plain


def box_distance(box: tuple[float, float, float], x: float, y: float) -> float:
    """How far (x, y) lies from a label's box: (left, top, bottom), 130 pt wide."""
    left, top, bottom = box
    dx = max(left - x, 0.0, x - (left + 130))
    dy = max(top - y, 0.0, y - bottom)
    return float((dx * dx + dy * dy) ** 0.5)


@needs_dot
@pytest.mark.parametrize("name", ["machines/task", "domain/subscription"])
def test_labels_belong_to_their_edge_and_sit_next_to_it(name: str) -> None:
    """Each edge label is in its edge's SVG group, and its box (lines from the first
    baseline to the last, the widest line at most 130 pt) lies within 80 pt of the path."""
    folder, stem = name.split("/")
    d = machine(stem) if folder == "machines" else domain(stem)
    svg = ET.fromstring(render(to_dot(whole_view(d)), "svg"))
    checked = 0
    for group in svg.iter(f"{SVG}g"):
        if group.get("class") != "edge":
            continue
        texts = list(group.iter(f"{SVG}text"))
        path = next(group.iter(f"{SVG}path"), None)
        if not texts or path is None:
            continue
        points = [float(v) for v in re.findall(r"-?\d+\.?\d*", path.get("d", ""))]
        box = (
            min(float(t.get("x", "0")) for t in texts),
            min(float(t.get("y", "0")) for t in texts) - 9,
            max(float(t.get("y", "0")) for t in texts),
        )
        near = min(
            box_distance(box, x, y) for x, y in zip(points[0::2], points[1::2], strict=False)
        )
        assert near < 80, ("".join(texts[0].itertext()), near)
        checked += 1
    assert checked >= 20


@needs_dot
def test_no_label_line_mixes_fonts_and_lines_keep_apart() -> None:
    """In the SVG every line of an edge label is one text element (a viewer whose font
    differs from the one Graphviz measured opens no gap inside a line), and the lines
    of a label are at least the font's size plus a gap apart (an underscore does not
    touch the line below)."""
    svg = ET.fromstring(render(to_dot(whole_view(machine("task"))), "svg"))
    lines = 0
    for group in svg.iter(f"{SVG}g"):
        if group.get("class") != "edge":
            continue
        texts = list(group.iter(f"{SVG}text"))
        ys = sorted(float(t.get("y", "0")) for t in texts)
        assert len(set(ys)) == len(ys), [("".join(t.itertext())) for t in texts]
        size = max((float(t.get("font-size", "0")) for t in texts), default=0.0)
        assert all(b - a >= size + 2 for a, b in pairwise(ys)), ys
        lines += len(ys)
    assert lines > 60


def test_effects_none_short_full() -> None:
    d = extract(chart_of(COLOURED))
    pay = {
        detail: next(t for t in labels(to_dot(whole_view(d, detail))) if t.startswith("PAY"))
        for detail in EffectDetail
    }
    assert pay[EffectDetail.NONE] == "PAY"
    assert pay[EffectDetail.SHORT] == "PAY / assign 2; emit Paid"
    assert pay[EffectDetail.FULL] == "PAY / assign a, b; emit Paid"


def test_render_and_docs_take_effects(tmp_path: Path) -> None:
    from cli_process import statekit

    chart = tmp_path / "coloured.yaml"
    chart.write_text(COLOURED.replace("\n    ", "\n").strip() + "\n")
    for detail, expected in (("none", ">PAY<"), ("short", "assign 2"), ("full", "assign a, b")):
        done = statekit("render", str(chart), "--format", "dot", "--effects", detail)
        assert done.returncode == 0 and expected in done.stdout, done.stderr
    bad = statekit("render", str(chart), "--format", "dot", "--effects", "some")
    assert bad.returncode == 2 and "'some' is not one of 'none', 'short', 'full'" in bad.stderr
    site = tmp_path / "site"
    docs = statekit("docs", str(chart), "-o", str(site), "--effects", "full", "--check")
    assert "missing" in docs.stdout  # the option is accepted; nothing written with --check


def test_wide_regions_wrap_into_rows_in_document_order() -> None:
    d = domain("subscription")
    dot = to_dot(whole_view(d))
    billing, entitlement, plan = (s.id for s in d.states if s.parent == 0)
    # the three regions side by side would pass the page width: the first row holds
    # billing and the regions after it that still fit, the next row the rest, in order
    rows = re.findall(r"\{rank=same; ([^}]*)\}", dot)
    assert rows == [f"h{billing}; h{entitlement};"]
    hangs = [x for x in dot.splitlines() if x.strip().endswith(f"-> h{plan} [style=invis];")]
    first_row = {f"s{s.id}" for s in d.states if d.states[billing].contains(s.id)}
    first_row |= {f"s{s.id}" for s in d.states if d.states[entitlement].contains(s.id)}
    assert {x.split(" -> ")[0].strip() for x in hangs} <= first_row and hangs


def test_auto_split_follows_the_drawing_not_the_state_count() -> None:
    sizing = Sizing(24, EffectDetail.SHORT)
    # the reference machines and the domain charts fit in one drawing
    for d in (machine("task"), machine("media_player"), domain("subscription")):
        assert not needs_split(d, sizing), d.name
        assert len(plan_views(d)) == 1
    # a chart of few states whose drawing would be far wider than a page is split
    fan = ["statechart: fan", "events: {" + ", ".join(f"E{i}: {{}}" for i in range(FAN)) + "}"]
    fan += ["initial: hub", "states:", "  hub:", "    initial: start", "    states:"]
    fan += ["      start:", "        on:"]
    fan += [
        f"          E{i}: {{to: end{i}, if: ctx.x > {i}, do: [{{assign: {{x: {i}}}}}]}}"
        for i in range(FAN)
    ]
    fan += [f"      end{i}: {{}}" for i in range(FAN)]
    fan.insert(2, "context: {x: {type: integer, default: 0}}")
    wide = extract(chart_of("\n".join(fan) + "\n"))
    assert len(wide.states) < 30
    assert estimated_width(wide, sizing) > PAGE_WIDTH
    assert needs_split(wide, sizing)
    assert [v.key for v in plan_views(wide)] == ["", "hub"]
    assert len(plan_views(wide, Split.NEVER)) == 1
    # and a chart of more states in a narrow chain is not
    chain = ["statechart: chain", "events: {NEXT: {}}", "initial: a", "states:"]
    for group in ("a", "b"):
        chain += [f"  {group}:", f"    initial: {group}0", "    states:"]
        chain += [f"      {group}{i}: {{on: {{NEXT: {group}{i + 1}}}}}" for i in range(24)]
        chain += [f"      {group}24: {{on: {{NEXT: {'b' if group == 'a' else 'a'}}}}}"]
    narrow = extract(chart_of("\n".join(chain) + "\n"))
    assert len(narrow.states) > 2 * len(wide.states)
    assert not needs_split(narrow, sizing) and len(plan_views(narrow)) == 1


def svg_width_px(svg: bytes) -> float:
    width = ET.fromstring(svg).get("width", "")
    assert width.endswith("pt"), width
    return float(width[:-2]) * PX_PER_PT


@needs_dot
@pytest.mark.parametrize(
    "name",
    [
        "machines/task",
        "machines/media_player",
        "machines/payment",
        "domain/subscription",
        "domain/support_ticket",
        "domain/shipment",
    ],
)
def test_drawings_fit_1600_px_at_the_default_settings(name: str) -> None:
    folder, stem = name.split("/")
    d = machine(stem) if folder == "machines" else domain(stem)
    (view,) = plan_views(d)
    assert svg_width_px(render(to_dot(view), "svg")) <= 1600


def test_committed_pngs_of_the_reference_machines_fit_1600_px() -> None:
    for name in ("media_player", "payment", "task"):
        png = (ROOT / "docs" / "machines" / f"{name}.png").read_bytes()
        assert png[:8] == b"\x89PNG\r\n\x1a\n"
        width = int.from_bytes(png[16:20], "big")
        assert 400 < width <= 1600, (name, width)
        page = (ROOT / "docs" / "machines" / f"{name}.md").read_text(encoding="utf-8")
        assert f"({name}.png)" in page
