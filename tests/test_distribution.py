"""The distributions: the sdist carries LICENSE, tests, docs and machines; the wheel is typed.

Builds both as a release would (`python -m build`: the sdist, then the wheel from
the unpacked sdist, so a file the sdist lacks fails the wheel too), without
build isolation, with the build dependencies of the dev extra. The build runs on a
copy of the working tree (caches included, the virtual environment, git and build
folders left out): building the sdist rewrites `statekit.egg-info`, which other
tests running at the same time (pytest-xdist) read to find the pytest plugin.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
import tarfile
import zipfile
from dataclasses import dataclass
from email.parser import Parser
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
NOT_COPIED = (".venv", ".git", "build", "dist", "*.egg-info", "node_modules", ".mypy_cache")


@dataclass(frozen=True)
class Built:
    sdist: Path
    wheel: Path

    def sdist_members(self) -> set[str]:
        """Paths inside the sdist, without its top folder (`statekit-0.2.0/`)."""
        with tarfile.open(self.sdist) as archive:
            return {name.split("/", 1)[1] for name in archive.getnames() if "/" in name}

    def wheel_members(self) -> set[str]:
        with zipfile.ZipFile(self.wheel) as archive:
            return set(archive.namelist())

    def wheel_metadata(self) -> dict[str, list[str]]:
        with zipfile.ZipFile(self.wheel) as archive:
            name = next(n for n in archive.namelist() if n.endswith(".dist-info/METADATA"))
            message = Parser().parsestr(archive.read(name).decode("utf-8"))
        fields: dict[str, list[str]] = {}
        for key, value in message.items():
            fields.setdefault(key, []).append(value)
        return fields


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> Built:
    out = tmp_path_factory.mktemp("dist")
    tree = tmp_path_factory.mktemp("tree") / "statekit"
    shutil.copytree(REPO, tree, ignore=shutil.ignore_patterns(*NOT_COPIED))
    done = subprocess.run(
        [sys.executable, "-m", "build", "--no-isolation", "--outdir", str(out), str(tree)],
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    (sdist,) = out.glob("*.tar.gz")
    (wheel,) = out.glob("*.whl")
    return Built(sdist=sdist, wheel=wheel)


def _tracked(*folders: str) -> set[str]:
    if not (REPO / ".git").exists():
        pytest.skip("compares with `git ls-files`: needs a git checkout, not an unpacked sdist")
    listed = subprocess.run(
        ["git", "ls-files", "--", *folders],
        cwd=REPO,
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    return set(listed.splitlines())


@pytest.mark.parametrize("folder", ["tests", "docs", "machines", "examples", "scripts", "bench"])
def test_the_sdist_carries_every_tracked_file_of(built: Built, folder: str) -> None:
    tracked = _tracked(folder)
    assert tracked, folder
    assert tracked - built.sdist_members() == set()


@pytest.mark.parametrize(
    "name",
    ["LICENSE", "README.md", "CHANGELOG.md", "pyproject.toml", "Makefile", "statekit/py.typed"],
)
def test_the_sdist_carries(built: Built, name: str) -> None:
    assert name in built.sdist_members()


def test_the_sdist_carries_no_caches(built: Built) -> None:
    junk = {
        name
        for name in built.sdist_members()
        if "__pycache__" in name or name.endswith(".pyc") or ".hypothesis" in name
    }
    assert junk == set()


def test_the_wheel_is_typed_and_carries_the_schema_and_the_license(built: Built) -> None:
    members = built.wheel_members()
    assert "statekit/py.typed" in members
    assert "statekit/schema/statechart.schema.json" in members
    # the inspector's stylesheet, script and icon (`statekit inspect` serves them)
    for name in ("inspect.css", "inspect.js", "favicon.svg"):
        assert f"statekit/inspect/static/{name}" in members
    assert any(name.endswith(".dist-info/licenses/LICENSE") for name in members)


def test_the_metadata_has_an_spdx_license_classifiers_and_keywords(built: Built) -> None:
    metadata = built.wheel_metadata()
    assert metadata["License-Expression"] == ["MIT"]
    assert metadata["License-File"] == ["LICENSE"]
    assert "License" not in metadata  # the deprecated free-text field
    classifiers = metadata["Classifier"]
    assert "Typing :: Typed" in classifiers
    assert {"Programming Language :: Python :: 3.11", "Programming Language :: Python :: 3.12"} <= (
        set(classifiers)
    )
    # PEP 639: an SPDX expression replaces the License :: classifiers (setuptools refuses both)
    assert not [c for c in classifiers if c.startswith("License ::")]
    keywords = metadata["Keywords"][0].split(",")
    assert "statechart" in keywords


def test_the_license_is_mit_for_the_statekit_authors() -> None:
    text = (REPO / "LICENSE").read_text(encoding="utf-8")
    assert text.startswith("MIT License\n")
    assert "Copyright (c) 2026 statekit authors" in text
