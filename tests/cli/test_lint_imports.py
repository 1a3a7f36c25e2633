"""`statekit lint` loads only what linting needs, so its start-up cannot grow back silently.

Each case runs the real command in a fresh process and reads `sys.modules` at
its end: the runner, the diagrams, the language server, the test helpers,
database drivers, rich and the other commands' modules are never imported;
jsonschema is imported only when a chart breaks the schema (its errors are
explained through it). The cases cover a folder, named files, standard input,
every output format, a chart with schema errors and one with chart findings.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

NEVER = (
    "statekit.runner",
    "statekit.diagrams",
    "statekit.lsp",
    "statekit.testing",
    "statekit.cli.runner_commands",
    "statekit.cli.render_commands",
    "statekit.cli.timer_commands",
    "statekit.cli.evolution_commands",
    "statekit.cli.lsp_commands",
    "psycopg",
    "sqlite3",
    "rich",
    "pygls",
    "graphviz",
)
SCHEMA_LIBRARY = ("jsonschema", "referencing")

# runs the command as the console script does, then prints the modules it loaded
SCRIPT = """
import json, sys
from statekit.cli.main import main
sys.argv = ["statekit", *sys.argv[1:]]
try:
    main()
except SystemExit:
    pass
sys.__stdout__.write("\\nMODULES " + json.dumps(sorted(sys.modules)) + "\\n")
"""

VALID = (
    "statechart: light\ninitial: off\nstates:\n  off: {on: {FLIP: on}}\n  on: {on: {FLIP: off}}\n"
)
SCHEMA_ERROR = "statechart: light\ninitial: off\nstates:\n  off: {on: {FLIP: {to: on, tp: x}}}\n"
FINDINGS = "statechart: light\ninitial: off\nstates:\n  off: {}\n  lost: {}\n"


def loaded(args: list[str], cwd: Path, stdin: str | None = None) -> tuple[set[str], str]:
    done = subprocess.run(
        [sys.executable, "-c", SCRIPT, *args],
        cwd=cwd,
        input=stdin,
        capture_output=True,
        text=True,
        check=False,
    )
    marker = done.stdout.rindex("MODULES ")
    modules = json.loads(done.stdout[marker + len("MODULES ") :])
    return {str(m) for m in modules}, done.stdout[:marker] + done.stderr


def under(modules: set[str], packages: tuple[str, ...]) -> list[str]:
    return sorted(m for m in modules if any(m == p or m.startswith(p + ".") for p in packages))


@pytest.fixture()
def charts(tmp_path: Path) -> Path:
    (tmp_path / "valid.yaml").write_text(VALID)
    (tmp_path / "schema_error.yaml").write_text(SCHEMA_ERROR)
    (tmp_path / "findings.yaml").write_text(FINDINGS)
    return tmp_path


CASES = {
    "the reference machines": (["lint", str(ROOT / "machines")], None, False),
    "a valid file": (["lint", "valid.yaml"], None, False),
    "a file with chart findings": (["lint", "findings.yaml"], None, False),
    "explicit rules": (["lint", "--select", "dead-state", "findings.yaml"], None, False),
    "standard input": (["lint", "-"], VALID, False),
    "json output": (["lint", "--format", "json", "valid.yaml"], None, False),
    "sarif output": (["lint", "--format", "sarif", "findings.yaml"], None, False),
    "github output": (["lint", "--format", "github", "findings.yaml"], None, False),
    "a schema error": (["lint", "schema_error.yaml"], None, True),
    "a folder with a schema error": (["lint", "."], None, True),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_lint_imports_only_what_it_needs(case: str, charts: Path) -> None:
    args, stdin, schema_errors = CASES[case]
    modules, output = loaded(args, charts, stdin)
    assert "statekit.lint.lint_files" in modules, output  # the command did run
    if "findings.yaml" in args:
        assert "error[dead-state]" in output or "dead-state" in output, output
    assert under(modules, NEVER) == [], output
    if schema_errors:
        assert "error[schema] unknown key 'tp'" in output, output
        assert under(modules, SCHEMA_LIBRARY), "the schema errors are explained by jsonschema"
    else:
        assert under(modules, SCHEMA_LIBRARY) == [], output
