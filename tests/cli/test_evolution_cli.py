"""`statekit diff` on a change of each kind, its exit codes and --rev; `statekit migrate`
(dry run, idempotence, stranded instances, --instance); `statekit run` refusing a
changed chart without a version bump, naming the diff."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest
from cli_process import statekit
from runner_charts import cancellation_wins, write_chart

ROOT = Path(__file__).resolve().parents[2]

TASK = """
statechart: task
version: 1
description: A task (the evolution tests change it one way at a time).
context:
  attempt: {type: integer, default: 0}
events:
  TaskStarted: {attempt: integer}
  CancelRequested: {}
  TaskCompleted: {}
  Reconciled: {}
guards:
  first:
    if: event.attempt == 1
    else: NOT_FIRST
invariants:
  attempts_count:
    assert: ctx.attempt >= 0
initial: queued
states:
  queued:
    on:
      TaskStarted: {to: running, guard: first, do: [{assign: {attempt: event.attempt}}]}
  running:
    on:
      CancelRequested: cancelling
      TaskCompleted: completed
  cancelling:
    on:
      TaskCompleted: completed
      Reconciled: cancelled
  completed: {final: true}
  cancelled: {final: true}
"""


def _v2(old: str, new: str, *, bump: bool = False) -> str:
    assert old in TASK, old
    text = TASK.replace(old, new, 1)
    return text.replace("version: 1", "version: 2", 1) if bump else text


CHANGES = [
    # (id, old text, new text, kinds the diff must name, words that must appear)
    (
        "state-added",
        "  cancelled: {final: true}\n",
        "  cancelled: {final: true}\n  parked: {}\n",
        {"state-added"},
        "parked",
    ),
    (
        "another-target",
        "      Reconciled: cancelled\n",
        "      Reconciled: completed\n",
        {"transition-changed", "answer-changed"},
        "cancelling on Reconciled",
    ),
    (
        "target-changed",
        "      TaskCompleted: completed\n  cancelling",
        "      TaskCompleted: cancelling\n  cancelling",
        {"transition-changed", "answer-changed"},
        "→ cancelling",
    ),
    ("guard-changed", "event.attempt == 1", "event.attempt >= 1", {"transition-changed"}, ">= 1"),
    (
        "transition-added",
        "      Reconciled: cancelled\n",
        "      Reconciled: cancelled\n      CancelRequested: cancelling\n",
        {"transition-added"},
        "cancelling on CancelRequested",
    ),
    (
        "payload-changed",
        "TaskStarted: {attempt: integer}",
        "TaskStarted: {attempt: integer, worker: string}",
        {"payload-TaskStarted-added"},
        "worker",
    ),
    (
        "context-changed",
        "attempt: {type: integer, default: 0}",
        "attempt: {type: integer, default: 1}",
        {"context-changed"},
        "default 1",
    ),
    (
        "invariant-changed",
        "ctx.attempt >= 0",
        "ctx.attempt >= -1",
        {"invariant-changed"},
        ">= -1",
    ),
    (
        "event-added",
        "  Reconciled: {}\n",
        "  Reconciled: {}\n  Paused: {}\n",
        {"event-added"},
        "Paused",
    ),
    (
        "effect-changed",
        "{assign: {attempt: event.attempt}}",
        "{assign: {attempt: event.attempt + 1}}",
        {"transition-changed"},
        "event.attempt + 1",
    ),
]


@pytest.mark.parametrize(
    ("old", "new", "kinds", "words"), [c[1:] for c in CHANGES], ids=[c[0] for c in CHANGES]
)
def test_diff_names_a_change_of_each_kind(
    tmp_path: Path, old: str, new: str, kinds: set[str], words: str
) -> None:
    a = write_chart(TASK, tmp_path, "a")
    b = write_chart(_v2(old, new), tmp_path, "b")
    done = statekit("diff", str(a), str(b), "--format", "json")
    assert done.returncode == 1, done.stderr  # behaviour changed, version did not
    data = json.loads(done.stdout)
    assert data["behaviour_changed"] and not data["version_bumped"]
    found = {c["kind"] for c in data["changes"]}
    assert kinds <= found, data["changes"]
    text = statekit("diff", str(a), str(b))
    assert text.returncode == 1 and words in text.stdout, text.stdout
    assert "bump `version:`" in text.stderr
    bumped = write_chart(_v2(old, new, bump=True), tmp_path, "c")
    assert statekit("diff", str(a), str(bumped)).returncode == 0


def test_diff_reports_changed_answers_renames_and_stranded_configurations(tmp_path: Path) -> None:
    a = write_chart(TASK, tmp_path, "a")
    cancel_wins = TASK.replace(
        "  cancelling:\n    on:\n      TaskCompleted: completed\n",
        "  cancelling:\n    reject: {TaskCompleted: CANCELLATION_WON}\n    on:\n",
    )
    b = write_chart(cancel_wins, tmp_path, "b")
    data = json.loads(statekit("diff", str(a), str(b), "--format", "json").stdout)
    answers = [c for c in data["changes"] if c["kind"] == "answer-changed"]
    assert {"kind": "answer-changed", "subject": "{cancelling} + TaskCompleted",
            "old": "→ completed", "new": "REJECTED CANCELLATION_WON"} in answers  # fmt: skip
    # a state removed: its configurations are stranded, each with a path to it
    removed = TASK.replace("      CancelRequested: cancelling\n", "").replace(
        "  cancelling:\n    on:\n      TaskCompleted: completed\n      Reconciled: cancelled\n", ""
    )
    c = write_chart(removed.replace("version: 1", "version: 2"), tmp_path, "c")
    done = statekit("diff", str(a), str(c), "--format", "json")
    assert done.returncode == 0  # bumped
    assert {"kind": "state-removed", "subject": "cancelling", "old": None, "new": None} in (
        json.loads(done.stdout)["changes"]
    )
    stranded = json.loads(done.stdout)["stranded"]
    assert stranded == [
        {"configuration": ["cancelling"], "why": "state 'cancelling' does not exist in version 2",
         "path": ["TaskStarted", "CancelRequested"], "timers": []}
    ]  # fmt: skip
    text = statekit("diff", str(a), str(c)).stdout
    assert "stranded {cancelling}" in text and "TaskStarted → CancelRequested" in text
    # renamed by a declared migration: not stranded, named as a rename
    renamed = TASK.replace("cancelling", "stopping").replace("version: 1", "version: 2")
    renamed = renamed.replace(
        "initial: queued",
        "migrations:\n  - {from: 1, rename: {cancelling: stopping}}\ninitial: queued",
    )
    d = write_chart(renamed, tmp_path, "d")
    data = json.loads(statekit("diff", str(a), str(d), "--format", "json").stdout)
    assert data["stranded"] == []
    assert {"kind": "state-renamed", "subject": "cancelling", "old": "cancelling",
            "new": "stopping"} in data["changes"]  # fmt: skip
    assert not [c for c in data["changes"] if c["kind"] == "answer-changed"]


def test_diff_of_an_unchanged_chart_exits_0(tmp_path: Path) -> None:
    a = write_chart(TASK, tmp_path, "a")
    b = write_chart(TASK.replace("A task (the", "A task, reworded (the"), tmp_path, "b")
    done = statekit("diff", str(a), str(b))
    assert done.returncode == 0 and "no behavioural difference" in done.stdout


def test_diff_against_a_git_revision(tmp_path: Path) -> None:
    if shutil.which("git") is None:
        pytest.fail("git is needed for statekit diff --rev")
    repo = tmp_path / "repo"
    (repo / "machines").mkdir(parents=True)
    chart = write_chart(TASK, repo / "machines", "task")

    def git(*args: str) -> None:
        subprocess.run(
            ["git", "-c", "user.name=t", "-c", "user.email=t@t", *args],
            cwd=repo, check=True, capture_output=True,
        )  # fmt: skip

    git("init", "-q")
    git("add", ".")
    git("commit", "-qm", "v1")
    chart.write_text(chart.read_text().replace("default: 0", "default: 5"), encoding="utf-8")
    done = statekit("diff", "machines/task.yaml", "--rev", "HEAD", cwd=repo)
    assert done.returncode == 1 and "context-changed attempt" in done.stdout, done.stderr
    git("commit", "-qam", "v1 changed")
    done = statekit("diff", "machines/task.yaml", "--rev", "HEAD~1", cwd=repo)
    assert done.returncode == 1
    assert statekit("diff", "machines/task.yaml", "--rev", "HEAD", cwd=repo).returncode == 0
    bad = statekit("diff", "machines/task.yaml", "--rev", "no-such-rev", cwd=repo)
    assert bad.returncode == 2 and "no-such-rev" in bad.stderr
    (repo / "machines" / "out:").mkdir()  # where `git show --output=out REV:./task.yaml` writes
    files = sorted(repo.rglob("*"))
    for hostile in HOSTILE_REVISIONS:
        bad = statekit("diff", "machines/task.yaml", f"--rev={hostile}", cwd=repo)
        assert bad.returncode == 2 and "revision" in bad.stderr, (hostile, bad.stderr)
        assert sorted(repo.rglob("*")) == files, f"--rev={hostile} wrote a file"
    # an option after --end-of-options is a revision git cannot show, not an option
    shown = subprocess.run(
        ["git", "-C", str(repo / "machines"), "show", "--end-of-options", "--output=x:./t"],
        capture_output=True,
        check=False,
    )
    assert shown.returncode != 0 and not (repo / "machines" / "x").exists()


HOSTILE_REVISIONS = [
    "--output=out",
    "--output=written.txt",
    "--output=../written.txt",
    "-owritten.txt",
    "-",
    "",
    "HEAD --output=written.txt",
    "HEAD:../written.txt",
    "HEAD\n--output=written.txt",
    "HEAD\x1b[31m",
]


USAGE = [
    ("neither NEW nor --rev", ["{a}"], "give two chart files"),
    ("both NEW and --rev", ["{a}", "{a}", "--rev", "HEAD"], "give two chart files"),
    ("another chart", ["{a}", "{other}"], "different charts"),
    ("a chart that does not compile", ["{a}", "{broken}"], "does not compile"),
    ("a missing file", ["{a}", "{a}.missing"], "does not exist"),
]


@pytest.mark.parametrize(("args", "words"), [u[1:] for u in USAGE], ids=[u[0] for u in USAGE])
def test_diff_usage_errors_exit_2(tmp_path: Path, args: list[str], words: str) -> None:
    paths = {
        "a": write_chart(TASK, tmp_path, "a"),
        "other": write_chart(TASK.replace("statechart: task", "statechart: other"), tmp_path, "o"),
        "broken": write_chart(TASK.replace("to: running", "to: nowhere"), tmp_path, "broken"),
    }
    done = statekit("diff", *(a.format(**{k: str(v) for k, v in paths.items()}) for a in args))
    assert done.returncode == 2 and words in done.stderr, done.stderr


V2_CANCEL_WINS = cancellation_wins(TASK)


def _events(*items: tuple[str, str, str, dict[str, object]]) -> str:
    return "".join(
        json.dumps({"instance": i, "event_id": e, "type": t, "payload": p}) + "\n"
        for i, e, t, p in items
    )


def test_migrate_dry_run_then_migrate_then_nothing_to_do(store_url: str, tmp_path: Path) -> None:
    v1 = write_chart(TASK, tmp_path, "v1")
    v2 = write_chart(V2_CANCEL_WINS, tmp_path, "v2")
    feed = _events(
        ("t1", "s1", "TaskStarted", {"attempt": 1}),
        ("t1", "c1", "CancelRequested", {}),
        ("t2", "s2", "TaskStarted", {"attempt": 1}),
    )
    assert statekit("run", str(v1), "--db", store_url, stdin=feed).returncode == 0
    dry = statekit(
        "migrate", "--db", store_url, "--chart", str(v2), "--dry-run", "--format", "json"
    )
    assert dry.returncode == 0, dry.stderr
    assert [json.loads(x)["status"] for x in dry.stdout.splitlines()] == ["WOULD_MIGRATE"] * 2
    # still on version 1: completion wins for t1
    done = statekit(
        "run", str(v2), "--db", store_url, stdin=_events(("t1", "x", "TaskCompleted", {}))
    )
    assert json.loads(done.stdout)["status"] == "APPLIED"
    one = statekit("migrate", "--db", store_url, "--chart", str(v2), "--instance", "t2")
    assert one.returncode == 0 and one.stdout.startswith("t2: MIGRATED v1 → v2 at sequence 2")
    again = statekit("migrate", "--db", store_url, "--chart", str(v2))
    assert again.returncode == 0, again.stderr
    assert "t2: CURRENT" in again.stdout and "t1: MIGRATED" in again.stdout
    third = statekit("migrate", "--db", store_url, "--chart", str(v2))
    assert third.stdout.count("CURRENT") == 2 and "2 current" in third.stderr
    assert statekit("verify", "--db", store_url).returncode == 0


def test_migrate_reports_stranded_instances_and_touches_none(
    store_url: str, tmp_path: Path
) -> None:
    v1 = write_chart(TASK, tmp_path, "v1")
    removed = (
        TASK.replace("version: 1", "version: 2")
        .replace("      CancelRequested: cancelling\n", "")
        .replace(
            "  cancelling:\n    on:\n      TaskCompleted: completed\n      Reconciled: cancelled\n",
            "",
        )
    )
    v2 = write_chart(removed, tmp_path, "v2")
    feed = _events(
        ("t1", "s1", "TaskStarted", {"attempt": 1}),
        ("t1", "c1", "CancelRequested", {}),
        ("t2", "s2", "TaskStarted", {"attempt": 1}),
    )
    statekit("run", str(v1), "--db", store_url, stdin=feed)
    done = statekit("migrate", "--db", store_url, "--chart", str(v2))
    assert done.returncode == 1
    assert (
        "t1: STRANDED in {cancelling} (v1 → v2): the instance is in state 'cancelling'"
        in done.stdout
    )
    assert "t2: MIGRATED" in done.stdout and "1 stranded" in done.stderr
    again = statekit("migrate", "--db", store_url, "--chart", str(v2))
    assert again.returncode == 1 and "t1: STRANDED" in again.stdout
    assert statekit("verify", "--db", store_url).returncode == 0


def test_run_refuses_a_changed_chart_without_a_version_bump_naming_the_diff(
    store_url: str, tmp_path: Path
) -> None:
    v1 = write_chart(TASK, tmp_path, "v1")
    statekit(
        "run", str(v1), "--db", store_url, stdin=_events(("t", "s", "TaskStarted", {"attempt": 1}))
    )
    changed = write_chart(
        TASK.replace(
            "TaskCompleted: completed\n  cancelling", "TaskCompleted: cancelling\n  cancelling"
        ),
        tmp_path,
        "v1b",
    )
    done = statekit(
        "run", str(changed), "--db", store_url, stdin=_events(("t", "x", "TaskCompleted", {}))
    )
    assert done.returncode == 2
    assert "a changed chart needs a new version" in done.stderr
    assert "transition-changed running on TaskCompleted: → completed → → cancelling" in done.stderr
