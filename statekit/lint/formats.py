"""Output formats of `statekit lint`: pure `diagnostics -> str` functions looked up by name.

Every formatter renders the diagnostics in the order given (the caller sorts)
and returns text ready to write as is: empty, or ending with a newline.
A diagnostic at `Severity.OFF` is a disabled finding and no format renders it.

- SARIF 2.1.0: https://docs.oasis-open.org/sarif/sarif/v2.1.0/sarif-v2.1.0.html
- GitHub workflow commands:
  https://docs.github.com/en/actions/reference/workflow-commands-for-github-actions
"""

from __future__ import annotations

import functools
import hashlib
import importlib.metadata
import inspect
import json
import re
from collections.abc import Callable, Mapping, Sequence
from types import MappingProxyType
from urllib.parse import quote

from statekit.compiler.diagnostics import Diagnostic, Severity, SourceSpan
from statekit.lint.ruleinfo import RuleInfo

__all__ = [
    "FORMATS",
    "Formatter",
    "UnknownFormatError",
    "format_diagnostics",
    "format_github",
    "format_json",
    "format_sarif",
    "format_text",
]

Formatter = Callable[[Sequence[Diagnostic], Mapping[str, RuleInfo]], str]

SARIF_SCHEMA_URI = "https://json.schemastore.org/sarif-2.1.0.json"
INFORMATION_URI = "https://github.com/statekit/statekit"
FINGERPRINT_KEY = "statekitFindingHash/v1"
"""The `partialFingerprints` key; bump the version if the hashed fields change."""

_LINE_BREAK = re.compile(r"\r\n|\r|\n")
_WINDOWS_DRIVE = re.compile(r"[A-Za-z]:/")
# RFC 3986 sub-delims and "@" may stay literal in a path; ":" may not in a
# relative reference (its first segment would read as a scheme).
_RELATIVE_PATH_SAFE = "/!$&'()*+,;=@"
_ABSOLUTE_PATH_SAFE = _RELATIVE_PATH_SAFE + ":"

_SARIF_LEVEL = {Severity.ERROR: "error", Severity.WARNING: "warning", Severity.OFF: "none"}


class UnknownFormatError(ValueError):
    """`format_diagnostics` was asked for a format that does not exist.

    `.choices` lists the valid names, for the caller's usage error.
    """

    def __init__(self, name: str) -> None:
        self.name = name
        self.choices = tuple(FORMATS)
        super().__init__(f"unknown format {name!r}; expected one of: {', '.join(self.choices)}")


def format_diagnostics(
    name: str, diagnostics: Sequence[Diagnostic], rules: Mapping[str, RuleInfo]
) -> str:
    """Render `diagnostics` in the format called `name` (a key of `FORMATS`).

    Raises `UnknownFormatError` (a `ValueError`) naming the valid formats.
    """
    try:
        formatter = FORMATS[name]
    except KeyError:
        raise UnknownFormatError(name) from None
    return formatter(diagnostics, rules)


# -- text ---------------------------------------------------------------------


def format_text(diagnostics: Sequence[Diagnostic], rules: Mapping[str, RuleInfo]) -> str:
    """One `path:line:col: severity[slug] message` line per diagnostic.

    Each note (and any further line of a multi-line message) follows on its own
    line, indented by four spaces. No diagnostics give the empty string.
    """
    lines: list[str] = []
    for diagnostic in _shown(diagnostics):
        first, *rest = _LINE_BREAK.split(diagnostic.message)
        lines.append(f"{diagnostic.span}: {diagnostic.severity.value}[{diagnostic.slug}] {first}")
        for note in (*rest, *diagnostic.notes):
            lines.extend(f"    {line}" for line in _LINE_BREAK.split(note))
    return "".join(f"{line}\n" for line in lines)


# -- json ---------------------------------------------------------------------


def format_json(diagnostics: Sequence[Diagnostic], rules: Mapping[str, RuleInfo]) -> str:
    """A versioned JSON document: the diagnostics with raw positions, and counts by severity."""
    shown = _shown(diagnostics)
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
            }
            for d in shown
        ],
        "summary": {
            "error": sum(d.severity is Severity.ERROR for d in shown),
            "warning": sum(d.severity is Severity.WARNING for d in shown),
        },
    }
    return _dump(document)


# -- sarif --------------------------------------------------------------------


def format_sarif(diagnostics: Sequence[Diagnostic], rules: Mapping[str, RuleInfo]) -> str:
    """A SARIF 2.1.0 log with one run: every rule in `rules`, and one result per diagnostic.

    A diagnostic whose slug is not in `rules` (a compiler error, say) gets a
    minimal rule entry of its own, so that every `ruleIndex` resolves.
    """
    shown = _shown(diagnostics)
    infos = sorted(rules.values(), key=lambda info: info.slug)
    documented = {info.slug for info in infos}
    undocumented = sorted({d.slug for d in shown} - documented)
    descriptors = [_rule_descriptor(info) for info in infos]
    descriptors += [_bare_rule_descriptor(slug) for slug in undocumented]
    rule_index = {str(descriptor["id"]): i for i, descriptor in enumerate(descriptors)}

    results: list[dict[str, object]] = []
    occurrences: dict[str, int] = {}
    for d in shown:
        location = _artifact_location(d.span.file)
        digest = _fingerprint(d.slug, location["uri"], d.message)
        occurrences[digest] = occurrences.get(digest, 0) + 1
        line, column, end_line, end_column = _clamped(d.span)
        results.append(
            {
                "ruleId": d.slug,
                "ruleIndex": rule_index[d.slug],
                "level": _SARIF_LEVEL[d.severity],
                "message": {"text": _with_notes(d)},
                "locations": [
                    {
                        "physicalLocation": {
                            "artifactLocation": location,
                            "region": {
                                "startLine": line,
                                "startColumn": column,
                                "endLine": end_line,
                                "endColumn": end_column,
                            },
                        }
                    }
                ],
                "partialFingerprints": {FINGERPRINT_KEY: f"{digest}:{occurrences[digest]}"},
            }
        )

    log = {
        "$schema": SARIF_SCHEMA_URI,
        "version": "2.1.0",
        "runs": [
            {
                "tool": {
                    "driver": {
                        "name": "statekit",
                        "informationUri": INFORMATION_URI,
                        "semanticVersion": _statekit_version(),
                        "rules": descriptors,
                    }
                },
                "columnKind": "unicodeCodePoints",
                "results": results,
            }
        ],
    }
    return _dump(log)


def _rule_descriptor(info: RuleInfo) -> dict[str, object]:
    doc = inspect.cleandoc(info.doc) or info.summary
    configuration: dict[str, object] = {"level": _SARIF_LEVEL[info.default_severity]}
    if info.default_severity is Severity.OFF:
        configuration["enabled"] = False
    return {
        "id": info.slug,
        "name": _pascal_case(info.slug),
        "shortDescription": {"text": info.summary},
        "fullDescription": {"text": doc},
        "help": {"text": doc, "markdown": doc},
        "defaultConfiguration": configuration,
    }


def _bare_rule_descriptor(slug: str) -> dict[str, object]:
    return {
        "id": slug,
        "name": _pascal_case(slug),
        "shortDescription": {"text": f"statekit diagnostic {slug}"},
    }


def _pascal_case(slug: str) -> str:
    """`no-unreachable-state` -> `NoUnreachableState`."""
    return "".join(word[:1].upper() + word[1:] for word in re.split(r"[^0-9A-Za-z]+", slug))


def _artifact_location(file: str) -> dict[str, str]:
    """The file as a URI: relative paths stay relative to `%SRCROOT%`, with `/` separators."""
    path = file.replace("\\", "/")
    if path.startswith("//"):  # UNC: //server/share/...
        return {"uri": "file:" + _quote(path, _ABSOLUTE_PATH_SAFE)}
    if path.startswith("/"):
        return {"uri": "file://" + _quote(path, _ABSOLUTE_PATH_SAFE)}
    if _WINDOWS_DRIVE.match(path):
        return {"uri": "file:///" + _quote(path, _ABSOLUTE_PATH_SAFE)}
    while path.startswith("./"):
        path = path[2:]
    return {"uri": _quote(path, _RELATIVE_PATH_SAFE), "uriBaseId": "%SRCROOT%"}


def _quote(path: str, safe: str) -> str:
    # Lone surrogates come from undecodable file names (os.fsdecode): recover their bytes.
    return quote(path, safe=safe, encoding="utf-8", errors="surrogateescape")


def _fingerprint(slug: str, uri: str, message: str) -> str:
    """A stable hash of what identifies a finding across commits (not its line)."""
    key = "\0".join((slug, uri, message)).encode("utf-8", "surrogatepass")
    return hashlib.sha256(key).hexdigest()


@functools.cache
def _statekit_version() -> str:
    try:
        return importlib.metadata.version("statekit")
    except importlib.metadata.PackageNotFoundError:
        return "0.0.0"


# -- github -------------------------------------------------------------------


def format_github(diagnostics: Sequence[Diagnostic], rules: Mapping[str, RuleInfo]) -> str:
    """One GitHub Actions `::error`/`::warning` workflow command per diagnostic.

    Notes follow the message on their own lines; the runner shows them in the
    annotation. No diagnostics give the empty string.
    """
    lines: list[str] = []
    for d in _shown(diagnostics):
        command = "error" if d.severity is Severity.ERROR else "warning"
        line, column, end_line, end_column = _clamped(d.span)
        properties = (
            ("file", d.span.file),
            ("line", str(line)),
            ("col", str(column)),
            ("endLine", str(end_line)),
            ("endColumn", str(end_column)),
            ("title", f"statekit [{d.slug}]"),
        )
        rendered = ",".join(f"{key}={_escape_property(value)}" for key, value in properties)
        lines.append(f"::{command} {rendered}::{_escape_data(_with_notes(d))}\n")
    return "".join(lines)


def _escape_data(text: str) -> str:
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def _escape_property(text: str) -> str:
    return _escape_data(text).replace(":", "%3A").replace(",", "%2C")


# -- shared -------------------------------------------------------------------


def _shown(diagnostics: Sequence[Diagnostic]) -> list[Diagnostic]:
    return [d for d in diagnostics if d.severity is not Severity.OFF]


def _with_notes(diagnostic: Diagnostic) -> str:
    return "\n".join((diagnostic.message, *diagnostic.notes))


def _clamped(span: SourceSpan) -> tuple[int, int, int, int]:
    """1-based start and exclusive end, never before the start (SARIF and GitHub reject it)."""
    line = max(span.line, 1)
    column = max(span.column, 1)
    end_line = max(span.end_line, line)
    end_column = max(span.end_column, 1)
    if end_line == line:
        end_column = max(end_column, column)
    return line, column, end_line, end_column


def _dump(document: object) -> str:
    return json.dumps(document, sort_keys=True, indent=2) + "\n"


FORMATS: Mapping[str, Formatter] = MappingProxyType(
    {
        "text": format_text,
        "json": format_json,
        "sarif": format_sarif,
        "github": format_github,
    }
)
"""The lint output formats by name, in the order `--help` should list them."""
