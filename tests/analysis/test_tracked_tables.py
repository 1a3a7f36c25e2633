"""A context field assigned from a table read keyed by a tracked field is tracked exactly:
the exploration knows which values the table can give it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from cli_process import statekit

CHART = """\
statechart: tiers
context:
  priority: {enum: [low, normal, urgent], default: normal}
  lane: {enum: [slow, fast], default: slow}
events:
  ROUTE: {}
  RUSH: {}
tables:
  lane_of:
    key: ctx.priority
    value: {enum: [slow, fast]}
    entries: {low: slow, normal: slow, urgent: URGENT}
initial: open
reject: {RUSH: NOT_ROUTED}
states:
  open:
    on:
      ROUTE: {to: routed, do: [{assign: {lane: "tables.lane_of[ctx.priority]"}}]}
  routed:
    on:
      RUSH:
        - {to: rushed, if: "ctx.lane == 'fast'"}
        - {to: closed}
    already: [ROUTE]
  rushed: {final: true}
  closed: {final: true}
"""


def _slugs(tmp_path: Path, urgent: str) -> list[str]:
    path = tmp_path / "tiers.yaml"
    path.write_text(CHART.replace("URGENT", urgent), encoding="utf-8")
    done = statekit("lint", str(path), "--format", "json")
    return sorted(d["slug"] for d in json.loads(done.stdout)["diagnostics"])


@pytest.mark.parametrize(
    ("urgent", "slugs"),
    [
        ("fast", []),  # urgent instances are routed fast: `rushed` is reachable
        ("slow", ["unreachable-state", "unreachable-transition"]),  # no entry gives fast
    ],
)
def test_a_field_assigned_from_a_table_takes_only_the_tables_values(
    tmp_path: Path, urgent: str, slugs: list[str]
) -> None:
    assert _slugs(tmp_path, urgent) == slugs
