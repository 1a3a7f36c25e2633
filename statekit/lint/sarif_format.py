"""The SARIF 2.1.0 output format of `statekit lint`, and the rules' documentation it
carries (`help_text`, `help_markdown`, `help_uri`, `full_description`).

- SARIF 2.1.0: https://docs.oasis-open.org/sarif/sarif/v2.1.0/sarif-v2.1.0.html
- What GitHub code scanning reads of it, and its limits (results, locations, rules,
  size, 1,024 characters of `shortDescription` and `fullDescription`, 255 of `name`):
  https://docs.github.com/en/code-security/code-scanning/integrating-with-code-scanning/sarif-support-for-code-scanning

Per rule: `fullDescription` is its description without examples, within GitHub's
1,024 characters, and `help` its whole documentation (text and Markdown);
`properties` carry code scanning's `precision`, `problem.severity` and `tags`
(`statekit.lint.rule_properties`). Per result: `partialFingerprints` hold
statekit's own hash and, when the file's text is given, code scanning's
`primaryLocationLineHash` (`statekit.lint.line_hash`).
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
    STDIN_NAME,
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
from statekit.lint.line_hash import line_hashes
from statekit.lint.rule_properties import sarif_properties
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
LINE_HASH_KEY = "primaryLocationLineHash"
"""The `partialFingerprints` key code scanning reads (`statekit.lint.line_hash`)."""
MAX_DESCRIPTION = 1_024
"""GitHub's limit on `shortDescription.text` and `fullDescription.text`."""
STDIN_URI = "stdin"
"""The URI of a chart read from standard input and given no name (`--stdin-filename`)."""

_LITERAL_MARKER = re.compile(r"^(\S.*?)::$", re.M)
_SENTENCE_END = re.compile(r"[.!?](?=\s+[A-Z`\"'(]|\s*$)")  # not "e.g. a"
_EXAMPLES = re.compile(r"(?s:.*)::|[^\n]*:")  # a literal block's header, or a one-line "Failing:"
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
    sources: Mapping[str, str] | None = None,
) -> str:
    """A SARIF 2.1.0 log with one run: every rule in `rules`, and one result per diagnostic.

    Files below `base_dir` (default: the current folder) are URIs relative to
    `%SRCROOT%`, which `originalUriBaseIds` declares as `base_dir`; others are
    absolute `file:` URIs. A diagnostic whose slug is not in `rules` (a
    compiler error, say) gets a minimal rule entry of its own, so that every
    `ruleIndex` resolves. Within GitHub's limits: at most `MAX_RESULTS_PER_RULE`
    results per rule, each capped rule followed by one result saying how many
    were left out, at most `MAX_RESULTS` in all, at most `MAX_RELATED_LOCATIONS`
    related locations per result. `sources` (file name as the diagnostics give it →
    its text) lets a result carry code scanning's `primaryLocationLineHash`.
    """
    base = base_folder(base_dir)
    hashes = {file: line_hashes(text) for file, text in (sources or {}).items()}
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
        digest = _fingerprint(d.slug, str(location["uri"]), d.message)
        occurrences[digest] = occurrences.get(digest, 0) + 1
        result: dict[str, object] = {
            "ruleId": d.slug,
            "ruleIndex": rule_index[d.slug],
            "level": _SARIF_LEVEL[d.severity],
            "message": {"text": with_notes(d)},
            "locations": [_physical_location(location, d.span)],
            "partialFingerprints": _fingerprints(
                f"{digest}:{occurrences[digest]}", hashes.get(d.span.file), d.span
            ),
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


def _fingerprints(own: str, hashes: tuple[str, ...] | None, span: SourceSpan) -> dict[str, str]:
    fingerprints = {FINGERPRINT_KEY: own}
    line = clamped(span)[0]
    if hashes is not None and line <= len(hashes):
        fingerprints[LINE_HASH_KEY] = hashes[line - 1]
    return fingerprints


def _physical_location(location: dict[str, object], span: SourceSpan) -> dict[str, object]:
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


def full_description(info: RuleInfo) -> str:
    """A rule's description for SARIF `fullDescription`: its documentation up to the
    examples, within `MAX_DESCRIPTION` characters; of the paragraph that would pass the
    limit, the sentences that fit (a text without one is cut with an ellipsis). The whole
    documentation is the rule's `help`."""
    doc = inspect.cleandoc(info.doc) or info.summary
    kept: list[str] = []
    for paragraph in re.split(r"\n[ \t]*\n", doc):
        if _EXAMPLES.fullmatch(paragraph.strip()):  # `Failing::`: the examples start here
            break
        room = MAX_DESCRIPTION - len("\n\n".join([*kept, ""]))
        if len(paragraph) <= room:
            kept.append(paragraph)
            continue
        ends = [m.end() for m in _SENTENCE_END.finditer(paragraph) if m.end() <= room]
        if ends:
            kept.append(paragraph[: ends[-1]])
        break
    return "\n\n".join(kept) or doc[: MAX_DESCRIPTION - 1] + "…"


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
        "fullDescription": {"text": full_description(info)},
        "help": {"text": text, "markdown": help_markdown(info)},
        "helpUri": help_uri(info.slug),
        "defaultConfiguration": configuration,
        "properties": sarif_properties(info.slug, info.default_severity),
    }


def _bare_rule_descriptor(slug: str) -> dict[str, object]:
    return {
        "id": slug,
        "name": _pascal_case(slug),
        "shortDescription": {"text": f"statekit diagnostic {slug}"},
        "fullDescription": {"text": f"statekit diagnostic {slug}: see the message of each result."},
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


def _artifact_location(file: str, base: str) -> dict[str, object]:
    """Below `base`: a URI relative to `%SRCROOT%`; elsewhere an absolute `file:` URI; a
    chart read from standard input without a name: `STDIN_URI`, described as such."""
    if file == STDIN_NAME:
        return {
            "uri": STDIN_URI,
            "description": {"text": "standard input (`--stdin-filename` names the file)"},
        }
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
