"""scripts/check-chart-versions.sh: a machines/*.yaml that changed behaviour since the
base revision must bump its `version:` (docs/evolution.md, rule 1).

Each test makes a throwaway git repository with one chart, commits a change on a
branch and runs the script as `make test` does.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SCRIPT = ROOT / "scripts" / "check-chart-versions.sh"

CHART = """\
statechart: door
version: VERSION
events: {OPEN: {}, CLOSE: {}}
initial: closed
states:
  closed:
    on: {OPEN: open}
    reject: {CLOSE: ALREADY_CLOSED}
  open:
    on: {CLOSE: TARGET}
    reject: {OPEN: ALREADY_OPEN}
"""

GIT_ENV = {
    "GIT_AUTHOR_NAME": "t",
    "GIT_AUTHOR_EMAIL": "t@example.invalid",
    "GIT_COMMITTER_NAME": "t",
    "GIT_COMMITTER_EMAIL": "t@example.invalid",
    "GIT_CONFIG_GLOBAL": os.devnull,
    "GIT_CONFIG_NOSYSTEM": "1",
}


def git(repo: Path, *args: str) -> str:
    done = subprocess.run(
        ["git", "-C", str(repo), *args],
        capture_output=True,
        text=True,
        check=True,
        env={**os.environ, **GIT_ENV},
    )
    return done.stdout.strip()


def write_chart(repo: Path, *, version: int, close_target: str) -> None:
    (repo / "machines").mkdir(exist_ok=True)
    text = CHART.replace("VERSION", str(version)).replace("TARGET", close_target)
    (repo / "machines" / "door.yaml").write_text(text, encoding="utf-8")


def check(repo: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        ["bash", str(SCRIPT), *args],
        cwd=repo,
        capture_output=True,
        text=True,
        check=False,
        env={**os.environ, **GIT_ENV, "STATEKIT": f"{sys.executable} -m statekit"},
    )


def repository(tmp_path: Path) -> Path:
    """A repository whose main has the chart at version 1, and a branch off it."""
    repo = tmp_path / "repo"
    repo.mkdir()
    git(repo, "init", "-q", "-b", "main")
    write_chart(repo, version=1, close_target="closed")
    git(repo, "add", ".")
    git(repo, "commit", "-q", "-m", "door v1")
    git(repo, "checkout", "-q", "-b", "change")
    return repo


def commit_change(repo: Path, *, version: int) -> None:
    # CLOSE from `open` now goes nowhere: a behaviour change
    write_chart(repo, version=version, close_target="open")
    git(repo, "commit", "-q", "-am", "door: CLOSE keeps it open")


def test_a_behaviour_change_without_a_bump_fails(tmp_path: Path) -> None:
    repo = repository(tmp_path)
    commit_change(repo, version=1)
    done = check(repo)
    assert done.returncode == 1, done.stdout + done.stderr
    base = git(repo, "rev-parse", "--short", "main")
    assert f"against {base} (the merge base with main): 1 changed" in done.stdout
    assert "statekit diff machines/door.yaml" in done.stdout
    assert "changed behaviour but not its version (1): bump `version:`" in done.stderr


def test_a_behaviour_change_with_a_bump_passes(tmp_path: Path) -> None:
    repo = repository(tmp_path)
    commit_change(repo, version=2)
    done = check(repo)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "version 1 → 2" in done.stdout


def test_on_main_itself_the_previous_commit_is_the_base(tmp_path: Path) -> None:
    repo = repository(tmp_path)
    git(repo, "checkout", "-q", "main")
    commit_change(repo, version=1)
    done = check(repo)
    assert done.returncode == 1, done.stdout + done.stderr
    assert "(the previous commit" in done.stdout


def test_an_uncommitted_edit_counts(tmp_path: Path) -> None:
    repo = repository(tmp_path)
    (repo / "notes.txt").write_text("a commit on the branch\n", encoding="utf-8")
    git(repo, "add", "notes.txt")
    git(repo, "commit", "-q", "-m", "notes")
    write_chart(repo, version=1, close_target="open")
    assert check(repo).returncode == 1


def test_a_clone_without_history_checks_nothing_and_says_so(tmp_path: Path) -> None:
    repo = repository(tmp_path)
    commit_change(repo, version=1)
    clone = tmp_path / "shallow"
    git(tmp_path, "clone", "-q", "--depth", "1", f"file://{repo}", str(clone))
    done = check(clone)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "no base revision to compare with" in done.stdout


def test_a_base_given_on_the_command_line_is_used(tmp_path: Path) -> None:
    repo = repository(tmp_path)
    commit_change(repo, version=2)
    write_chart(repo, version=2, close_target="closed")
    git(repo, "commit", "-q", "-am", "door: back as it was, still version 2")
    # against the previous commit: behaviour changed back, version stayed 2
    done = check(repo, "HEAD~1")
    assert done.returncode == 1
    assert "(given)" in done.stdout
