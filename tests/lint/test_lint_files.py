"""Folder walks as git sees a repository: ignore files, `exclude`, only charts, never `.git/`."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from statekit.lint.config import Exclude, LintConfig
from statekit.lint.lint_files import is_chart_file, lint_paths, select_files

CHART = "statechart: c\ninitial: a\nstates: {a: {final: true}}\n"

needs_git = pytest.mark.skipif(shutil.which("git") is None, reason="needs git")


def git(repo: Path, *args: str) -> str:
    """Run git in `repo` without the user's or the system's configuration."""
    env = {
        **os.environ,
        "GIT_CONFIG_GLOBAL": os.devnull,
        "GIT_CONFIG_NOSYSTEM": "1",
        "HOME": str(repo),
    }
    done = subprocess.run(
        ["git", *args], cwd=repo, env=env, capture_output=True, text=True, check=True
    )
    return done.stdout


def write(root: Path, files: dict[str, str]) -> None:
    for name, text in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text, encoding="utf-8")


# -- which YAML files are charts ----------------------------------------------


@pytest.mark.parametrize(
    ("text", "chart"),
    [
        (CHART, True),
        ("# a comment\n\nstatechart: c\n", True),
        ("%YAML 1.2\n---\nstatechart: c\n", True),
        ("---\ninitial: a\nstatechart: c\n", True),
        ('"statechart": c\n', True),
        ("{statechart: c, initial: a}\n", True),
        ("\ufeffstatechart: c\n", True),
        ("events:\n  statechart: {}\nstatechart: c\n", True),
        ("statechart: [\n", True),  # broken, but plainly meant as a chart: lint says why
        ("statechart: c\n  bad: indentation: here\n", True),
        ("statechart:\r\n  - [\r\n", True),
        ("on: push\njobs:\n  test: {runs-on: ubuntu-latest}\n", False),
        ("name: ci\nstatechart_like: 1\n", False),
        ("events:\n  statechart: {}\n", False),  # nested, not at the root
        ("- statechart: c\n", False),
        ("just text\n", False),
        ("", False),
        ("a: 1\n---\nstatechart: second document\n", False),
        ("apiVersion: v1\nkind: {{ .Values.kind }}\n", False),  # a template, not YAML
        ("key: {{ x }}\n---\nstatechart: later\n", False),
        ("x: 1\n" * 20_000 + "statechart: beyond the bounded read\n", False),
    ],
)
def test_only_files_whose_first_document_has_a_statechart_key_are_charts(
    tmp_path: Path, text: str, chart: bool
) -> None:
    path = tmp_path / "f.yaml"
    path.write_text(text, encoding="utf-8")
    assert is_chart_file(path) is chart


@pytest.mark.parametrize(
    "codec", ["utf-8-sig", "utf-16", "utf-16-le", "utf-16-be", "utf-32", "utf-32-le", "utf-32-be"]
)
@pytest.mark.parametrize(("text", "chart"), [(CHART, True), ("on: push\n", False)])
def test_charts_in_other_unicode_encodings_are_found(
    tmp_path: Path, codec: str, text: str, chart: bool
) -> None:
    """So that linting them says a chart is UTF-8, instead of a silent skip."""
    path = tmp_path / "f.yaml"
    path.write_bytes(text.encode(codec))
    assert is_chart_file(path) is chart


def test_a_file_that_is_not_utf8_is_sniffed_without_error(tmp_path: Path) -> None:
    path = tmp_path / "latin1.yaml"
    path.write_bytes(b"statechart: caf\xe9\n")
    assert is_chart_file(path)
    path.write_bytes(b"\xff\xfe\x00junk: \xe9\n")
    assert not is_chart_file(path)


# -- a repository as people have them ------------------------------------------

UNUSED = "statechart: c\nevents: {GO: {}, SPARE: {}}\ninitial: a\nstates:\n  a: {on: {GO: a}}\n"
"""A chart with one `unused-event` warning, so every linted file shows up in the findings."""

REPOSITORY = {
    ".gitignore": "build/\n*.draft.yaml\n!keep.draft.yaml\n",
    "pyproject.toml": '[tool.statekit.lint]\nexclude = ["generated/"]\n',
    ".venv/lib/site-packages/pkg/chart.yaml": UNUSED,
    "node_modules/pkg/chart.yaml": UNUSED,
    "build/out.yaml": UNUSED,
    ".github/workflows/ci.yml": "on: push\njobs:\n  test: {runs-on: ubuntu-latest}\n",
    "config/settings.yaml": "debug: true\n",
    "charts/order.yaml": UNUSED,
    "charts/sub/.gitignore": "ignored.yaml\n",
    "charts/sub/ignored.yaml": UNUSED,
    "charts/sub/kept.yml": UNUSED,
    "charts/x.draft.yaml": UNUSED,
    "charts/keep.draft.yaml": UNUSED,
    "local/mine.yaml": UNUSED,
    "generated/gen.yaml": UNUSED,
    "extra/e.yaml": UNUSED,
    "flow.yaml": "{statechart: flow, events: {GO: {}}, initial: a, states: {a: {final: true}}}\n",
    "notes.txt": "statechart: not yaml by name\n",
}
LINTED = [
    "charts/keep.draft.yaml",
    "charts/order.yaml",
    "charts/sub/kept.yml",
    "extra/e.yaml",
    "flow.yaml",
]


@pytest.fixture
def repository(tmp_path: Path) -> Path:
    root = tmp_path / "repo"
    root.mkdir()
    if shutil.which("git") is not None:
        git(root, "init", "-q")
    else:  # the layout git would make, for the walk's purposes
        (root / ".git" / "info").mkdir(parents=True)
    write(root, REPOSITORY)
    (root / ".git" / "info" / "exclude").write_text("# local\nlocal/\n", encoding="utf-8")
    (root / ".git" / "config.yaml").write_text(UNUSED, encoding="utf-8")  # never walked
    return root


def linted(root: Path, *args: str, cwd: Path | None = None) -> tuple[list[str], str]:
    """The files `statekit lint --format json ARGS` reports (relative to `root`), and stderr."""
    here = cwd or root
    done = subprocess.run(
        [sys.executable, "-m", "statekit", "lint", "--format", "json", *args],
        cwd=here,
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done
    found = {d["file"] for d in json.loads(done.stdout)["diagnostics"]}
    relative = (Path(os.path.normpath(here / f)).relative_to(root).as_posix() for f in found)
    return sorted(relative), done.stderr


def test_a_walk_honours_ignore_files_and_lints_only_charts(repository: Path) -> None:
    files, summary = linted(repository, ".")
    assert files == LINTED
    assert "5 file(s)" in summary
    assert "2 YAML file(s) skipped (not charts)" in summary  # ci.yml, settings.yaml


def test_exclude_on_the_command_line_adds_to_the_project(repository: Path) -> None:
    files, _ = linted(repository, ".", "--exclude", "extra/", "--exclude", "*.yml")
    assert files == [f for f in LINTED if f not in ("extra/e.yaml", "charts/sub/kept.yml")]


def test_files_named_explicitly_are_always_linted(repository: Path) -> None:
    named = ["build/out.yaml", "charts/sub/ignored.yaml", "generated/gen.yaml", "local/mine.yaml"]
    files, _ = linted(repository, *named, "--exclude", "*.yaml")
    assert files == sorted(named)


def test_a_walk_from_a_subfolder_honours_the_parents_ignore_files(repository: Path) -> None:
    files, _ = linted(repository, ".", cwd=repository / "charts")
    assert files == ["charts/keep.draft.yaml", "charts/order.yaml", "charts/sub/kept.yml"]
    files, _ = linted(repository, "charts/sub", cwd=repository)
    assert files == ["charts/sub/kept.yml"]


def test_a_folder_named_explicitly_is_walked_even_if_ignored(repository: Path) -> None:
    files, _ = linted(repository, "local", "build", ".venv", cwd=repository)
    assert files == [".venv/lib/site-packages/pkg/chart.yaml", "build/out.yaml", "local/mine.yaml"]
    files, _ = linted(repository, ".", cwd=repository / ".venv" / "lib")
    assert files == [".venv/lib/site-packages/pkg/chart.yaml"]
    files, _ = linted(repository, "lib", cwd=repository / ".venv")
    assert files == [".venv/lib/site-packages/pkg/chart.yaml"]


def test_the_walk_follows_no_symlinked_folder(repository: Path) -> None:
    (repository / "charts" / "loop").symlink_to(repository, target_is_directory=True)
    files, _ = linted(repository, ".")
    assert files == LINTED


def test_without_a_repository_gitignore_files_still_apply(tmp_path: Path) -> None:
    write(tmp_path, {".gitignore": "skip/\n", "skip/a.yaml": CHART, "b.yaml": CHART})
    selection = select_files([tmp_path])
    assert [p.name for p in selection.files] == ["b.yaml"]


def test_lint_paths_takes_exclude_from_the_configuration(tmp_path: Path) -> None:
    write(tmp_path, {"a/x.yaml": CHART, "b/y.yaml": CHART})
    config = LintConfig(exclude=(Exclude(base=tmp_path, patterns=("a/",)),))
    report = lint_paths([tmp_path], config)
    assert [Path(f).name for f in report.files] == ["y.yaml"]


# -- the ignore rules agree with git ------------------------------------------

TREE = [
    "top.yaml",
    "keep.yaml",
    "a/b.yaml",
    "a/c.yaml",
    "a/deep/d.yaml",
    "sub/x.yaml",
    "sub/y.yaml",
    "sub/deep/z.yaml",
    "dir/x.yaml",
    "deep/w.yaml",
    "#hash.yaml",
    "sp ace.yaml",
    "UPPER.YAML",
]


@needs_git
@pytest.mark.parametrize(
    "ignores",
    [
        {".gitignore": "*.yaml\n!keep.yaml\n"},
        {".gitignore": "/top.yaml\n"},
        {".gitignore": "x.yaml\n"},
        {".gitignore": "sub/\n"},
        {".gitignore": "sub\n"},
        {".gitignore": "**/deep/*.yaml\n"},
        {".gitignore": "deep/\n"},
        {".gitignore": "/deep/\n"},
        {".gitignore": "a/**\n!a/b.yaml\n"},
        {".gitignore": "dir/\n!dir/x.yaml\n"},  # a file in an ignored folder stays ignored
        {".gitignore": "*.yaml\n", "sub/.gitignore": "!x.yaml\n"},
        {".gitignore": "!*.yaml\n", "sub/.gitignore": "*\n"},
        {".gitignore": "[a-c]/*.yaml\n"},
        {".gitignore": "\\#hash.yaml\nsp\\ ace.yaml\n"},
        {".gitignore": "# comment\n\n   \ntop.yaml   \n"},
        {".gitignore": "?.yaml\n*.YAML\n"},
        {".gitignore": "a/deep\n", ".git/info/exclude": "sub/y.yaml\n"},
        {".git/info/exclude": "*.yaml\n", ".gitignore": "!top.yaml\n"},
        {"sub/deep/.gitignore": "/z.yaml\n", "a/.gitignore": "deep/d.yaml\n"},
        {".gitignore": "sub/*\n!sub/x.yaml\n"},
        {".gitignore": "a/*\n!a/deep/\n"},
        {".gitignore": "/sub/deep\n**/b.yaml\n"},
        {".gitignore": "**/\n"},
        {".gitignore": "*/\n!a/\n"},
        {".gitignore": "deep\n", "sub/.gitignore": "!deep/\n"},
        {".gitignore": "*\n!*/\n!*.yaml\n"},
    ],
    ids=lambda ignores: repr(ignores)[:60],
)
def test_the_walk_lints_what_git_does_not_ignore(tmp_path: Path, ignores: dict[str, str]) -> None:
    git(tmp_path, "init", "-q")
    write(tmp_path, {name: CHART for name in TREE})
    write(tmp_path, ignores)
    listed = git(tmp_path, "ls-files", "--others", "--exclude-standard", "-z").split("\0")
    expected = sorted(name for name in listed if name.lower().endswith((".yaml", ".yml")))
    walked = sorted(p.relative_to(tmp_path).as_posix() for p in select_files([tmp_path]).files)
    assert walked == expected


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs FIFOs")
def test_a_walk_opens_only_regular_files(tmp_path: Path) -> None:
    write(tmp_path, {"real.yaml": CHART})
    os.mkfifo(tmp_path / "pipe.yaml")  # opening it for reading would block
    (tmp_path / "dangling.yaml").symlink_to(tmp_path / "nowhere.yaml")
    (tmp_path / "link.yaml").symlink_to(tmp_path / "real.yaml")
    selection = select_files([tmp_path])
    assert [p.name for p in selection.files] == ["link.yaml", "real.yaml"]
    assert selection.skipped == 0


# -- fuzzers: the sniff agrees with a full parse, the walk agrees with git ------

_keys = st.sampled_from(["statechart", "events", "initial", "states", "on", "x", "Statechart"])
_scalars = st.one_of(st.text(max_size=8), st.integers(), st.booleans(), st.none())


def _collections(inner: st.SearchStrategy[object]) -> st.SearchStrategy[object]:
    return st.one_of(st.lists(inner, max_size=3), st.dictionaries(_keys, inner, max_size=3))


_values: st.SearchStrategy[object] = st.recursive(_scalars, _collections, max_leaves=8)
_documents = st.one_of(st.dictionaries(_keys, _values, max_size=5), _values)


@settings(max_examples=300, deadline=None)
@given(
    first=_documents,
    rest=st.lists(_documents, max_size=2),
    flow=st.sampled_from([True, False, None]),
    comment=st.booleans(),
    explicit_start=st.booleans(),
)
def test_the_sniff_agrees_with_a_full_parse(
    first: object, rest: list[object], flow: bool | None, comment: bool, explicit_start: bool
) -> None:
    text = yaml.safe_dump_all(
        [first, *rest],
        default_flow_style=flow,
        explicit_start=explicit_start or bool(rest),
        allow_unicode=True,
    )
    if comment:
        text = "# yaml-language-server: $schema=x.json\n" + text
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "f.yaml"
        path.write_text(text, encoding="utf-8")
        expected = isinstance(first, dict) and "statechart" in first
        assert is_chart_file(path) is expected, text


_PATTERNS = [
    "*.yaml",
    "!*.yaml",
    "!keep.yaml",
    "/top.yaml",
    "x.yaml",
    "sub/",
    "sub",
    "/sub",
    "sub/*",
    "!sub/x.yaml",
    "a/**",
    "!a/b.yaml",
    "**/deep",
    "**/deep/",
    "deep/*.yaml",
    "!deep/",
    "*/",
    "!a/",
    "*",
    "!*/",
    "?.yaml",
    "[a-c]/*.yaml",
    "a/deep",
    "!a/deep/d.yaml",
    "**/z.yaml",
    "dir/",
    "!dir/x.yaml",
]
_ignore_files = st.lists(st.sampled_from(_PATTERNS), max_size=5).map(
    lambda lines: "".join(f"{line}\n" for line in lines)
)


@needs_git
@settings(max_examples=40, deadline=None)
@given(
    root=_ignore_files,
    sub=_ignore_files,
    deep=_ignore_files,
    info=_ignore_files,
)
def test_any_ignore_files_give_the_files_git_does_not_ignore(
    root: str, sub: str, deep: str, info: str
) -> None:
    with tempfile.TemporaryDirectory() as folder:
        repo = Path(folder)
        git(repo, "init", "-q")
        write(repo, {name: CHART for name in TREE})
        write(repo, {".gitignore": root, "sub/.gitignore": sub, "a/deep/.gitignore": deep})
        (repo / ".git" / "info" / "exclude").write_text(info, encoding="utf-8")
        listed = git(repo, "ls-files", "--others", "--exclude-standard", "-z").split("\0")
        expected = sorted(name for name in listed if name.lower().endswith((".yaml", ".yml")))
        walked = sorted(p.relative_to(repo).as_posix() for p in select_files([repo]).files)
        assert walked == expected


def test_a_walk_goes_any_depth_of_folders(tmp_path: Path) -> None:
    folders = [tmp_path]
    for _ in range(1_100):  # deeper than Python's recursion limit (1,000)
        folders.append(folders[-1] / "d")
        folders[-1].mkdir()
    (folders[-1] / "c.yaml").write_text(CHART, encoding="utf-8")
    (tmp_path / "top.yaml").write_text(CHART, encoding="utf-8")
    try:
        files = select_files([tmp_path]).files
        assert [p.name for p in files] == ["top.yaml", "c.yaml"]
    finally:  # bottom up: shutil.rmtree (pytest's clean-up) recurses once per level
        (folders[-1] / "c.yaml").unlink()
        for folder in reversed(folders[1:]):
            folder.rmdir()
