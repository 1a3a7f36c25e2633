"""A store that is damaged, full, busy or asked to hold an integer beyond 64 bits.

Families: a table of damage done to a SQLite file (pages overwritten, the file
cut short, text that is not UTF-8, a payload nested 20,000 deep, a version that
is not an integer), each checked through `statekit verify` (reports per
instance what it cannot read and goes on; says when the integrity check
fails) and `statekit run` (refuses to append to a damaged file, refuses a
damaged instance the way verify reports it, goes on with the others); a disk
that fills up during `statekit run` (a real, small tmpfs mounted in a private
mount namespace); a lock held longer than `?busy_timeout=`; and integers at and
beyond the signed 64-bit range on both dialects, including a store upgraded
in place from schema version 1.
"""

from __future__ import annotations

import json
import shutil
import sqlite3
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest
from cli_process import statekit
from runner_charts import COUNTER, chart_from, write_chart

from statekit.runner.errors import ChartVersionError, StoreBusyError
from statekit.runner.runner import Runner
from statekit.runner.store import open_store
from statekit.runner.store.migrations import MIGRATIONS, MIGRATIONS_TABLE, create_migrations_table
from statekit.runner.store.rows import STORED_INT_MAX, STORED_INT_MIN

ROOT = Path(__file__).resolve().parents[3]


def events(*pairs: tuple[str, int]) -> str:
    return "".join(
        json.dumps({"instance": i, "event_id": f"{i}-{n}", "type": "Incr", "payload": {"by": 1}})
        + "\n"
        for i, n in pairs
    )


@pytest.fixture
def filled(tmp_path: Path) -> tuple[str, Path, str]:
    """A SQLite store with instances a, b, c of three events each (closed, checkpointed)."""
    chart = str(write_chart(COUNTER, tmp_path, "counter"))
    path = tmp_path / "damaged.db"
    url = f"sqlite:///{path}"
    pairs = [(i, n) for n in range(3) for i in "abc"]
    assert statekit("run", chart, "--db", url, stdin=events(*pairs)).returncode == 0
    assert not Path(f"{path}-wal").exists()  # the last connection checkpointed the WAL
    return url, path, chart


def _sql(statement: str) -> Callable[[Path], None]:
    def damage(path: Path) -> None:
        connection = sqlite3.connect(path)
        connection.execute(statement)
        connection.commit()
        connection.close()

    return damage


def _page(of: str, fill: Callable[[int], bytes]) -> Callable[[Path], None]:
    """Overwrite the root page of table or index `of` (keeping the file's header)."""

    def damage(path: Path) -> None:
        connection = sqlite3.connect(path)
        (size,) = connection.execute("PRAGMA page_size").fetchone()
        (root,) = connection.execute(
            "SELECT rootpage FROM sqlite_master WHERE name = ?", (of,)
        ).fetchone()
        connection.close()
        with path.open("r+b") as file:
            file.seek((root - 1) * size)
            file.write(fill(size))

    return damage


def _cut(path: Path) -> None:
    with path.open("r+b") as file:
        file.truncate(path.stat().st_size // 2)


DEEP = "[" * 20_000 + "]" * 20_000
# name → (damage, whether the file fails its integrity check, instances verify names
# as unreadable or different, what `run` answers for an event of b when the file passes)
DAMAGE: dict[str, tuple[Callable[[Path], None], bool, set[str], str]] = {
    "the events table's page zeroed": (
        _page("statekit_events", bytes), True, {"a", "b", "c"}, ""
    ),
    "the events table's page random": (
        _page("statekit_events", lambda n: bytes((i * 7919) % 251 for i in range(n))),
        True, {"a", "b", "c"}, "",
    ),
    "an index page zeroed": (
        _page("sqlite_autoindex_statekit_events_2", bytes), True, set(), ""
    ),
    "the file cut in half": (_cut, True, set(), ""),
    # the history of b is damaged, its row is not: b goes on, verify names it
    "an event payload that is not UTF-8": (
        _sql("UPDATE statekit_events SET payload = CAST(x'7bff7d' AS TEXT) WHERE event_id = 'b-1'"),
        False, {"b"}, "APPLIED",
    ),
    "an event payload nested 20,000 deep": (
        _sql(f"UPDATE statekit_events SET payload = '{DEEP}' WHERE event_id = 'b-1'"),
        False, {"b"}, "APPLIED",
    ),
    # the row of b is damaged: run refuses b as verify reports it
    "a context that is not UTF-8": (
        _sql("UPDATE statekit_instances SET context = CAST(x'7bff7d' AS TEXT) "
             "WHERE instance_id = 'b'"),
        False, {"b"}, "ERROR",
    ),
    "a context nested 20,000 deep": (
        _sql(f"UPDATE statekit_instances SET context = '{DEEP}' WHERE instance_id = 'b'"),
        False, {"b"}, "ERROR",
    ),
    "a version that is not an integer": (
        _sql("UPDATE statekit_instances SET version = 'three' WHERE instance_id = 'b'"),
        False, {"b"}, "ERROR",
    ),
    "a chart version that is not an integer": (
        _sql("UPDATE statekit_instances SET chart_version = 1.5 WHERE instance_id = 'b'"),
        False, {"b"}, "ERROR",
    ),
}  # fmt: skip


@pytest.mark.parametrize("name", sorted(DAMAGE))
def test_verify_reads_what_it_can_and_run_never_appends_to_damage(
    filled: tuple[str, Path, str], name: str
) -> None:
    url, path, chart = filled
    damage, fails_check, unreadable, b_answer = DAMAGE[name]
    damage(path)
    done = statekit("verify", "--db", url)
    assert done.returncode == 1, done.stdout + done.stderr
    assert "internal error" not in done.stderr and "Traceback" not in done.stderr
    if fails_check:
        assert "store: DIFFERS" in done.stdout or "cannot be read" in done.stdout
        assert "integrity check failed" in done.stdout or "damaged" in done.stdout
    for instance in unreadable:
        assert f"{instance}: DIFFERS" in done.stdout, done.stdout
    for instance in "abc":
        if f"{instance}: ok" in done.stdout:
            assert instance not in unreadable

    before = path.read_bytes()
    ran = statekit("run", chart, "--db", url, stdin=events(("a", 9), ("b", 9)))
    assert "internal error" not in ran.stderr and "Traceback" not in ran.stderr
    if fails_check:
        assert ran.returncode == 2 and ran.stdout == ""
        assert "damaged" in ran.stderr or "integrity check failed" in ran.stderr, ran.stderr
        assert path.read_bytes() == before  # nothing appended to a damaged file
        return
    out = [json.loads(line) for line in ran.stdout.splitlines()]
    assert [o["status"] for o in out] == ["APPLIED", b_answer], out
    if name == "a version that is not an integer":
        message = "instance 'b': the stored version 'three' is not an integer"
        assert message in out[1]["error"] and message in done.stdout
    listed = statekit("outbox", "--db", url)
    assert listed.returncode in (0, 2) and "internal error" not in listed.stderr


def test_disk_full_during_run_stops_cleanly_with_the_count(tmp_path: Path) -> None:
    # a real full disk: a 1 MB tmpfs in a private mount namespace (gone with the process)
    if shutil.which("unshare") is None:
        pytest.fail("the disk-full test needs unshare(1) (util-linux)")
    chart = write_chart(COUNTER, tmp_path, "counter")
    feed = tmp_path / "events.jsonl"
    feed.write_text(events(*((f"i{n % 5}", n) for n in range(20_000))))
    mount = tmp_path / "small"
    mount.mkdir()
    url = f"sqlite:///{mount / 'full.db'}"
    python = sys.executable
    script = (
        f"mount -t tmpfs -o size=1m tmpfs {mount} || exit 99; "
        f"{python} -m statekit.cli run {chart} --db {url} --input {feed} > {tmp_path / 'out'} "
        f"2> {tmp_path / 'err'}; echo $? > {tmp_path / 'code'}; "
        f"{python} -m statekit.cli verify --db {url} > {tmp_path / 'verify'} 2>&1; "
        f"echo $? > {tmp_path / 'verify_code'}"
    )
    done = subprocess.run(
        ["unshare", "--mount", "--map-root-user", "sh", "-c", script],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, f"cannot mount a small tmpfs: {done.stderr}"
    stderr = (tmp_path / "err").read_text()
    out = (tmp_path / "out").read_text().splitlines()
    assert (tmp_path / "code").read_text().strip() == "2", stderr
    assert "Traceback" not in stderr and "internal error" not in stderr
    assert "disk full" in stderr and f"{len(out)} line(s) applied before it" in stderr
    assert 0 < len(out) < 20_000
    assert {json.loads(line)["status"] for line in out} == {"APPLIED"}
    # what was acknowledged is there, and nothing else
    assert (tmp_path / "verify_code").read_text().strip() == "0", (tmp_path / "verify").read_text()


def test_a_lock_held_longer_than_the_busy_timeout_says_so(tmp_path: Path) -> None:
    path = tmp_path / "busy.db"
    url = f"sqlite:///{path}?busy_timeout=0.2"
    runner = Runner(chart_from(COUNTER), open_store(url))
    runner.create("c")
    holder = sqlite3.connect(path, isolation_level=None)
    holder.execute("BEGIN IMMEDIATE")
    try:
        with pytest.raises(StoreBusyError, match=r"busy .* longer than the busy timeout \(0.2 s\)"):
            runner.apply("c", "e1", "Incr", {"by": 1})
        chart = str(write_chart(COUNTER, tmp_path, "counter"))
        done = statekit("run", chart, "--db", url, stdin=events(("c", 1)))
        assert done.returncode == 2 and "StoreURLError" not in done.stderr
        assert "busy_timeout=SECONDS" in done.stderr and "longer than the busy timeout" in (
            done.stderr
        )
    finally:
        holder.execute("ROLLBACK")
        holder.close()
    assert runner.apply("c", "e1", "Incr", {"by": 1}).applied  # nothing was half-written


@pytest.mark.parametrize("version", [2**31, 2**62, STORED_INT_MAX])
def test_a_chart_version_up_to_64_bits_is_stored(store_url: str, version: int) -> None:
    chart = chart_from(COUNTER.replace("version: 1", f"version: {version}"))
    runner = Runner(chart, open_store(store_url), snapshot_every=1)
    runner.create("c")
    assert runner.apply("c", "e1", "Incr", {"by": 1}).applied
    again = Runner(chart, open_store(store_url))
    assert again.load("c").chart_version == version
    assert again.verify("c").ok
    assert [row.version for row in again.store.charts()] == [version]


@pytest.mark.parametrize("version", [STORED_INT_MAX + 1, STORED_INT_MIN - 1, 2**100])
def test_an_integer_beyond_64_bits_is_refused_clearly(store_url: str, version: int) -> None:
    store = open_store(store_url)
    with pytest.raises(ChartVersionError, match="outside the range a store holds"):
        store.register_chart("sha256:" + "0" * 64, "counter", version, None)
    assert store.charts() == []


def test_a_schema_1_database_upgrades_to_64_bit_integers_in_place(store_url: str) -> None:
    version_1 = MIGRATIONS[0]
    store = open_store(store_url)  # then rebuilt by hand at schema version 1
    with store.write():
        for table in ("family_links", "instance_inbox", "shard", "retention", "timers",
                      "inbox", "snapshots", "outbox", "rejections", "events", "instances",
                      "charts", "schema_migrations"):  # fmt: skip
            store.execute(f"DROP TABLE statekit_{table}")
        store.execute(create_migrations_table(store.dialect))
        for statement in version_1.statements(store.dialect):
            store.execute(statement)
        store.execute(
            f"INSERT INTO {MIGRATIONS_TABLE} (version, description, applied_at) VALUES (?, ?, 0)",
            (1, version_1.description),
        )
    store.close()
    runner = Runner(chart_from(COUNTER), open_store(store_url))  # upgraded on open
    assert runner.store.schema_version() == MIGRATIONS[-1].version
    runner.create("c")
    big = chart_from(COUNTER.replace("version: 1", f"version: {2**40}"))
    moved = Runner(big, open_store(store_url), previous=[runner.chart])
    assert moved.migrate("c").status == "MIGRATED"
    assert moved.apply("c", "e1", "Incr", {"by": 1}).applied
    assert moved.load("c").chart_version == 2**40
    if moved.store.dialect == "postgresql":
        rows = moved.store.execute(
            "SELECT table_name, column_name FROM information_schema.columns WHERE "
            "table_schema = current_schema() AND data_type = 'integer'"
        ).fetchall()
        assert rows == []  # every integer column is 64-bit now
