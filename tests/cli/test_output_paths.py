"""Every command that writes to a path it is given: a path under a regular file is a
usage error that names the file, never an internal error.

The family: each command with an output path (`compile -o FILE`, `render -o DIR`,
`docs -o DIR`, and `run`/`verify`/`outbox` with a SQLite file as `--db`), each
with the path one and two levels below a regular file.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
CHART = str(ROOT / "machines" / "payment.yaml")

COMMANDS = {
    "compile": ["compile", CHART, "-o", "{out}"],
    "render": ["render", CHART, "--format", "dot", "-o", "{out}"],
    "docs": ["docs", CHART, "-o", "{out}"],
    "run": ["run", CHART, "--db", "sqlite:///{out}"],
    "verify": ["verify", "--db", "sqlite:///{out}"],
    "outbox": ["outbox", "--db", "sqlite:///{out}"],
}


@pytest.mark.parametrize("below", ["out", "sub/out"])
@pytest.mark.parametrize("command", sorted(COMMANDS))
def test_an_output_path_under_a_regular_file_is_a_usage_error(
    tmp_path: Path, command: str, below: str
) -> None:
    plain = tmp_path / "plain"
    plain.write_text("a regular file\n")
    out = f"{plain}/{below}"
    args = [a.replace("{out}", out) for a in COMMANDS[command]]
    done = subprocess.run(
        [sys.executable, "-m", "statekit.cli", *args],
        cwd=ROOT,
        capture_output=True,
        text=True,
        input="",
        check=False,
    )
    assert done.returncode == 2, done.stdout + done.stderr
    assert "internal error" not in done.stderr and "Traceback" not in done.stderr
    assert f"{plain} is a file, not a folder" in done.stderr, done.stderr
    assert plain.read_text() == "a regular file\n"
