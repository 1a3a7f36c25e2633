"""One fixture file per diagnostic: each file's first line says what it must produce.

`# expect: <slug> <line>:<column>` — the file must produce exactly one finding of
that slug at that position (other slugs may appear, e.g. an unused event next to an
unknown one), and a fixture exists for every rule in the registry.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from statekit.lint.config import LintConfig
from statekit.lint.lint_files import lint_paths
from statekit.lint.registry import RULES

FIXTURES = Path(__file__).parent / "fixtures" / "rules"
EXPECT = re.compile(rb"^# expect: ([a-z-]+) (\d+):(\d+)")


def _expectation(path: Path) -> tuple[str, int, int]:
    match = EXPECT.match(path.read_bytes())
    assert match, f"{path.name} has no '# expect:' first line"
    return match[1].decode(), int(match[2]), int(match[3])


@pytest.mark.parametrize("path", sorted(FIXTURES.glob("*.yaml")), ids=lambda p: p.stem)
def test_fixture_produces_its_diagnostic(path: Path) -> None:
    slug, line, column = _expectation(path)
    report = lint_paths([path], LintConfig())
    found = [(d.span.line, d.span.column) for d in report.diagnostics if d.slug == slug]
    assert found == [(line, column)], report.diagnostics
    assert report.internal_errors == 0


def test_every_rule_has_a_fixture() -> None:
    covered = {_expectation(p)[0] for p in FIXTURES.glob("*.yaml")}
    assert covered == set(RULES)


def test_billion_laughs_is_refused_before_expansion() -> None:
    report = lint_paths([FIXTURES / "yaml-limits-billion-laughs.yaml"], LintConfig())
    (finding,) = [d for d in report.diagnostics if d.slug == "yaml-limits"]
    assert "alias" in finding.message
