"""The pages as a whole: which are read, what no page may say, the changelog's version, and
the marker vocabulary refusing what it does not know."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

import pytest
from doc_samples import GENERATED, ROOT, pages, parse_marker
from install_checks import pip_install_problems

PROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]


def test_every_page_is_read_or_generated_and_checked_elsewhere() -> None:
    read = {p.relative_to(ROOT).as_posix() for p in pages()}
    assert {"README.md", "CHANGELOG.md", "machines/README.md"} <= read
    unread = {p.relative_to(ROOT).as_posix() for p in (ROOT / "docs").rglob("*.md")} - read
    assert unread, "the generated pages are not read"
    for page in unread:
        assert any(page == g or (g.endswith("/") and page.startswith(g)) for g in GENERATED), page


@pytest.mark.parametrize("page", pages(), ids=lambda p: p.relative_to(ROOT).as_posix())
def test_no_page_installs_statekit_from_a_package_index(page: Path) -> None:
    assert pip_install_problems(page.read_text(encoding="utf-8")) == []


def test_the_changelog_has_this_version_and_an_unreleased_section() -> None:
    text = (ROOT / "CHANGELOG.md").read_text(encoding="utf-8")
    versions = re.findall(r"^## \[([^\]]+)\]", text, re.M)
    assert versions[:2] == ["Unreleased", PROJECT["version"]]


@pytest.mark.parametrize(
    "body",
    ["fil door.yaml", "skip", "expect", "exit one", "fragment from x.yaml", "install now"],
)
def test_a_marker_the_vocabulary_lacks_is_refused(body: str) -> None:
    with pytest.raises(ValueError):
        parse_marker(body)


def test_a_marker_reads_every_clause() -> None:
    marker = parse_marker(" file door.yaml; expect undefined-pair, dead-state; exit 0,1 ")
    assert marker.file == "door.yaml"
    assert marker.expect == {"undefined-pair", "dead-state"}
    assert marker.exits == {0, 1}
    assert parse_marker("skip Helix's configuration; parsed").skip == (
        "Helix's configuration; parsed"
    )
    assert parse_marker("fragment of machines/task.yaml").base == "machines/task.yaml"
