"""Output formats of `statekit lint`: pure `diagnostics -> str` functions looked up by name.

Every formatter renders the diagnostics in the order given (the caller sorts)
and returns text ready to write as is: empty, or ending with a newline.
A diagnostic at `Severity.OFF` is a disabled finding and no format renders it.

SARIF and GitHub name files relative to `base_dir` (the caller passes the
repository's top level; default the current folder), since code scanning and
annotations resolve paths from the repository root; text and JSON keep the
paths as given.

SARIF is written by `sarif_format`, and what the formats share lives in
`format_common`; this module holds the registry and the text, JSON and GitHub
formats.

- GitHub workflow commands:
  https://docs.github.com/en/actions/reference/workflow-commands-for-github-actions
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from pathlib import Path
from types import MappingProxyType
from typing import Protocol

from statekit.compiler.diagnostics import Diagnostic, Severity
from statekit.compiler.terminal_text import terminal_text
from statekit.lint.format_common import (
    base_folder,
    clamped,
    dump,
    relative_or_given,
    rendered_diagnostics,
    trace_json,
    with_notes,
)
from statekit.lint.ruleinfo import RuleInfo
from statekit.lint.sarif_format import (
    FINGERPRINT_KEY,
    MAX_RELATED_LOCATIONS,
    MAX_RESULTS,
    MAX_RESULTS_PER_RULE,
    format_sarif,
    help_markdown,
    help_text,
    help_uri,
)

_LINE_BREAK = re.compile(r"\r\n|\r|\n")

__all__ = [
    "FINGERPRINT_KEY",
    "FORMATS",
    "MAX_RELATED_LOCATIONS",
    "MAX_RESULTS",
    "MAX_RESULTS_PER_RULE",
    "Formatter",
    "UnknownFormatError",
    "format_diagnostics",
    "format_github",
    "format_json",
    "format_sarif",
    "format_text",
    "help_markdown",
    "help_text",
    "help_uri",
]


class Formatter(Protocol):
    """`(diagnostics, rules, *, base_dir=None) -> str`: one output format."""

    def __call__(
        self,
        diagnostics: Sequence[Diagnostic],
        rules: Mapping[str, RuleInfo],
        /,
        *,
        base_dir: Path | None = None,
        sources: Mapping[str, str] | None = None,
    ) -> str:
        """Render `diagnostics`; `base_dir` is the folder paths are made relative to, and
        `sources` the text of the files by name (SARIF hashes the flagged lines with it;
        the other formats do not need it)."""
        ...


class UnknownFormatError(ValueError):
    """`format_diagnostics` was asked for a format that does not exist.

    `.choices` lists the valid names, for the caller's usage error.
    """

    def __init__(self, name: str) -> None:
        self.name = name
        self.choices = tuple(FORMATS)
        super().__init__(f"unknown format {name!r}; expected one of: {', '.join(self.choices)}")


def format_diagnostics(
    name: str,
    diagnostics: Sequence[Diagnostic],
    rules: Mapping[str, RuleInfo],
    *,
    base_dir: Path | None = None,
    sources: Mapping[str, str] | None = None,
) -> str:
    """Render `diagnostics` in the format called `name` (a key of `FORMATS`).

    Raises `UnknownFormatError` (a `ValueError`) naming the valid formats.
    """
    try:
        formatter = FORMATS[name]
    except KeyError:
        raise UnknownFormatError(name) from None
    return formatter(diagnostics, rules, base_dir=base_dir, sources=sources)


# -- text ---------------------------------------------------------------------


def format_text(
    diagnostics: Sequence[Diagnostic],
    rules: Mapping[str, RuleInfo],
    /,
    *,
    base_dir: Path | None = None,
    sources: Mapping[str, str] | None = None,
) -> str:
    """One `path:line:col: severity[slug] message` line per diagnostic, for a terminal
    (`terminal_text`: a control character in a name is written as its escape).

    Each note (and any further line of a multi-line message) follows on its own
    line, indented by four spaces. No diagnostics give the empty string.
    """
    lines: list[str] = []
    for diagnostic in rendered_diagnostics(diagnostics):
        first, *rest = _LINE_BREAK.split(diagnostic.message)
        lines.append(f"{diagnostic.span}: {diagnostic.severity.value}[{diagnostic.slug}] {first}")
        for note in (*rest, *diagnostic.notes):
            lines.extend(f"    {line}" for line in _LINE_BREAK.split(note))
    return "".join(f"{terminal_text(line)}\n" for line in lines)


# -- json ---------------------------------------------------------------------


def format_json(
    diagnostics: Sequence[Diagnostic],
    rules: Mapping[str, RuleInfo],
    /,
    *,
    base_dir: Path | None = None,
    sources: Mapping[str, str] | None = None,
) -> str:
    """A versioned JSON document: the diagnostics with raw positions (and their related
    locations, and for a finding with a counterexample trace its steps as `trace`, each
    with its checked `payload`: see `format_common.trace_json`), and counts by severity."""
    shown = rendered_diagnostics(diagnostics)
    document = {
        "version": 1,
        "diagnostics": [
            {
                "slug": d.slug,
                "severity": d.severity.value,
                "message": d.message,
                "file": d.span.file,
                "line": d.span.line,
                "column": d.span.column,
                "end_line": d.span.end_line,
                "end_column": d.span.end_column,
                "notes": list(d.notes),
                "related": [
                    {
                        "file": r.span.file,
                        "line": r.span.line,
                        "column": r.span.column,
                        "end_line": r.span.end_line,
                        "end_column": r.span.end_column,
                        "message": r.message,
                    }
                    for r in d.related
                ],
                **({"trace": trace_json(d.trace)} if d.trace else {}),
            }
            for d in shown
        ],
        "summary": {
            "error": sum(d.severity is Severity.ERROR for d in shown),
            "warning": sum(d.severity is Severity.WARNING for d in shown),
            "info": sum(d.severity is Severity.INFO for d in shown),
        },
    }
    return dump(document)


# -- github -------------------------------------------------------------------


def format_github(
    diagnostics: Sequence[Diagnostic],
    rules: Mapping[str, RuleInfo],
    /,
    *,
    base_dir: Path | None = None,
    sources: Mapping[str, str] | None = None,
) -> str:
    """One GitHub Actions `::error`/`::warning`/`::notice` workflow command per diagnostic.

    Files below `base_dir` (default: the current folder) are named relative to
    it, with `/`; others as given. Notes follow the message on their own lines;
    the runner shows them in the annotation. No diagnostics give the empty string.
    """
    base = base_folder(base_dir)
    lines: list[str] = []
    for d in rendered_diagnostics(diagnostics):
        command = {Severity.ERROR: "error", Severity.INFO: "notice"}.get(d.severity, "warning")
        line, column, end_line, end_column = clamped(d.span)
        properties = (
            ("file", relative_or_given(d.span.file, base)),
            ("line", str(line)),
            ("col", str(column)),
            ("endLine", str(end_line)),
            ("endColumn", str(end_column)),
            ("title", f"statekit [{d.slug}]"),
        )
        rendered = ",".join(f"{key}={_escape_property(value)}" for key, value in properties)
        lines.append(f"::{command} {rendered}::{_escape_data(with_notes(d))}\n")
    return "".join(lines)


def _escape_data(text: str) -> str:
    """A workflow command's data: `%`, CR and LF as the runner reads them back, and every
    other character a log viewer could act on (an escape sequence) as its escape."""
    return terminal_text(text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A"))


def _escape_property(text: str) -> str:
    return _escape_data(text).replace(":", "%3A").replace(",", "%2C")


FORMATS: Mapping[str, Formatter] = MappingProxyType(
    {
        "text": format_text,
        "json": format_json,
        "sarif": format_sarif,
        "github": format_github,
    }
)
"""The lint output formats by name, in the order `--help` should list them."""
