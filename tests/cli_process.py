"""`statekit(...)`: the real command in a fresh process, as a user runs it, for the tests
that drive the command line (standard input empty unless given, never inherited)."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Mapping
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
"""The repository's root: where a user runs the commands from."""


def statekit(
    *args: str, stdin: str = "", cwd: Path = ROOT, env: Mapping[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    """`python -m statekit ARGS` in `cwd`, its output captured as UTF-8 text."""
    return subprocess.run(
        [sys.executable, "-m", "statekit", *args],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        encoding="utf-8",
        input=stdin,
        check=False,
    )
