"""Definitions and table reads are understood by the analysis as the written-out forms are:
`lint` and `explain` give the same answers for a chart written with `define:` and `tables:`
and for the same chart written out with nested conditionals."""

from __future__ import annotations

import json
import re
from pathlib import Path

from cli_process import statekit

NAMED = """\
statechart: escalation
context:
  priority: {enum: [low, normal, urgent], default: normal}
  reopened: {type: integer, default: 0}
events:
  ESCALATE: {}
  REOPEN: {days: integer}
  CLOSE: {}
define:
  instant: "tables.grace_days[ctx.priority] == 0"
  window: "tables.grace_days[ctx.priority] * 7 + 13"
tables:
  grace_days:
    key: ctx.priority
    value: integer
    entries: {low: 3, normal: 1, urgent: 0}
initial: open
reject: {REOPEN: NOT_CLOSED}
states:
  open:
    on:
      ESCALATE:
        - {to: escalated, if: "instant"}
        - {to: waiting}
      CLOSE: closed
  waiting:
    on:
      ESCALATE:
        - {to: closed, if: "tables.grace_days[ctx.priority] > 5"}
        - {to: escalated}
      CLOSE: closed
  escalated:
    on: {CLOSE: closed}
    already: [ESCALATE]
  closed:
    on:
      REOPEN:
        - to: open
          if: "event.days == window and event.days > 30"
          do: [{assign: {reopened: "ctx.reopened + 1"}}]
        - {to: closed}
    already: [ESCALATE, CLOSE]
"""
GRACE = "(3 if ctx.priority == 'low' else 1 if ctx.priority == 'normal' else 0)"
WRITTEN = re.sub(r"define:\n(?:  .*\n)+tables:\n(?:  .*\n)+", "", NAMED)
WRITTEN = WRITTEN.replace('"instant"', f'"{GRACE} == 0"').replace("window", f"{GRACE} * 7 + 13")
WRITTEN = WRITTEN.replace("tables.grace_days[ctx.priority]", GRACE)
SOURCES = {"named.yaml": NAMED, "written.yaml": WRITTEN}


def _json(tmp_path: Path, command: str, name: str) -> dict[str, object]:
    path = tmp_path / name
    path.write_text(SOURCES[name], encoding="utf-8")
    done = statekit(command, str(path), "--format", "json")
    assert done.returncode in (0, 1), done.stderr
    data = json.loads(done.stdout)
    assert isinstance(data, dict)
    return data


def _normalised(data: object, name: str) -> str:
    """The JSON text with the file name and each guard's source replaced by placeholders."""
    text = json.dumps(data, sort_keys=True).replace(name, "<file>")
    for written, named in (
        (f"{GRACE} == 0", "instant"),
        (f"event.days == {GRACE} * 7 + 13", "event.days == window"),
        (f"{GRACE} > 5", "tables.grace_days[ctx.priority] > 5"),
    ):
        text = text.replace(written, named)
    return text


def test_the_written_out_chart_has_no_definition_or_table() -> None:
    assert "tables" not in WRITTEN and "define" not in WRITTEN and "window" not in WRITTEN


def test_explain_answers_the_same_for_both_forms(tmp_path: Path) -> None:
    named, written = (_json(tmp_path, "explain", n) for n in SOURCES)
    assert _normalised(named, "named.yaml") == _normalised(written, "written.yaml")
    reopening = [
        answer["assuming"][0]
        for configuration in named["configurations"]  # type: ignore[attr-defined]
        for answer in configuration["events"]["REOPEN"]
        if answer.get("target") == ["open"]
    ]
    # days == grace * 7 + 13 and days > 30 holds for some days only when grace is 3: the
    # solver reads the table (and the written-out conditional) exactly, per priority
    assert reopening == ["ctx.priority = 'low'"]


def test_lint_finds_the_same_for_both_forms(tmp_path: Path) -> None:
    named, written = (_json(tmp_path, "lint", n) for n in SOURCES)

    def findings(data: dict[str, object], name: str) -> list[tuple[str, str]]:
        found = data["diagnostics"]
        assert isinstance(found, list)
        return sorted((d["slug"], _normalised(d["message"], name)) for d in found)

    found = findings(named, "named.yaml")
    assert found == findings(written, "written.yaml")
    assert [slug for slug, _ in found] == ["unreachable-transition"]  # grace_days > 5 never holds
