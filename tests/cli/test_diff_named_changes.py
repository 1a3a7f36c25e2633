"""`statekit diff` on a chart's `tables:` and `define:` sections: a changed entry or
definition is reported by name, durations as the chart writes them, with a note on each
timer whose delay reads it (what migrating does to a timer already armed)."""

from __future__ import annotations

import json
from pathlib import Path

from cli_process import statekit
from runner_charts import write_chart

TICKET = """
statechart: ticket
version: 1
context:
  priority: {enum: [low, normal, high], default: normal}
  label: {type: string, default: ""}
events:
  ASK: {}
  REPLY: {}
define:
  budget: "tables.sla[ctx.priority]"
  grace: 2h
tables:
  sla:
    key: ctx.priority
    value: duration
    entries: {low: 3d, normal: 1d, high: 8h}
  names:
    key: string
    value: string
    entries: {a: "first"}
    default: "other"
initial: open
states:
  open:
    after:
      - {id: sla, delay: budget, to: breached}
      - {id: tail, delay: "grace + 1000", to: breached}
    on: {ASK: waiting}
  waiting:
    on: {REPLY: open}
  breached: {final: true}
"""


def _folders(tmp_path: Path) -> tuple[Path, Path]:
    for name in ("v1", "v2"):
        (tmp_path / name).mkdir(exist_ok=True)
    return tmp_path / "v1", tmp_path / "v2"


def _diff(tmp_path: Path, new_text: str, *args: str) -> list[str]:
    _folders(tmp_path)
    old = write_chart(TICKET, tmp_path / "v1", "ticket")
    new = write_chart(new_text.replace("version: 1", "version: 2"), tmp_path / "v2", "ticket")
    done = statekit("diff", *args, str(old), str(new))
    assert done.returncode == 0, done.stderr
    return done.stdout.splitlines()


def test_a_changed_table_entry_is_named_with_the_timers_that_read_it(tmp_path: Path) -> None:
    out = _diff(tmp_path, TICKET.replace("normal: 1d", "normal: 12h"))
    assert out == [
        "chart 'ticket': version 1 → 2",
        "  table-changed sla['normal']: was 1d, now 12h",
        "  timer-retimed after(sla)@open: now after budget reads tables.sla, which changed "
        "(a timer already armed: its due time is kept)",
    ]


def test_a_changed_definition_is_named_with_the_timers_that_read_it(tmp_path: Path) -> None:
    out = _diff(tmp_path, TICKET.replace("grace: 2h", "grace: 3h"))
    assert out == [
        "chart 'ticket': version 1 → 2",
        "  definition-changed grace: was 2h, now 3h",
        "  timer-retimed after(tail)@open: now after grace + 1000 reads grace, which changed "
        "(a timer already armed: its due time is kept)",
    ]


def test_a_migration_that_recomputes_the_timer_says_so(tmp_path: Path) -> None:
    migration = "migrations:\n  - from: 1\n    timers: {after(sla)@open: {due: recompute}}\n"
    out = _diff(tmp_path, TICKET.replace("normal: 1d", "normal: 12h") + migration)
    assert out[-1].endswith("(a timer already armed: its due time is recomputed)")


def test_entries_defaults_and_types_added_removed_and_changed(tmp_path: Path) -> None:
    new = TICKET.replace('entries: {a: "first"}', 'entries: {b: "first"}')
    new = new.replace('default: "other"', 'default: "else"')
    new = new.replace("  grace: 2h\n", '  grace: 2h\n  late: "budget > 0"\n')
    out = _diff(tmp_path, new)
    assert out[1:] == [
        "  table-changed names['a']: was 'first', now no entry",
        "  table-changed names['b']: was no entry, now 'first'",
        "  table-changed names default: was 'other', now 'else'",
        "  definition-added late: now budget > 0",
    ]
    value_typed = TICKET.replace("value: duration", "value: integer").replace(
        "{low: 3d, normal: 1d, high: 8h}", "{low: 3, normal: 1, high: 8}"
    )
    out = _diff(tmp_path, value_typed)
    key = "key one of 'low', 'normal', 'high'"
    assert out[1] == f"  table-changed sla: was {key}, value duration, now {key}, value integer"
    assert "  table-changed sla['normal']: was 1d, now 1" in out


def test_json_lists_the_same_changes(tmp_path: Path) -> None:
    _folders(tmp_path)
    old = write_chart(TICKET, tmp_path / "v1", "ticket")
    new_text = TICKET.replace("version: 1", "version: 2").replace("high: 8h", "high: 4h")
    new = write_chart(new_text, tmp_path / "v2", "ticket")
    done = statekit("diff", "--format", "json", str(old), str(new))
    assert done.returncode == 0, done.stderr
    changes = json.loads(done.stdout)["changes"]
    assert changes[0] == {
        "kind": "table-changed",
        "subject": "sla['high']",
        "old": "8h",
        "new": "4h",
    }
    assert changes[1]["kind"] == "timer-retimed"
    assert changes[1]["subject"] == "after(sla)@open"
    assert "tables.sla" in changes[1]["new"]


def test_an_unchanged_chart_still_reports_no_difference(tmp_path: Path) -> None:
    out = _diff(tmp_path, TICKET)
    assert out == ["chart 'ticket': version 1 → 2", "no behavioural difference"]
