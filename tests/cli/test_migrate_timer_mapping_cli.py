"""`statekit migrate` with a migration's `timers:` mapping: an armed timer re-timed
(`due: keep` / `due: recompute`), renamed to a named timer, or dropped; its row in the
store follows in the same transaction (`statekit timers`), the entry records what was
done, and `statekit verify` replays it clean; on SQLite and on PostgreSQL."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from cli_process import statekit as statekit_cli

V1 = """\
statechart: sub
version: 1
events: {LAPSE: {}, PAY: {}}
initial: active
states:
  active: {on: {LAPSE: grace}}
  grace:
    on: {PAY: active}
    after: {7d: suspended}
  suspended: {final: true}
"""
DAY = 86_400_000


def _v2(after: str, timers: str) -> str:
    return V1.replace(
        "version: 1\n", f"version: 2\nmigrations:\n  - from: 1\n    timers: {timers}\n"
    ).replace("after: {7d: suspended}", after)


CASES = {
    "recompute": (
        _v2(
            "after: {10d: suspended}",
            '{"after(7d)@grace": {to: "after(10d)@grace", due: recompute}}',
        ),
        ("after(10d)@grace", 3 * DAY),
        {"to": "after(10d)@grace", "due": "recompute"},
    ),
    "keep": (
        _v2("after: {10d: suspended}", '{"after(7d)@grace": {to: "after(10d)@grace"}}'),
        ("after(10d)@grace", 0),
        {"to": "after(10d)@grace", "due": "keep"},
    ),
    "named": (
        _v2(
            "after: [{id: grace, delay: 7d, to: suspended}]",
            '{"after(7d)@grace": {to: "after(grace)@grace"}}',
        ),
        ("after(grace)@grace", 0),
        {"to": "after(grace)@grace", "due": "keep"},
    ),
    "drop": (_v2("after: {10d: suspended}", '{"after(7d)@grace": drop}'), None, "drop"),
}


def _timers(store_url: str) -> list[dict[str, object]]:
    done = statekit_cli("timers", "--db", store_url, "--format", "json")
    assert done.returncode == 0, done.stderr
    return [json.loads(line) for line in done.stdout.splitlines()]


@pytest.mark.parametrize("case", sorted(CASES))
def test_a_mapped_timer_row_follows_the_migration(
    case: str, store_url: str, tmp_path: Path
) -> None:
    new, expected, recorded = CASES[case]
    v1, v2 = tmp_path / "v1.yaml", tmp_path / "v2.yaml"
    v1.write_text(V1, encoding="utf-8")
    v2.write_text(new, encoding="utf-8")
    line = json.dumps({"instance": "s1", "event_id": "e1", "type": "LAPSE", "payload": {}})
    assert statekit_cli("run", str(v1), "--db", store_url, stdin=line + "\n").returncode == 0
    ((armed,),) = [_timers(store_url)]
    migrated = statekit_cli("migrate", "--db", store_url, "--chart", str(v2), "--format", "json")
    assert migrated.returncode == 0, migrated.stderr
    (report,) = [json.loads(x) for x in migrated.stdout.splitlines()]
    assert report["status"] == "MIGRATED" and report["mapping"]["timers"] == {
        "after(7d)@grace": recorded
    }
    rows = _timers(store_url)
    if expected is None:
        assert rows == []
    else:
        ((row,),) = [rows]
        timer, later = expected
        assert (row["timer"], row["due_ms"], row["generation"]) == (
            timer,
            int(str(armed["due_ms"])) + later,
            armed["generation"],
        )
    verified = statekit_cli("verify", "--db", store_url)
    assert verified.returncode == 0, verified.stdout + verified.stderr
