"""The 193 W3C SCXML conformance tests, each through import-scxml and the engine,
against the expected-result table (tests/scxml/w3c_expected.py). The files come
from `make w3c-data` (python-statemachine 3.2.2's sdist, unpacked into build/w3c)."""

from __future__ import annotations

import re
from collections import Counter
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


def test_the_semantics_page_counts_the_table() -> None:
    page = (Path(__file__).resolve().parents[2] / "docs/semantics.md").read_text("utf-8")
    section = page.split("## The W3C SCXML suite", 1)[1]
    results = Counter(result for result, _ in EXPECTED.values())
    for result in ("pass", "fail", "refused"):
        assert f"| {result} | {results[result]} |" in section
    refusals = Counter(reason for result, reason in EXPECTED.values() if result == "refused")
    listed = dict(re.findall(r"^\| `(.+)` \| (\d+) \|$", section, re.M))
    assert {name: int(count) for name, count in listed.items()} == dict(refusals)
    passed = [n for n, (result, _) in EXPECTED.items() if result == "pass"]
    assert all(re.search(rf"\b{n}\b", section) for n in passed)
