"""`statekit lint` prints a YAML mistake's hint under its position, in text and in JSON:
the table of common mistakes, one chart per file, linted as one folder."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from cli_process import statekit
from yaml_mistakes import MISTAKES


@pytest.fixture(scope="module")
def charts(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("mistakes")
    for mistake in MISTAKES:
        (folder / f"{mistake.name}.yaml").write_text(mistake.text, encoding="utf-8")
    return folder


def test_text_output_shows_each_hint_under_its_position(charts: Path) -> None:
    done = statekit("lint", str(charts))
    assert done.returncode == 1, done.stderr
    for mistake in MISTAKES:
        head = f"{mistake.name}.yaml:{mistake.line}:{mistake.column}: error[{mistake.slug}] "
        at = next(i for i, line in enumerate(done.stdout.splitlines()) if head in line)
        finding = [done.stdout.splitlines()[at]]
        for line in done.stdout.splitlines()[at + 1 :]:
            if not line.startswith("    "):
                break
            finding.append(line)
        assert any(mistake.hint in line for line in finding), (mistake.name, finding)


def test_json_output_carries_each_hint_as_a_note(charts: Path) -> None:
    done = statekit("lint", str(charts), "--format", "json")
    assert done.returncode == 1, done.stderr
    report = json.loads(done.stdout)
    for mistake in MISTAKES:
        found = [
            d
            for d in report["diagnostics"]
            if Path(d["file"]).name == f"{mistake.name}.yaml"
            and (d["line"], d["column"], d["slug"]) == (mistake.line, mistake.column, mistake.slug)
        ]
        assert len(found) == 1, (mistake.name, report["diagnostics"])
        assert any(mistake.hint in text for text in (found[0]["message"], *found[0]["notes"]))
