"""The fenced blocks of the documentation and the markers that say what each one shows.

Which pages are read (`PAGES`), which are generated and checked elsewhere
(`GENERATED`), how a page is cut into `Sample`s and how a marker is read. The
vocabulary is documented in docs/contributing-docs.md and at the top of
tests/docs/test_doc_samples.py.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import yaml

ROOT = Path(__file__).resolve().parents[2]

GENERATED: dict[str, str] = {
    "docs/rules.md": (
        "written by `statekit rules --markdown` from the rule modules' docstrings: "
        "tests/cli/test_lint_cli.py::test_docs_rules_md_is_the_rules_markdown keeps it equal; "
        "each rule's behaviour is pinned by a fixture (tests/lint/test_rule_fixtures.py), "
        "not by these snippets"
    ),
    "docs/machines/": (
        "written by `statekit docs machines/ -o docs/machines`: `make test` runs it with "
        "--check, tests/diagrams/test_site.py tests the writer"
    ),
}
"""Pages the harness does not read, and what keeps each of them true."""

FENCE = re.compile(r"^(?P<indent>[ \t]*)(?P<fence>```+|~~~+)(?P<lang>[^\s`]*)\s*$")
MARKER = re.compile(r"^\s*<!--\s*sample:(?P<body>.*?)-->\s*$")
WORDS = ("file", "expect", "fragment", "excerpt", "exit", "install", "skip")


class _Loader(yaml.SafeLoader):
    """YAML as statekit reads it: only true/false are booleans (`on:` stays a string)."""


_Loader.yaml_implicit_resolvers = {
    key: [(tag, rx) for tag, rx in resolvers if tag != "tag:yaml.org,2002:bool"]
    for key, resolvers in yaml.SafeLoader.yaml_implicit_resolvers.items()
}
_Loader.add_implicit_resolver(
    "tag:yaml.org,2002:bool", re.compile(r"^(?:true|True|TRUE|false|False|FALSE)$"), list("tTfF")
)


def load_yaml(text: str) -> Any:
    """The YAML value of `text`, read as statekit reads charts (`on:` a string)."""
    return yaml.load(text, Loader=_Loader)


def pages(root: Path = ROOT) -> list[Path]:
    """README.md, CHANGELOG.md, docs/*.md and machines/README.md, without the generated pages."""
    found = [
        root / "README.md",
        root / "CHANGELOG.md",
        *sorted((root / "docs").glob("*.md")),
        root / "machines/README.md",
    ]
    return [p for p in found if p.relative_to(root).as_posix() not in GENERATED]


@dataclass(frozen=True)
class Marker:
    """What an `<!-- sample: ... -->` comment right before a fence says of its block."""

    file: str | None = None
    expect: frozenset[str] = frozenset()
    fragment: bool = False
    base: str | None = None
    excerpt: str | None = None
    exits: frozenset[int] = frozenset({0})
    install: bool = False
    skip: str | None = None


@dataclass(frozen=True)
class Sample:
    """One fenced block: where it is, its language, its text (dedented) and its marker."""

    page: str
    line: int
    lang: str
    text: str
    marker: Marker = field(default_factory=Marker)
    problem: str | None = None

    def __str__(self) -> str:
        return f"{self.page}:{self.line}:{self.lang or 'no-language'}"


def parse_marker(body: str) -> Marker:
    """Read the clauses of a marker (`file NAME; expect SLUG, SLUG`; `skip REASON` comes last,
    its reason free text); ValueError for anything else."""
    marker = Marker()
    rest = body.strip()
    while rest:
        if rest.startswith("skip"):
            reason = rest[4:].lstrip(" :").strip()
            if not reason:
                raise ValueError("`skip` needs a reason")
            return replace(marker, skip=reason)
        clause, _, rest = (c.strip() for c in rest.partition(";"))
        word, _, argument = clause.partition(" ")
        argument = argument.strip()
        if word == "file" and argument:
            marker = replace(marker, file=argument)
        elif word == "expect" and argument:
            marker = replace(marker, expect=frozenset(s.strip() for s in argument.split(",")))
        elif word == "fragment" and (not argument or argument.startswith("of ")):
            marker = replace(marker, fragment=True, base=argument[3:].strip() or None)
        elif word == "excerpt" and argument.startswith("of "):
            marker = replace(marker, excerpt=argument[3:].strip())
        elif word == "exit" and re.fullmatch(r"\d+(,\d+)*", argument):
            marker = replace(marker, exits=frozenset(int(n) for n in argument.split(",")))
        elif word == "install" and not argument:
            marker = replace(marker, install=True)
        else:
            raise ValueError(f"unknown marker clause {clause!r} (words: {', '.join(WORDS)})")
    return marker


def samples_of(page: Path, root: Path = ROOT) -> list[Sample]:
    """Every fenced block of `page`, with the marker on the line before it (blank lines between
    allowed); a malformed marker or an unclosed fence gives a Sample with its `problem`."""
    name = page.relative_to(root).as_posix()
    lines = page.read_text(encoding="utf-8").split("\n")
    found: list[Sample] = []
    index = 0
    while index < len(lines):
        opening = FENCE.match(lines[index])
        if not opening:
            index += 1
            continue
        indent, fence, lang = opening["indent"], opening["fence"], opening["lang"]
        end = index + 1
        while end < len(lines) and lines[end].strip() != fence:
            end += 1
        body = [
            line[len(indent) :] if line.startswith(indent) else line
            for line in lines[index + 1 : end]
        ]
        marker, problem = Marker(), None
        before = index - 1
        while before >= 0 and not lines[before].strip():
            before -= 1
        match = MARKER.match(lines[before]) if before >= 0 else None
        if match:
            try:
                marker = parse_marker(match["body"])
            except ValueError as exc:
                problem = str(exc)
        if end == len(lines):
            problem = "the fence is never closed"
        found.append(Sample(name, index + 1, lang.lower(), "\n".join(body) + "\n", marker, problem))
        index = end + 1
    return found


def all_samples(root: Path = ROOT) -> list[Sample]:
    """The samples of every page the harness reads, in page order."""
    return [sample for page in pages(root) for sample in samples_of(page, root)]
