"""Every fenced block of README.md, CHANGELOG.md, docs/*.md and machines/README.md works
as written.

Each block runs as a reader would run it, in a scratch folder holding a copy of
the checkout's machines/, examples/, docs/, tests/charts/ and pyproject.toml, with
the `statekit` and `python` of this environment first on PATH:

- yaml: a chart (a root mapping with `statechart:`) compiles and `statekit lint`
  reports nothing, or exactly the slugs of `expect`; a `fragment` is merged
  (mappings key by key) into the chart of PATH, or into the page's last chart
  above it, and the result compiles; other YAML needs a marker.
- python: runs with `python`; a block defining `test_` functions runs under pytest.
- sh: each command (a `\\` continues it) runs with bash and exits 0 (or one of
  `exit`); console: `$ ` lines are commands, the lines below them exactly what
  they print, standard output and error as a terminal shows them (a `...` line
  stands for any lines).
- json, toml: parse; a `[tool.statekit.lint]` table loads as statekit's configuration.

The marker, an HTML comment on the line before the fence (blank lines between
are allowed), says what a block demonstrates; clauses are separated by `;`:

    <!-- sample: file door.yaml -->           save the block under this name for later
                                               blocks of the page (it is checked too)
    <!-- sample: expect undefined-pair -->    lint reports exactly these slugs
    <!-- sample: fragment of machines/task.yaml -->   a part of that chart (or, without
                                               `of`, of the page's last chart above)
    <!-- sample: excerpt of tests/x.py -->    its lines appear, in order, in that file
    <!-- sample: exit 0,1 -->                 the exit codes its commands may give
    <!-- sample: install -->                  installs statekit or sets it up elsewhere
                                               (pip, make, pre-commit, CI): not run; each
                                               `pip install` must name this checkout, a
                                               wheel or `<repository URL>`, with extras
                                               pyproject.toml declares; `make X` a target
                                               of the Makefile; a hook id one of
                                               .pre-commit-hooks.yaml, `rev:` a commit
                                               SHA or this version's tag
    <!-- sample: skip REASON -->              not run (an editor's configuration, your own
                                               test suite); the reason is free text and
                                               comes last; parsed when its language has a
                                               parser here, and the `--options` of a
                                               `statekit` or `pytest` command must be in
                                               its `--help`

docs/writing-docs.md says the same for contributors. Generated pages are not read
here: doc_samples.GENERATED names each and what keeps it true. tests/docs/test_pages.py
checks the pages as a whole (no page installs statekit from a package index).
"""

from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path
from typing import Any

import pytest
import yaml
from doc_samples import ROOT, Sample, all_samples, load_yaml, samples_of
from install_checks import check_install, pip_install_problems

import statekit
from statekit.lint.config import LintConfig, load_project_config
from statekit.lint.lint_files import lint_paths

SAMPLES = all_samples()
COPIED = ["machines", "examples", "docs", "tests/charts", "pyproject.toml"]
BIN = Path(sys.executable).parent
TIMEOUT = 120


def _is_chart(data: Any) -> bool:
    return isinstance(data, dict) and "statechart" in data


def _merge(base: Any, part: Any) -> Any:
    if isinstance(base, dict) and isinstance(part, dict):
        merged = dict(base)
        for key, value in part.items():
            merged[key] = _merge(base[key], value) if key in base else value
        return merged
    return part


def _scratch(sample: Sample, tmp_path: Path) -> Path:
    """A reader's folder: the copied parts of the checkout and the page's earlier files."""
    for name in COPIED:
        source = ROOT / name
        if source.is_dir():
            shutil.copytree(source, tmp_path / name)
        else:
            (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy(source, tmp_path / name)
    for earlier in samples_of(ROOT / sample.page):
        if earlier.line >= sample.line:
            break
        if earlier.marker.file:
            (tmp_path / earlier.marker.file).write_text(earlier.text, encoding="utf-8")
    return tmp_path


def _env(folder: Path) -> dict[str, str]:
    env = dict(os.environ)
    env["PATH"] = f"{BIN}{os.pathsep}{env.get('PATH', '')}"
    env["PYTHONDONTWRITEBYTECODE"] = "1"
    env["PYTHONUNBUFFERED"] = "1"  # standard output and error interleave as on a terminal
    env.pop("PYTHONPATH", None)
    return env


def _run(command: str, folder: Path, *, merged: bool = False) -> subprocess.CompletedProcess[str]:
    """Run `command` with bash in `folder`; `merged`: standard error into standard output."""
    return subprocess.run(
        ["bash", "-o", "pipefail", "-c", command],
        cwd=folder,
        env=_env(folder),
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT if merged else subprocess.PIPE,
        text=True,
        timeout=TIMEOUT,
        check=False,
    )


def _lint_slugs(path: Path) -> set[str]:
    report = lint_paths([path], LintConfig())
    assert report.internal_errors == 0
    return {d.slug for d in report.diagnostics}


# -- per language -------------------------------------------------------------------------


def _check_yaml(sample: Sample, tmp_path: Path) -> None:
    data = load_yaml(sample.text)
    if sample.marker.fragment:
        base = _base_chart(sample, tmp_path)
        merged = tmp_path / "merged.yaml"
        merged.write_text(yaml.safe_dump(_merge(base, data), sort_keys=False), encoding="utf-8")
        try:
            statekit.load(merged)
        except statekit.CompileError as exc:
            pytest.fail(f"merged into its chart, {sample} does not compile: {exc.diagnostics}")
        return
    if not _is_chart(data):
        pytest.fail(f"{sample} is YAML but no chart: mark it (`fragment`, `install`, `skip`)")
    path = tmp_path / (sample.marker.file or "chart.yaml")
    path.write_text(sample.text, encoding="utf-8")
    assert _lint_slugs(path) == set(sample.marker.expect), f"statekit lint {sample}"


def _base_chart(sample: Sample, tmp_path: Path) -> Any:
    if sample.marker.base:
        for folder in (tmp_path, ROOT):
            if (folder / sample.marker.base).is_file():
                return load_yaml((folder / sample.marker.base).read_text(encoding="utf-8"))
        pytest.fail(f"{sample}: no chart {sample.marker.base}")
    charts = [
        s
        for s in samples_of(ROOT / sample.page)
        if s.line < sample.line and s.lang == "yaml" and not s.marker.fragment
    ]
    charts = [s for s in charts if _is_chart(load_yaml(s.text))]
    assert charts, f"{sample} is a fragment with no chart above it"
    return load_yaml(charts[-1].text)


def _check_python(sample: Sample, tmp_path: Path) -> None:
    script = tmp_path / (sample.marker.file or "test_sample.py")
    script.write_text(sample.text, encoding="utf-8")
    if re.search(r"^def test_", sample.text, re.M):
        command = f"python -m pytest -q -o addopts= -p no:cacheprovider {shlex.quote(script.name)}"
    else:
        command = f"python {shlex.quote(script.name)}"
    done = _run(command, tmp_path)
    assert done.returncode == 0, f"{sample}:\n{done.stdout}\n{done.stderr}"
    if command.startswith("python -m pytest"):
        assert re.search(r"\b[1-9]\d* passed", done.stdout), done.stdout


def _commands(text: str) -> list[str]:
    commands, current = [], ""
    for line in text.splitlines():
        if not current and (not line.strip() or line.lstrip().startswith("#")):
            continue
        current += line[:-1] + " " if line.rstrip().endswith("\\") else line
        if not line.rstrip().endswith("\\"):
            commands.append(current)
            current = ""
    return commands


def _prepare_git(text: str, folder: Path) -> None:
    """A command with `--rev` reads git history: the scratch folder gets two commits."""
    if "--rev" not in text:
        return
    git = "git -c user.name=docs -c user.email=docs@example.invalid"
    for step in [
        "git init -q",
        "git add -A",
        f"{git} commit -qm one",
        f"{git} commit -qm two --allow-empty",
    ]:
        subprocess.run(step.split(), cwd=folder, check=True, capture_output=True)


def _refuse_installs(sample: Sample) -> None:
    """A block that installs something is never run here (it would change this environment)."""
    if re.search(r"\b(?:pip|pipx|uv|apt-get|npm) install\b|\bmake\b", sample.text):
        pytest.fail(f"{sample} installs or builds: mark it `install` (checked, not run)")


def _check_sh(sample: Sample, tmp_path: Path) -> None:
    _refuse_installs(sample)
    _prepare_git(sample.text, tmp_path)
    for command in _commands(sample.text):
        done = _run(command, tmp_path)
        assert done.returncode in sample.marker.exits, (
            f"{sample}: `{command}` exited {done.returncode}\n"
            f"{done.stdout[-2000:]}\n{done.stderr[-2000:]}"
        )
        assert "Traceback" not in done.stderr, done.stderr


def _console_steps(text: str) -> list[tuple[str, list[str]]]:
    steps: list[tuple[str, list[str]]] = []
    for line in text.rstrip("\n").split("\n"):
        if line.startswith("$ "):
            steps.append((line[2:], []))
        elif steps and steps[-1][0].endswith("\\") and not steps[-1][1]:
            steps[-1] = (steps[-1][0][:-1] + " " + line.strip(), [])
        else:
            assert steps, f"console output before any `$ ` command: {line!r}"
            steps[-1][1].append(line)
    return steps


def _matches(expected: list[str], actual: list[str]) -> bool:
    if not expected:
        return not actual
    if expected[0] == "...":
        return any(_matches(expected[1:], actual[i:]) for i in range(len(actual) + 1))
    return bool(actual) and actual[0] == expected[0] and _matches(expected[1:], actual[1:])


def _check_console(sample: Sample, tmp_path: Path) -> None:
    _refuse_installs(sample)
    _prepare_git(sample.text, tmp_path)
    for command, expected in _console_steps(sample.text):
        done = _run(command, tmp_path, merged=True)
        assert done.returncode in sample.marker.exits, f"`{command}`: {done.stdout}"
        actual = (
            [line.rstrip() for line in done.stdout.rstrip("\n").split("\n")] if done.stdout else []
        )
        assert _matches([e.rstrip() for e in expected], actual), (
            f"{sample}: `{command}` printed\n" + "\n".join(actual)
        )


def _check_toml(sample: Sample, tmp_path: Path) -> None:
    data = tomllib.loads(sample.text)
    if "statekit" in data.get("tool", {}):
        (tmp_path / "pyproject.toml").write_text(sample.text, encoding="utf-8")
        load_project_config(tmp_path / "pyproject.toml")
    elif not sample.marker.skip:
        pytest.fail(f"{sample}: TOML that is not statekit's configuration needs a marker")


def _check_skipped(sample: Sample) -> None:
    if sample.lang == "json":
        json.loads(sample.text)
    elif sample.lang == "toml":
        tomllib.loads(sample.text)
    elif sample.lang == "yaml":
        load_yaml(sample.text)
    elif sample.lang in {"sh", "bash"}:
        done = subprocess.run(
            ["bash", "-n", "-c", sample.text], capture_output=True, text=True, check=False
        )
        assert done.returncode == 0, done.stderr
        for command in _commands(sample.text):
            assert _unknown_options(command) == [], f"{sample}: `{command}`"
    assert pip_install_problems(sample.text) == []


def _unknown_options(command: str) -> list[str]:
    """The `--options` of a `statekit SUBCOMMAND` or `pytest` command that its `--help` lacks."""
    words = shlex.split(command, comments=True)
    if not words or words[0] not in {"statekit", "pytest"}:
        return []
    asks = [words[0], words[1]] if words[0] == "statekit" and len(words) > 1 else words[:1]
    done = subprocess.run(
        [str(BIN / asks[0]), *asks[1:], "--help"], capture_output=True, text=True, check=True
    )
    options = [w.split("=")[0] for w in words if w.startswith("--")]
    return [o for o in options if not re.search(rf"(?<![\w-]){re.escape(o)}(?![\w-])", done.stdout)]


def _check_excerpt(sample: Sample) -> None:
    source = [
        line.strip()
        for line in (ROOT / str(sample.marker.excerpt)).read_text(encoding="utf-8").splitlines()
    ]
    wanted = [line.strip() for line in sample.text.splitlines() if line.strip()]
    wanted = [line for line in wanted if not line.startswith("#")]  # the page's own notes
    position = 0
    for line in wanted:
        assert line in source[position:], (
            f"{sample}: {line!r} is not in {sample.marker.excerpt} (in order)"
        )
        position = source.index(line, position) + 1


CHECKS = {
    "yaml": _check_yaml,
    "yml": _check_yaml,
    "python": _check_python,
    "py": _check_python,
    "sh": _check_sh,
    "bash": _check_sh,
    "console": _check_console,
    "toml": _check_toml,
}


@pytest.mark.parametrize("sample", SAMPLES, ids=str)
def test_the_sample_works_as_written(sample: Sample, tmp_path: Path) -> None:
    assert sample.problem is None, f"{sample}: {sample.problem}"
    marker = sample.marker
    if marker.skip:
        _check_skipped(sample)
    elif marker.install:
        check_install(sample)
    elif marker.excerpt:
        _check_excerpt(sample)
    elif sample.lang == "text":
        pass  # a drawing or a listing, not a sample
    elif sample.lang == "json":
        json.loads(sample.text)
    elif sample.lang in CHECKS:
        CHECKS[sample.lang](sample, _scratch(sample, tmp_path))
    else:
        pytest.fail(
            f"{sample}: no check for {sample.lang or 'a fence without a language'}: mark it"
        )
