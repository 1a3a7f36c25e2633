"""Output formats of `statekit lint`: pure `diagnostics -> str` functions looked up by name.

Every formatter renders the diagnostics in the order given (the caller sorts)
and returns text ready to write as is: empty, or ending with a newline.
A diagnostic at `Severity.OFF` is a disabled finding and no format renders it.

SARIF and GitHub name files relative to `base_dir` (the caller passes the
repository's top level; default the current folder), since code scanning and
annotations resolve paths from the repository root; text and JSON keep the
paths as given.

- SARIF 2.1.0: https://docs.oasis-open.org/sarif/sarif/v2.1.0/sarif-v2.1.0.html
- GitHub workflow commands:
  https://docs.github.com/en/actions/reference/workflow-commands-for-github-actions
- GitHub's limits on uploaded SARIF (results, locations, rules, size):
  https://docs.github.com/en/code-security/code-scanning/integrating-with-code-scanning/sarif-support-for-code-scanning
"""

from __future__ import annotations

import functools
import hashlib
import inspect
import json
import posixpath
import re
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from types import MappingProxyType
from typing import Protocol
from urllib.parse import quote

from statekit.compiler.diagnostics import Diagnostic, Severity, SourceSpan
from statekit.compiler.terminal_text import terminal_text
from statekit.lint.ruleinfo import RuleInfo

__all__ = [
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
    ) -> str:
        """Render `diagnostics`; `base_dir` is the folder paths are made relative to."""
        ...


SARIF_SCHEMA_URI = "https://json.schemastore.org/sarif-2.1.0.json"
INFORMATION_URI = "https://github.com/statekit/statekit"
RULES_DOC_URI = INFORMATION_URI + "/blob/main/docs/rules.md"
"""docs/rules.md (written by `statekit rules --markdown`): one heading, so one anchor, per rule."""
SRCROOT = "%SRCROOT%"

MAX_RESULTS_PER_RULE = 1_000
"""SARIF results kept per rule; one more result says how many were left out."""
MAX_RESULTS = 20_000
"""SARIF results kept per run (GitHub rejects a run of more than 25,000, shows 5,000)."""
MAX_RELATED_LOCATIONS = 100
"""Related locations kept per result (GitHub accepts 1,000 and shows 100)."""
FINGERPRINT_KEY = "statekitFindingHash/v1"
"""The `partialFingerprints` key; bump the version if the hashed fields change."""

_LINE_BREAK = re.compile(r"\r\n|\r|\n")
_LITERAL_MARKER = re.compile(r"^(\S.*?)::$", re.M)
_WINDOWS_DRIVE = re.compile(r"[A-Za-z]:/")
# RFC 3986 sub-delims and "@" may stay literal in a path; ":" may not in a
# relative reference (its first segment would read as a scheme).
_RELATIVE_PATH_SAFE = "/!$&'()*+,;=@"
_ABSOLUTE_PATH_SAFE = _RELATIVE_PATH_SAFE + ":"

_SARIF_LEVEL = {
    Severity.ERROR: "error",
    Severity.WARNING: "warning",
    Severity.INFO: "note",
    Severity.OFF: "none",
}


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
) -> str:
    """Render `diagnostics` in the format called `name` (a key of `FORMATS`).

    Raises `UnknownFormatError` (a `ValueError`) naming the valid formats.
    """
    try:
        formatter = FORMATS[name]
    except KeyError:
        raise UnknownFormatError(name) from None
    return formatter(diagnostics, rules, base_dir=base_dir)


# -- text ---------------------------------------------------------------------


def format_text(
    diagnostics: Sequence[Diagnostic],
    rules: Mapping[str, RuleInfo],
    /,
    *,
    base_dir: Path | None = None,
) -> str:
    """One `path:line:col: severity[slug] message` line per diagnostic, for a terminal
    (`terminal_text`: a control character in a name is written as its escape).

    Each note (and any further line of a multi-line message) follows on its own
    line, indented by four spaces. No diagnostics give the empty string.
    """
    lines: list[str] = []
    for diagnostic in _shown(diagnostics):
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
) -> str:
    """A versioned JSON document: the diagnostics with raw positions (and their related
    locations), and counts by severity."""
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
            }
            for d in shown
        ],
        "summary": {
            "error": sum(d.severity is Severity.ERROR for d in shown),
            "warning": sum(d.severity is Severity.WARNING for d in shown),
            "info": sum(d.severity is Severity.INFO for d in shown),
        },
    }
    return _dump(document)


# -- sarif --------------------------------------------------------------------


def format_sarif(
    diagnostics: Sequence[Diagnostic],
    rules: Mapping[str, RuleInfo],
    /,
    *,
    base_dir: Path | None = None,
) -> str:
    """A SARIF 2.1.0 log with one run: every rule in `rules`, and one result per diagnostic.

    Files below `base_dir` (default: the current folder) are URIs relative to
    `%SRCROOT%`, which `originalUriBaseIds` declares as `base_dir`; others are
    absolute `file:` URIs. A diagnostic whose slug is not in `rules` (a
    compiler error, say) gets a minimal rule entry of its own, so that every
    `ruleIndex` resolves. Within GitHub's limits: at most `MAX_RESULTS_PER_RULE`
    results per rule, each capped rule followed by one result saying how many
    were left out, at most `MAX_RESULTS` in all, at most `MAX_RELATED_LOCATIONS`
    related locations per result.
    """
    base = _base(base_dir)
    shown = _shown(diagnostics)
    infos = sorted(rules.values(), key=lambda info: info.slug)
    documented = {info.slug for info in infos}
    undocumented = sorted({d.slug for d in shown} - documented)
    descriptors = [_rule_descriptor(info) for info in infos]
    descriptors += [_bare_rule_descriptor(slug) for slug in undocumented]
    rule_index = {str(descriptor["id"]): i for i, descriptor in enumerate(descriptors)}

    results: list[dict[str, object]] = []
    occurrences: dict[str, int] = {}
    for d in _capped(shown):
        location = _artifact_location(d.span.file, base)
        digest = _fingerprint(d.slug, location["uri"], d.message)
        occurrences[digest] = occurrences.get(digest, 0) + 1
        result: dict[str, object] = {
            "ruleId": d.slug,
            "ruleIndex": rule_index[d.slug],
            "level": _SARIF_LEVEL[d.severity],
            "message": {"text": _with_notes(d)},
            "locations": [_physical_location(location, d.span)],
            "partialFingerprints": {FINGERPRINT_KEY: f"{digest}:{occurrences[digest]}"},
        }
        related = [
            {
                "id": i,
                **_physical_location(_artifact_location(span.file, base), span),
                **({"message": {"text": text}} if text else {}),
            }
            for i, (span, text) in enumerate(_related(d)[:MAX_RELATED_LOCATIONS])
        ]
        if related:
            result["relatedLocations"] = related
        results.append(result)

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
                "originalUriBaseIds": {SRCROOT: {"uri": _directory_uri(base)}},
                "columnKind": "unicodeCodePoints",
                "results": results,
            }
        ],
    }
    return _dump(log)


def _physical_location(location: dict[str, str], span: SourceSpan) -> dict[str, object]:
    line, column, end_line, end_column = _clamped(span)
    return {
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


def _related(diagnostic: Diagnostic) -> list[tuple[SourceSpan, str]]:
    return [(related.span, related.message) for related in diagnostic.related]


def _capped(shown: Sequence[Diagnostic]) -> Iterator[Diagnostic]:
    """At most `MAX_RESULTS_PER_RULE` diagnostics per rule, each capped rule's last
    followed by a note of how many were left out, and at most `MAX_RESULTS` in all
    (the last of which then says how many more the run left out)."""
    totals: dict[str, int] = {}
    for d in shown:
        totals[d.slug] = totals.get(d.slug, 0) + 1
    kept: list[Diagnostic] = []
    seen: dict[str, int] = {}
    for d in shown:
        seen[d.slug] = seen.get(d.slug, 0) + 1
        if seen[d.slug] <= MAX_RESULTS_PER_RULE:
            kept.append(d)
        if seen[d.slug] == MAX_RESULTS_PER_RULE + 1:  # the first one left out
            left_out = totals[d.slug] - MAX_RESULTS_PER_RULE
            kept.append(
                Diagnostic(
                    d.slug,
                    d.severity,
                    f"{left_out:,} more {d.slug} finding(s) left out of this SARIF log "
                    f"(it keeps {MAX_RESULTS_PER_RULE:,} per rule); "
                    "`statekit lint` in text or JSON format lists them all",
                    d.span,
                )
            )
    if len(kept) > MAX_RESULTS:
        last = kept[MAX_RESULTS - 1]
        left_out = len(kept) - MAX_RESULTS + 1
        kept[MAX_RESULTS - 1] = Diagnostic(
            last.slug,
            last.severity,
            f"{left_out:,} more finding(s) left out of this SARIF log (it keeps "
            f"{MAX_RESULTS:,} per run); `statekit lint` in text or JSON format lists them all",
            last.span,
        )
        del kept[MAX_RESULTS:]
    yield from kept


def help_text(info: RuleInfo) -> str:
    """A rule's documentation as plain text: its docstring, `Failing::` written `Failing:`."""
    doc = inspect.cleandoc(info.doc) or info.summary
    return _LITERAL_MARKER.sub(r"\1:", doc)


def help_markdown(info: RuleInfo) -> str:
    """A rule's documentation as Markdown: reStructuredText literal blocks (`Failing::`
    and the indented lines after it) become a `Failing:` line and a fenced YAML block."""
    doc = inspect.cleandoc(info.doc) or info.summary
    out: list[str] = []
    lines = doc.splitlines()
    i = 0
    while i < len(lines):
        line = lines[i]
        i += 1
        if not _LITERAL_MARKER.fullmatch(line):
            out.append(line)
            continue
        out.append(_LITERAL_MARKER.sub(r"\1:", line))
        block: list[str] = []
        while i < len(lines) and (not lines[i].strip() or lines[i].startswith((" ", "\t"))):
            block.append(lines[i])
            i += 1
        while block and not block[-1].strip():
            block.pop()
        trailing_blank = i < len(lines)
        body = inspect.cleandoc("\n".join(block)) if block else ""
        out += ["", "```yaml", *body.splitlines(), "```"]
        if trailing_blank:
            out.append("")
    return "\n".join(out)


def help_uri(slug: str) -> str:
    """Where a rule is documented: its heading in docs/rules.md."""
    return f"{RULES_DOC_URI}#{slug}"


def _rule_descriptor(info: RuleInfo) -> dict[str, object]:
    text = help_text(info)
    configuration: dict[str, object] = {"level": _SARIF_LEVEL[info.default_severity]}
    if info.default_severity is Severity.OFF:
        configuration["enabled"] = False
    return {
        "id": info.slug,
        "name": _pascal_case(info.slug),
        "shortDescription": {"text": info.summary},
        "fullDescription": {"text": text},
        "help": {"text": text, "markdown": help_markdown(info)},
        "helpUri": help_uri(info.slug),
        "defaultConfiguration": configuration,
    }


def _bare_rule_descriptor(slug: str) -> dict[str, object]:
    return {
        "id": slug,
        "name": _pascal_case(slug),
        "shortDescription": {"text": f"statekit diagnostic {slug}"},
        "help": {
            "text": f"statekit diagnostic {slug}: see the message of each result.",
            "markdown": f"statekit diagnostic `{slug}`: see the message of each result.",
        },
        "helpUri": RULES_DOC_URI,  # not a rule of its own: the page of all rules
    }


def _pascal_case(slug: str) -> str:
    """`no-unreachable-state` -> `NoUnreachableState`."""
    return "".join(word[:1].upper() + word[1:] for word in re.split(r"[^0-9A-Za-z]+", slug))


def _base(base_dir: Path | None) -> str:
    """The base folder as an absolute, normalised path with `/` separators."""
    return posixpath.normpath((base_dir or Path.cwd()).absolute().as_posix())


def _absolute(file: str, base: str) -> str | None:
    """`file` (relative ones from the current folder) as a normalised path with `/`,
    or None for a UNC or drive-letter path (never below a POSIX base)."""
    path = file.replace("\\", "/")
    if path.startswith("//") or _WINDOWS_DRIVE.match(path):
        if not _WINDOWS_DRIVE.match(base):
            return None
        return posixpath.normpath(path)
    if not path.startswith("/"):
        path = posixpath.join(Path.cwd().absolute().as_posix(), path)
    return posixpath.normpath(path)


def _below(path: str, base: str) -> str | None:
    """`path` relative to `base` when it lies below it, else None."""
    if path == base:
        return None
    prefix = base.rstrip("/") + "/"
    return path[len(prefix) :] if path.startswith(prefix) else None


def _relative_or_given(file: str, base: str) -> str:
    absolute = _absolute(file, base)
    relative = _below(absolute, base) if absolute is not None else None
    return file if relative is None else relative


def _directory_uri(base: str) -> str:
    """The base folder as a `file:` URI ending in `/` (SARIF requires the slash)."""
    uri = _file_uri(base)
    return uri if uri.endswith("/") else uri + "/"


def _file_uri(path: str) -> str:
    if path.startswith("//"):  # UNC: //server/share/...
        return "file:" + _quote(path, _ABSOLUTE_PATH_SAFE)
    if _WINDOWS_DRIVE.match(path):
        return "file:///" + _quote(path, _ABSOLUTE_PATH_SAFE)
    return "file://" + _quote(path, _ABSOLUTE_PATH_SAFE)


def _artifact_location(file: str, base: str) -> dict[str, str]:
    """Below `base`: a URI relative to `%SRCROOT%`; elsewhere an absolute `file:` URI."""
    absolute = _absolute(file, base)
    if absolute is None:
        return {"uri": _file_uri(file.replace("\\", "/"))}
    relative = _below(absolute, base)
    if relative is None:
        return {"uri": _file_uri(absolute)}
    return {"uri": _quote(relative, _RELATIVE_PATH_SAFE), "uriBaseId": SRCROOT}


def _quote(path: str, safe: str) -> str:
    # Lone surrogates come from undecodable file names (os.fsdecode): recover their bytes.
    return quote(path, safe=safe, encoding="utf-8", errors="surrogateescape")


def _fingerprint(slug: str, uri: str, message: str) -> str:
    """A stable hash of what identifies a finding across commits (not its line)."""
    key = "\0".join((slug, uri, message)).encode("utf-8", "surrogatepass")
    return hashlib.sha256(key).hexdigest()


@functools.cache
def _statekit_version() -> str:
    import importlib.metadata  # only SARIF output names the version: not paid at start-up

    try:
        return importlib.metadata.version("statekit")
    except importlib.metadata.PackageNotFoundError:
        return "0.0.0"


# -- github -------------------------------------------------------------------


def format_github(
    diagnostics: Sequence[Diagnostic],
    rules: Mapping[str, RuleInfo],
    /,
    *,
    base_dir: Path | None = None,
) -> str:
    """One GitHub Actions `::error`/`::warning` workflow command per diagnostic.

    Files below `base_dir` (default: the current folder) are named relative to
    it, with `/`; others as given. Notes follow the message on their own lines;
    the runner shows them in the annotation. No diagnostics give the empty string.
    """
    base = _base(base_dir)
    lines: list[str] = []
    for d in _shown(diagnostics):
        command = {Severity.ERROR: "error", Severity.INFO: "notice"}.get(d.severity, "warning")
        line, column, end_line, end_column = _clamped(d.span)
        properties = (
            ("file", _relative_or_given(d.span.file, base)),
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
    """A workflow command's data: `%`, CR and LF as the runner reads them back, and every
    other character a log viewer could act on (an escape sequence) as its escape."""
    return terminal_text(text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A"))


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
