"""The checks of blocks that install statekit or set it up elsewhere (marked `install`).

statekit is on no package index: a reader installs it from a clone, a built wheel or the
repository by URL. These blocks are never run (they would change this environment); each
`pip install`, `make` target, pre-commit hook and `rev:` is checked against the checkout.
"""

from __future__ import annotations

import re
import shlex
import tomllib
from typing import Any

from doc_samples import ROOT, Sample, load_yaml

# `pip install` arguments that name what a reader can install from (the package is not on
# an index): this checkout, a path, a built wheel, or the repository by URL.
INSTALL_SOURCES = re.compile(
    r"^(?:\.|/path/to/statekit|dist/statekit-[\w.]+-py3-none-any\.whl)(?:\[(?P<a>[\w,]+)\])?$"
    r"|^statekit(?:\[(?P<b>[\w,]+)\])? @ git\+<repository URL>(?:@<[\w -]+>)?$"
)


def _project() -> dict[str, Any]:
    with (ROOT / "pyproject.toml").open("rb") as handle:
        return dict(tomllib.load(handle)["project"])


def pip_install_problems(text: str) -> list[str]:
    """What is wrong with each `pip install` of `text`: a source a reader cannot install
    from (statekit by name from an index), a wheel of another version, or an extra
    pyproject.toml does not declare."""
    project = _project()
    extras: dict[str, list[str]] = project["optional-dependencies"]
    from_index = {"build", "pre-commit"} | {
        r for rs in extras.values() for r in rs if not r.startswith("statekit")
    }  # (the dev extra names statekit's own extras: those are not on an index either)
    problems = []
    for found in re.finditer(
        r"pip install ((?:[^\s#'\"]+|'[^']*'|\"[^\"]*\")(?: (?:'[^']*'|[^\s#]+))*)", text
    ):
        for argument in shlex.split(found[1]):
            if argument.startswith("-") or argument in from_index:
                continue  # an option; a tool, or what an extra installs beside statekit
            match = INSTALL_SOURCES.match(argument)
            if not match:
                problems.append(f"`pip install {argument}`: not something a reader can install")
                continue
            if argument.endswith(".whl") and f"-{project['version']}-" not in argument:
                problems.append(f"`{argument}`: not the wheel of version {project['version']}")
            named = (match["a"] or match["b"] or "").split(",")
            problems += [f"`{argument}`: no extra {e!r}" for e in named if e and e not in extras]
    return problems


def check_install(sample: Sample) -> None:
    """An `install` block: every `pip install` installable, every `make` target and pre-commit
    hook there, `rev:` a commit SHA or this version's tag (v + the version)."""
    problems = pip_install_problems(sample.text)
    targets = set(re.findall(r"^([\w-]+):", (ROOT / "Makefile").read_text(encoding="utf-8"), re.M))
    problems += [
        f"no make target {t}"
        for t in re.findall(r"\bmake ([\w-]+)", sample.text)
        if t not in targets
    ]
    tag = f"v{_project()['version']}"
    data = load_yaml(sample.text) if sample.lang == "yaml" else None
    hooks = {h["id"] for h in load_yaml((ROOT / ".pre-commit-hooks.yaml").read_text("utf-8"))}
    for repo in data.get("repos", []) if isinstance(data, dict) else []:
        problems += [f"no hook {h['id']}" for h in repo["hooks"] if h["id"] not in hooks]
        if repo["rev"] not in {"<commit SHA>", tag}:
            problems.append(f"rev {repo['rev']!r}: a commit SHA, or the tag {tag}")
    if "python -m build" in sample.text:
        dev = " ".join(_project()["optional-dependencies"]["dev"])
        problems += [] if re.search(r"\bbuild\b", dev) else ["`build` is not in the dev extra"]
    assert problems == [], problems
