"""The docs page says what the chart says (through `statekit docs`, read with markdown-it):
sections for producers, race decisions, idempotency keys and named timers; each
invariant's status is the one `statekit explain` proves; an eventless transition shows
its condition and no rejection reason."""

from __future__ import annotations

import json
from pathlib import Path

from chart_helpers import RACE_CLASSES_YAML
from cli_process import statekit
from markdown_it import MarkdownIt

CHART = """\
statechart: shipment
version: 1
context: {picked: {type: boolean, default: false}}
events:
  PICKED_UP: {shipment_id: string, at: integer}
  CANCEL: {}
  CHECK: {}
producers: {carrier: [PICKED_UP], customer: [CANCEL]}
idempotency: {PICKED_UP: [shipment_id, at]}
races:
  cancel_vs_pickup:
    events: [CANCEL, PICKED_UP]
    decision: Whichever commits first wins.
  cancel_vs_expiry:
    events: [CANCEL, "after(grace)@waiting"]
    decision: A cancel before the grace period ends wins.
initial: waiting
invariants:
  one_place:
    assert: >-
      active('waiting') or active('moving') or active('moving_on')
      or active('cancelled') or active('expired')
  picked_flag:
    assert: ctx.picked or not active('moving')
states:
  waiting:
    on:
      PICKED_UP: {to: moving, do: [{assign: {picked: "event.at > 0"}}]}
      CANCEL: cancelled
    after:
      - {id: grace, delay: 2d, to: expired}
  moving:
    always:
      - {if: ctx.picked, to: moving_on}
    on: {CHECK: moving}
    reject: {CANCEL: ALREADY_MOVING}
  moving_on: {final: true}
  cancelled: {final: true}
  expired: {final: true}
"""


def _sections(page: str) -> dict[str, list[list[str]]]:
    """Each `##`/`###` heading's table rows (header first) or paragraphs, as text cells."""
    out: dict[str, list[list[str]]] = {}
    current: list[list[str]] = []
    row: list[str] | None = None
    tokens = MarkdownIt("commonmark").enable("table").parse(page)
    for i, token in enumerate(tokens):
        if token.type == "heading_open":
            current = out.setdefault(tokens[i + 1].content, [])
        elif token.type == "tr_open":
            row = []
        elif token.type == "tr_close" and row is not None:
            current.append(row)
            row = None
        elif token.type == "inline" and row is not None:
            row.append("".join(c.content for c in token.children or ()))
        elif token.type == "inline" and tokens[i - 1].type == "paragraph_open":
            current.append([token.content])
    return out


def _page(tmp_path: Path) -> dict[str, list[list[str]]]:
    (tmp_path / "shipment.yaml").write_text(CHART, encoding="utf-8")
    done = statekit("docs", "shipment.yaml", "-o", "site", cwd=tmp_path)
    assert done.returncode in (0, 1), done.stderr  # 1: no Graphviz for the SVGs
    return _sections((tmp_path / "site" / "shipment.md").read_text(encoding="utf-8"))


def test_the_page_has_the_charts_policies(tmp_path: Path) -> None:
    page = _page(tmp_path)
    assert page["Producers"][1:] == [["carrier", "PICKED_UP"], ["customer", "CANCEL"]]
    races = {row[0]: row[1:] for row in page["Race decisions"][1:]}
    assert races == {
        "cancel_vs_pickup": ["CANCEL · PICKED_UP", "everywhere", "Whichever commits first wins."],
        "cancel_vs_expiry": [
            "CANCEL · after(grace)@waiting",
            "everywhere",
            "A cancel before the grace period ends wins.",
        ],
    }
    assert page["Idempotency keys"][1:] == [["PICKED_UP", "shipment_id, at"]]
    assert page["Named timers"][1:] == [["grace", "waiting", "after 2d", "after(grace)@waiting"]]


def test_an_invariants_status_is_the_one_explain_proves(tmp_path: Path) -> None:
    # `picked` is assigned a comparison, which the analysis leaves abstract (a literal
    # would make it a tracked field, `moving` never stable, and the invariant proven).
    page = _page(tmp_path)
    explained = statekit("explain", "shipment.yaml", "--format", "json", cwd=tmp_path)
    statuses = {i["name"]: i["status"] for i in json.loads(explained.stdout)["invariants"]}
    assert statuses == {"one_place": "proven", "picked_flag": "runtime"}
    checked = {row[0]: row[1] for row in page["Invariants"][1:]}
    assert checked["one_place"].startswith("proven: holds in all ")
    assert checked["picked_flag"].startswith("at runtime")


def test_an_eventless_transition_shows_no_rejection_reason(tmp_path: Path) -> None:
    rows = _page(tmp_path)["Transitions"]
    header, body = rows[0], rows[1:]
    (always,) = [r for r in body if r[header.index("on")] == "always"]
    assert always[header.index("guard")] == "ctx.picked"
    guarded = [r[header.index("guard")] for r in body if r[header.index("guard")]]
    assert all("else" not in g for g in guarded)  # nor does any event of this chart
    page = (tmp_path / "site" / "shipment.md").read_text(encoding="utf-8")
    assert "GUARD_FAILED" not in page


def test_a_chart_without_policies_says_so(tmp_path: Path) -> None:
    plain = "statechart: plain\ninitial: a\nstates: {a: {final: true}}\n"
    (tmp_path / "plain.yaml").write_text(plain, encoding="utf-8")
    statekit("docs", "plain.yaml", "-o", "site", cwd=tmp_path)
    page = _sections((tmp_path / "site" / "plain.md").read_text(encoding="utf-8"))
    for title in ("Producers", "Race decisions", "Idempotency keys", "Named timers"):
        assert page[title] == [["None declared."]]


def test_the_race_section_lists_the_convergent_pairs(tmp_path: Path) -> None:
    # A and B move independent regions (convergent); C moves `left` too, so A and C
    # differ in an answer (info) and are not listed as convergent.
    (tmp_path / "regions.yaml").write_text(RACE_CLASSES_YAML, encoding="utf-8")
    done = statekit("docs", "regions.yaml", "-o", "site", cwd=tmp_path)
    assert done.returncode in (0, 1), done.stderr
    page = (tmp_path / "site" / "regions.md").read_text(encoding="utf-8")
    section = page.split("## Race decisions", 1)[1].split("\n## ", 1)[0]
    assert "None declared." in section
    listed = [line for line in section.splitlines() if line.startswith("- ")]
    assert listed == ["- `A` · `B`", "- `B` · `C`"]
