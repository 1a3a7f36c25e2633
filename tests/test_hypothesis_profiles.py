"""Hypothesis runs derandomized in CI (`CI` set, as `.ci/run` sets it) and explores
locally; `HYPOTHESIS_PROFILE` chooses either way (the profiles of tests/conftest.py)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

TESTS = Path(__file__).resolve().parent
SHOW = (
    "import conftest\n"
    "from hypothesis import settings\n"
    "print(settings.default.derandomize, settings.default.database is None)\n"
)


@pytest.mark.parametrize(
    ("env", "derandomized"),
    [
        ({"CI": "true"}, True),
        ({}, False),
        ({"HYPOTHESIS_PROFILE": "ci"}, True),
        ({"CI": "true", "HYPOTHESIS_PROFILE": "dev"}, False),
    ],
)
def test_the_profile_follows_ci_unless_hypothesis_profile_says(
    env: dict[str, str], derandomized: bool
) -> None:
    base = {k: v for k, v in os.environ.items() if k not in ("CI", "HYPOTHESIS_PROFILE")}
    shown = subprocess.run(
        [sys.executable, "-c", SHOW],
        cwd=TESTS,
        env={**base, **env, "PYTHONPATH": str(TESTS)},
        capture_output=True,
        text=True,
        check=True,
    ).stdout.split()
    assert shown[0] == str(derandomized)
    if derandomized:
        assert shown[1] == "True"  # no example database: nothing carries over between runs
