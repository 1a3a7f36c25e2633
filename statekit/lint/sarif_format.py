"""The SARIF 2.1.0 output format of `statekit lint`, and the rules' documentation it
carries (`help_text`, `help_markdown`, `help_uri`).

- SARIF 2.1.0: https://docs.oasis-open.org/sarif/sarif/v2.1.0/sarif-v2.1.0.html
- GitHub's limits on uploaded SARIF (results, locations, rules, size):
  https://docs.github.com/en/code-security/code-scanning/integrating-with-code-scanning/sarif-support-for-code-scanning
"""

from __future__ import annotations

import functools
import hashlib
import inspect
import re
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from urllib.parse import quote

from statekit.compiler.diagnostics import Diagnostic, Severity, SourceSpan
from statekit.lint.format_common import (
    WINDOWS_DRIVE,
    absolute_path,
    base_folder,
    clamped,
    dump,
    path_below,
    rendered_diagnostics,
    trace_json,
    with_notes,
)
from statekit.lint.ruleinfo import RuleInfo

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

_LITERAL_MARKER = re.compile(r"^(\S.*?)::$", re.M)
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
    base = base_folder(base_dir)
    shown = rendered_diagnostics(diagnostics)
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
            "message": {"text": with_notes(d)},
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
        if d.trace:  # a property bag: the counterexample trace, with checked payloads
            result["properties"] = {"trace": trace_json(d.trace)}
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
    return dump(log)


def _physical_location(location: dict[str, str], span: SourceSpan) -> dict[str, object]:
    line, column, end_line, end_column = clamped(span)
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


def _directory_uri(base: str) -> str:
    """The base folder as a `file:` URI ending in `/` (SARIF requires the slash)."""
    uri = _file_uri(base)
    return uri if uri.endswith("/") else uri + "/"


def _file_uri(path: str) -> str:
    if path.startswith("//"):  # UNC: //server/share/...
        return "file:" + _quote(path, _ABSOLUTE_PATH_SAFE)
    if WINDOWS_DRIVE.match(path):
        return "file:///" + _quote(path, _ABSOLUTE_PATH_SAFE)
    return "file://" + _quote(path, _ABSOLUTE_PATH_SAFE)


def _artifact_location(file: str, base: str) -> dict[str, str]:
    """Below `base`: a URI relative to `%SRCROOT%`; elsewhere an absolute `file:` URI."""
    absolute = absolute_path(file, base)
    if absolute is None:
        return {"uri": _file_uri(file.replace("\\", "/"))}
    relative = path_below(absolute, base)
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
