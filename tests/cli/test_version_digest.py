"""A version is one digest: every command that opens a store with a chart (`run`,
`worker`, `migrate`, `migrate --dry-run`, `verify --chart`) refuses a chart whose
version the store holds with another digest, with one message naming the version,
both digests and what to do, and writes nothing; on SQLite and on PostgreSQL."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from cli_process import statekit as statekit_cli
from runner_charts import write_chart

import statekit
from statekit.runner.store import open_read_only_store, open_store

V1 = """
statechart: door
version: 1
description: A door (version 1).
context:
  opened: {type: integer, default: 0}
events:
  Open: {}
  Close: {}
initial: closed
states:
  closed:
    on:
      Open: {to: open, do: [{assign: {opened: ctx.opened + 1}}]}
  open:
    on:
      Close: closed
"""

V2 = (
    V1.replace("version: 1", "version: 2")
    .replace("(version 1)", "(version 2)")
    .replace("      Close: closed", "      Close: closed\n    after:\n      1h: closed")
)

V2_CHANGED = V2.replace("      1h: closed", "      2h: closed")
"""Version 2 changed without a bump: the store holds version 2 with V2's digest."""


def event_line(instance: str, event_id: str, type: str) -> str:
    return json.dumps({"instance": instance, "event_id": event_id, "type": type}) + "\n"


# command → its arguments after the store URL and the changed chart's path
COMMANDS: dict[str, tuple[str, ...]] = {
    "run": ("run", "{chart}", "--db", "{db}"),
    "worker": ("worker", "--db", "{db}", "--chart", "{chart}", "--once"),
    "migrate": ("migrate", "--db", "{db}", "--chart", "{chart}"),
    "migrate --dry-run": ("migrate", "--db", "{db}", "--chart", "{chart}", "--dry-run"),
    "verify --chart": ("verify", "--db", "{db}", "--chart", "{chart}"),
}


@pytest.mark.parametrize("command", sorted(COMMANDS))
def test_a_changed_chart_of_a_stored_version_is_refused_with_the_full_message(
    store_url: str, tmp_path: Path, command: str
) -> None:
    v1, v2 = write_chart(V1, tmp_path, "v1"), write_chart(V2, tmp_path, "v2")
    changed = write_chart(V2_CHANGED, tmp_path, "v2b")
    assert (
        statekit_cli(
            "run", str(v1), "--db", store_url, stdin=event_line("a", "a1", "Open")
        ).returncode
        == 0
    )
    assert (
        statekit_cli(
            "run", str(v2), "--db", store_url, stdin=event_line("b", "b1", "Open")
        ).returncode
        == 0
    )
    stored, other = statekit.load(v2).digest, statekit.load(changed).digest
    assert stored != other
    args = [a.format(db=store_url, chart=changed) for a in COMMANDS[command]]
    done = statekit_cli(*args, stdin=event_line("c", "c1", "Open"))
    assert done.returncode == 2, (done.stdout, done.stderr)
    message = " ".join(done.stderr.split())  # as one line, whatever the terminal wrapped
    assert (
        f"chart 'door' version 2 is in the store with digest {stored}, this chart has digest "
        f"{other}: a changed chart needs a new version (bump `version:`, then `statekit "
        "migrate`). What changed: transition-removed open on after(1h)@open" in message
    ), message
    assert done.stdout == ""
    store = open_read_only_store(store_url)
    try:  # nothing written: no second digest for version 2, instance a still on version 1
        assert sorted((r.version, r.digest) for r in store.charts() if r.digest == other) == []
        row = store.instance("a")
        assert row is not None and (row.chart_version, row.version) == (1, 1)
        assert store.instance("c") is None
    finally:
        store.close()


def test_verify_names_a_version_stored_with_two_digests(store_url: str, tmp_path: Path) -> None:
    v2 = write_chart(V2, tmp_path, "v2")
    assert (
        statekit_cli(
            "run", str(v2), "--db", store_url, stdin=event_line("b", "b1", "Open")
        ).returncode
        == 0
    )
    changed = statekit.load(write_chart(V2_CHANGED, tmp_path, "v2b"))
    store = open_store(store_url)  # what `migrate` did before a version was one digest
    try:
        store.register_chart(changed.digest, changed.name, changed.version, changed.source)
    finally:
        store.close()
    done = statekit_cli("verify", "--db", store_url)
    assert done.returncode == 1
    digests = ", ".join(sorted([statekit.load(v2).digest, changed.digest]))
    assert f"stored chart 'door' version 2 has 2 digests: {digests}" in done.stdout
