"""The 193 W3C SCXML conformance tests, each through import-scxml and the engine,
against the expected-result table (tests/scxml/w3c_expected.py). The files come
from `make w3c-data` (python-statemachine 3.2.2's sdist, unpacked into build/w3c)."""

from __future__ import annotations

from pathlib import Path

import pytest
from w3c_expected import EXPECTED
from w3c_outcome import W3C_DIR, outcome, w3c_files

FILES = w3c_files()


def test_the_suite_is_there_and_whole() -> None:
    assert FILES, f"no W3C tests under {W3C_DIR}: run `make w3c-data`"
    assert sorted(FILES) == sorted(EXPECTED)
    assert len(FILES) == 193


@pytest.mark.parametrize("number", sorted(EXPECTED))
def test_w3c_outcome_matches_the_table(number: str, tmp_path: Path) -> None:
    assert number in FILES, f"test{number}.scxml missing under {W3C_DIR}: run `make w3c-data`"
    assert outcome(FILES[number], tmp_path) == EXPECTED[number]


def test_every_refusal_names_what_is_missing() -> None:
    for number, (result, reason) in EXPECTED.items():
        assert result in ("pass", "refused"), number
        assert (result == "refused") == bool(reason), number
