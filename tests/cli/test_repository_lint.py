"""`statekit lint .` at the repository's root, as a newcomer runs it: it must exit 0.

The fixtures that fail on purpose are skipped through `exclude` in the repository's
own `[tool.statekit.lint]`; these tests keep that configuration from rotting (a new
broken fixture outside the excluded folders, or an exclude that stops matching).
"""

from __future__ import annotations

from cli_process import ROOT, statekit


def test_the_repository_lints_clean_from_its_root() -> None:
    done = statekit("lint", ".")
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stdout == ""
    assert "0 error(s), 0 warning(s)" in done.stderr


def test_the_walk_still_lints_the_charts_meant_to_be_valid() -> None:
    # machines/, bench/, tests/charts/ (but order.yaml) and tests/analysis/fixtures/:
    # ten charts today; an exclude grown too wide would lint fewer
    done = statekit("lint", ".")
    summary = done.stderr.strip().splitlines()[-1]
    files = int(summary.split(" file(s)")[0])
    assert files >= 10, summary


def test_an_excluded_fixture_named_on_the_command_line_is_still_linted() -> None:
    # `exclude` applies to folder walks only (README: Linting files and folders)
    done = statekit("lint", "tests/charts/order.yaml", "tests/lint/fixtures/rules/dead-state.yaml")
    assert done.returncode == 1
    assert "tests/charts/order.yaml:" in done.stdout
    assert "error[undefined-pair]" in done.stdout
    assert "tests/lint/fixtures/rules/dead-state.yaml:" in done.stdout


def test_the_excludes_are_relative_to_the_pyproject_not_the_current_folder() -> None:
    # run from tests/: the nearest pyproject.toml is the root's, and its patterns
    # (tests/charts/order.yaml, …) still match below tests/
    done = statekit("lint", ".", cwd=ROOT / "tests")
    assert done.returncode == 0, done.stdout + done.stderr
    assert "0 error(s)" in done.stderr
