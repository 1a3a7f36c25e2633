"""The lint output formats: exact text and GitHub commands, JSON round trips, schema-valid SARIF."""

from __future__ import annotations

import gzip
import importlib.metadata
import json
import re
from pathlib import Path
from typing import Any
from urllib.parse import quote

import jsonschema
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from statekit.compiler.diagnostics import Diagnostic, RelatedLocation, Severity, SourceSpan
from statekit.compiler.terminal_text import terminal_text
from statekit.lint import sarif_format
from statekit.lint.formats import (
    FINGERPRINT_KEY,
    FORMATS,
    MAX_RELATED_LOCATIONS,
    MAX_RESULTS,
    MAX_RESULTS_PER_RULE,
    UnknownFormatError,
    format_diagnostics,
    format_github,
    format_json,
    format_sarif,
    format_text,
    help_markdown,
    help_text,
    help_uri,
)
from statekit.lint.registry import RULES as REGISTERED
from statekit.lint.ruleinfo import RuleInfo

ROOT = Path(__file__).resolve().parents[2]

SARIF_SCHEMA = json.loads(
    (Path(__file__).parent / "sarif-schema-2.1.0.json").read_text(encoding="utf-8")
)
SARIF_VALIDATOR = jsonschema.Draft4Validator(SARIF_SCHEMA)

RULES: dict[str, RuleInfo] = {
    "unreachable-state": RuleInfo(
        slug="unreachable-state",
        default_severity=Severity.ERROR,
        summary="A state no transition can ever enter.",
        doc="""A state no transition can ever enter.

        Failing:

            states: {a: {}, b: {}}
        """,
    ),
    "unused-event": RuleInfo(
        slug="unused-event",
        default_severity=Severity.WARNING,
        summary="An event declared but never handled.",
        doc="An event declared but never handled.",
    ),
    "guard-style": RuleInfo(
        slug="guard-style",
        default_severity=Severity.OFF,
        summary="Guards written as expressions rather than names.",
        doc="",
    ),
}

UNREACHABLE = Diagnostic(
    "unreachable-state",
    Severity.ERROR,
    "state 'idle' is unreachable",
    SourceSpan("machines/door.yaml", 3, 5, 3, 9),
)
ODD = Diagnostic(
    "unused-event",
    Severity.WARNING,
    'event "50%: go, now" ça\nsecond line',
    SourceSpan("charts/a:b, c%d é.yaml", 12, 1, 14, 2),
    notes=("candidates: 'go', 'stop'", "trace: a -> b"),
)
UNDOCUMENTED = Diagnostic(
    "yaml-syntax",
    Severity.ERROR,
    "mapping values are not allowed here",
    SourceSpan.start_of("C:\\charts\\bad.yaml"),
)
DISABLED = Diagnostic("guard-style", Severity.OFF, "disabled", SourceSpan("x.yaml", 1, 1, 1, 2))

DIAGNOSTICS = (UNREACHABLE, ODD, UNDOCUMENTED)


@pytest.fixture(autouse=True)
def _in_a_repository(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Relative paths resolve from the current folder, the base folder of these tests."""
    monkeypatch.chdir(tmp_path)


def sarif(diagnostics: tuple[Diagnostic, ...] = DIAGNOSTICS) -> dict[str, Any]:
    log: dict[str, Any] = json.loads(format_sarif(diagnostics, RULES, base_dir=Path.cwd()))
    return log


def assert_valid_sarif(text: str) -> None:
    errors = [
        f"{list(error.absolute_path)}: {error.message}"
        for error in SARIF_VALIDATOR.iter_errors(json.loads(text))
    ]
    assert errors == []


# -- lookup -------------------------------------------------------------------


def test_formats_are_registered_by_name() -> None:
    assert list(FORMATS) == ["text", "json", "sarif", "github"]
    for name, formatter in FORMATS.items():
        assert format_diagnostics(name, DIAGNOSTICS, RULES) == formatter(DIAGNOSTICS, RULES)


def test_unknown_format_names_the_valid_ones() -> None:
    with pytest.raises(ValueError, match="unknown format 'xml'") as raised:
        format_diagnostics("xml", DIAGNOSTICS, RULES)
    error = raised.value
    assert isinstance(error, UnknownFormatError)
    assert error.choices == ("text", "json", "sarif", "github")
    assert "text, json, sarif, github" in str(error)


def test_formats_cannot_be_replaced() -> None:
    with pytest.raises(TypeError):
        FORMATS["text"] = format_json  # type: ignore[index]


@pytest.mark.parametrize("name", ["text", "json", "sarif", "github"])
def test_disabled_findings_are_not_rendered(name: str) -> None:
    assert format_diagnostics(name, (UNREACHABLE, DISABLED), RULES) == format_diagnostics(
        name, (UNREACHABLE,), RULES
    )


@pytest.mark.parametrize("name", ["text", "json", "sarif", "github"])
def test_output_ends_with_a_newline(name: str) -> None:
    assert format_diagnostics(name, DIAGNOSTICS, RULES).endswith("\n")


# -- text ---------------------------------------------------------------------


def test_text_one_line_per_diagnostic_with_indented_notes() -> None:
    assert format_text(DIAGNOSTICS, RULES) == (
        "machines/door.yaml:3:5: error[unreachable-state] state 'idle' is unreachable\n"
        'charts/a:b, c%d é.yaml:12:1: warning[unused-event] event "50%: go, now" ça\n'
        "    second line\n"
        "    candidates: 'go', 'stop'\n"
        "    trace: a -> b\n"
        "C:\\charts\\bad.yaml:1:1: error[yaml-syntax] mapping values are not allowed here\n"
    )


def test_text_keeps_the_given_order() -> None:
    lines = format_text((UNDOCUMENTED, UNREACHABLE), RULES).splitlines()
    assert [line.split(": ")[1] for line in lines] == [
        "error[yaml-syntax] mapping values are not allowed here",
        "error[unreachable-state] state 'idle' is unreachable",
    ]


def test_text_indents_every_line_of_a_multiline_note() -> None:
    diagnostic = Diagnostic(
        "x", Severity.WARNING, "m", SourceSpan("f.yaml", 1, 1, 1, 1), notes=("a\r\nb",)
    )
    assert format_text((diagnostic,), RULES) == "f.yaml:1:1: warning[x] m\n    a\n    b\n"


def test_text_of_nothing_is_empty() -> None:
    assert format_text((), RULES) == ""


# -- json ---------------------------------------------------------------------


def test_json_round_trips_fields_and_counts() -> None:
    text = format_json(DIAGNOSTICS, RULES)
    document = json.loads(text)
    assert text == json.dumps(document, sort_keys=True, indent=2) + "\n"
    assert document["version"] == 1
    assert document["summary"] == {"error": 2, "warning": 1, "info": 0}
    assert document["diagnostics"][1] == {
        "slug": "unused-event",
        "severity": "warning",
        "message": 'event "50%: go, now" ça\nsecond line',
        "file": "charts/a:b, c%d é.yaml",
        "line": 12,
        "column": 1,
        "end_line": 14,
        "end_column": 2,
        "notes": ["candidates: 'go', 'stop'", "trace: a -> b"],
        "related": [],
    }
    assert [d["slug"] for d in document["diagnostics"]] == [d.slug for d in DIAGNOSTICS]


def test_json_of_nothing_is_a_document() -> None:
    assert json.loads(format_json((), RULES)) == {
        "version": 1,
        "diagnostics": [],
        "summary": {"error": 0, "warning": 0, "info": 0},
    }


# -- sarif --------------------------------------------------------------------


def test_sarif_is_valid_against_the_official_schema() -> None:
    assert_valid_sarif(format_sarif(DIAGNOSTICS, RULES))
    assert_valid_sarif(format_sarif((), RULES))
    assert_valid_sarif(format_sarif((), {}))


def test_sarif_schema_catches_a_broken_log() -> None:
    log = sarif()
    log["runs"][0]["results"][0]["level"] = "fatal"
    assert not SARIF_VALIDATOR.is_valid(log)


def test_sarif_header_and_driver() -> None:
    log = sarif()
    assert log["$schema"] == "https://json.schemastore.org/sarif-2.1.0.json"
    assert log["version"] == "2.1.0"
    assert len(log["runs"]) == 1
    driver = log["runs"][0]["tool"]["driver"]
    assert driver["name"] == "statekit"
    assert driver["informationUri"].startswith("https://")
    try:
        expected = importlib.metadata.version("statekit")
    except importlib.metadata.PackageNotFoundError:
        expected = "0.0.0"
    assert driver["semanticVersion"] == expected


def test_sarif_lists_every_rule_and_indexes_results_into_them() -> None:
    log = sarif()
    rules = log["runs"][0]["tool"]["driver"]["rules"]
    assert [rule["id"] for rule in rules] == [
        "guard-style",
        "unreachable-state",
        "unused-event",
        "yaml-syntax",  # not a documented rule: a bare entry so ruleIndex resolves
    ]
    by_id = {rule["id"]: rule for rule in rules}
    assert by_id["unreachable-state"] == {
        "id": "unreachable-state",
        "name": "UnreachableState",
        "shortDescription": {"text": "A state no transition can ever enter."},
        "fullDescription": {"text": RULES["unreachable-state"].doc.split("\n")[0]},
        "help": {
            "text": RULES["unreachable-state"].doc.split("\n")[0] + FAILING,
            "markdown": RULES["unreachable-state"].doc.split("\n")[0] + FAILING,
        },
        "helpUri": "https://github.com/statekit/statekit/blob/main/docs/rules.md#unreachable-state",
        "defaultConfiguration": {"level": "error"},
        "properties": {
            "precision": "high",
            "problem.severity": "error",
            "tags": ["correctness", "analysis"],
        },
    }
    assert by_id["unused-event"]["defaultConfiguration"] == {"level": "warning"}
    assert by_id["guard-style"]["defaultConfiguration"] == {"level": "none", "enabled": False}
    assert by_id["guard-style"]["fullDescription"]["text"] == RULES["guard-style"].summary
    assert by_id["yaml-syntax"]["name"] == "YamlSyntax"
    for result in log["runs"][0]["results"]:
        assert rules[result["ruleIndex"]]["id"] == result["ruleId"]


FAILING = "\n\nFailing:\n\n    states: {a: {}, b: {}}"


def test_sarif_results() -> None:
    results = sarif()["runs"][0]["results"]
    assert [r["level"] for r in results] == ["error", "warning", "error"]
    odd = results[1]
    assert odd["message"] == {
        "text": "event \"50%: go, now\" ça\nsecond line\ncandidates: 'go', 'stop'\ntrace: a -> b"
    }
    assert odd["locations"] == [
        {
            "physicalLocation": {
                "artifactLocation": {
                    "uri": "charts/a%3Ab,%20c%25d%20%C3%A9.yaml",
                    "uriBaseId": "%SRCROOT%",
                },
                "region": {"startLine": 12, "startColumn": 1, "endLine": 14, "endColumn": 2},
            }
        }
    ]


@pytest.mark.parametrize(
    ("file", "location"),
    [
        ("machines/door.yaml", {"uri": "machines/door.yaml", "uriBaseId": "%SRCROOT%"}),
        ("./machines/door.yaml", {"uri": "machines/door.yaml", "uriBaseId": "%SRCROOT%"}),
        ("machines\\door.yaml", {"uri": "machines/door.yaml", "uriBaseId": "%SRCROOT%"}),
        ("a/../machines/door.yaml", {"uri": "machines/door.yaml", "uriBaseId": "%SRCROOT%"}),
        ("{base}/machines/door.yaml", {"uri": "machines/door.yaml", "uriBaseId": "%SRCROOT%"}),
        ("{base}/x/../y.yaml", {"uri": "y.yaml", "uriBaseId": "%SRCROOT%"}),
        ("../up.yaml", {"uri": "file://{parent}/up.yaml"}),
        ("{base}-sibling/x.yaml", {"uri": "file://{base}-sibling/x.yaml"}),
        ("a #1?.yaml", {"uri": "a%20%231%3F.yaml", "uriBaseId": "%SRCROOT%"}),
        ("/srv/charts/é.yaml", {"uri": "file:///srv/charts/%C3%A9.yaml"}),
        ("C:\\charts\\bad.yaml", {"uri": "file:///C:/charts/bad.yaml"}),
        ("\\\\host\\share\\x.yaml", {"uri": "file://host/share/x.yaml"}),
        ("raw\udcff.yaml", {"uri": "raw%FF.yaml", "uriBaseId": "%SRCROOT%"}),
    ],
)
def test_sarif_artifact_locations_are_relative_to_the_base_folder(
    file: str, location: dict[str, str]
) -> None:
    """Relative paths (from the current folder) and absolute ones below the base are
    relative to %SRCROOT%; anything else is an absolute `file:` URI."""
    base = Path.cwd().as_posix()
    names = {"base": base, "parent": Path(base).parent.as_posix()}
    location = {key: value.format(**names) for key, value in location.items()}
    diagnostic = Diagnostic("x", Severity.ERROR, "m", SourceSpan(file.format(**names), 1, 1, 1, 2))
    result = sarif((diagnostic,))["runs"][0]["results"][0]
    assert result["locations"][0]["physicalLocation"]["artifactLocation"] == location
    assert_uri_reference(location["uri"])


@pytest.mark.parametrize("where", ["same", "sub", "elsewhere"])
def test_sarif_declares_its_base_folder(tmp_path: Path, where: str) -> None:
    base = {"same": Path.cwd(), "sub": Path.cwd() / "repo", "elsewhere": Path("/srv/r é")}[where]
    log = json.loads(format_sarif(DIAGNOSTICS, RULES, base_dir=base))
    declared = log["runs"][0]["originalUriBaseIds"]
    assert declared == {"%SRCROOT%": {"uri": "file://" + quote(base.as_posix()) + "/"}}
    assert_valid_sarif(json.dumps(log))


def test_sarif_and_github_default_to_the_current_folder() -> None:
    diagnostic = Diagnostic(
        "x", Severity.ERROR, "m", SourceSpan(f"{Path.cwd()}/c.yaml", 1, 1, 1, 1)
    )
    location = json.loads(format_sarif((diagnostic,), RULES))["runs"][0]["results"][0]
    assert location["locations"][0]["physicalLocation"]["artifactLocation"] == {
        "uri": "c.yaml",
        "uriBaseId": "%SRCROOT%",
    }
    assert format_github((diagnostic,), RULES).startswith("::error file=c.yaml,")


@pytest.mark.parametrize(
    ("file", "shown"),
    [
        ("{base}/machines/door.yaml", "machines/door.yaml"),
        ("machines/door.yaml", "machines/door.yaml"),
        ("sub/../machines/door.yaml", "machines/door.yaml"),
        ("machines\\door.yaml", "machines/door.yaml"),
        ("{base}", "{base}"),
        ("/elsewhere/door.yaml", "/elsewhere/door.yaml"),
        ("../door.yaml", "../door.yaml"),
        ("C:\\door.yaml", "C%3A\\door.yaml"),
    ],
)
def test_github_names_files_relative_to_the_base_folder(file: str, shown: str) -> None:
    base = Path.cwd().as_posix()
    diagnostic = Diagnostic(
        "x", Severity.ERROR, "m", SourceSpan(file.format(base=base), 1, 1, 1, 1)
    )
    command = format_github((diagnostic,), RULES, base_dir=Path.cwd())
    assert command.startswith(f"::error file={shown.format(base=base).replace(':', '%3A')},")


def assert_uri_reference(uri: str) -> None:
    """RFC 3986 characters only, every `%` starting an escape, no scheme unless `file:`."""
    assert re.fullmatch(r"(?:[A-Za-z0-9\-._~!$&'()*+,;=:@/]|%[0-9A-F]{2})*", uri), uri
    assert uri.startswith("file:") or ":" not in uri.split("/")[0]


@pytest.mark.parametrize(
    ("span", "region"),
    [
        (SourceSpan("f", 3, 5, 3, 9), (3, 5, 3, 9)),
        (SourceSpan("f", 1, 1, 1, 1), (1, 1, 1, 1)),
        (SourceSpan("f", 0, 0, 0, 0), (1, 1, 1, 1)),
        (SourceSpan("f", 4, 7, 2, 1), (4, 7, 4, 7)),
        (SourceSpan("f", 4, 7, 4, 3), (4, 7, 4, 7)),
        (SourceSpan("f", 4, 7, 6, 0), (4, 7, 6, 1)),
    ],
)
def test_regions_are_one_based_and_never_end_before_they_start(
    span: SourceSpan, region: tuple[int, int, int, int]
) -> None:
    diagnostic = Diagnostic("x", Severity.ERROR, "m", span)
    text = format_sarif((diagnostic,), RULES)
    assert_valid_sarif(text)
    got = json.loads(text)["runs"][0]["results"][0]["locations"][0]["physicalLocation"]["region"]
    assert (got["startLine"], got["startColumn"], got["endLine"], got["endColumn"]) == region
    line, col, end_line, end_col = region
    assert format_github((diagnostic,), RULES) == (
        f"::error file=f,line={line},col={col},endLine={end_line},endColumn={end_col},"
        "title=statekit [x]::m\n"
    )


def fingerprints(diagnostics: tuple[Diagnostic, ...]) -> list[str]:
    return [
        r["partialFingerprints"][FINGERPRINT_KEY] for r in sarif(diagnostics)["runs"][0]["results"]
    ]


def test_fingerprints_survive_moves_but_not_other_changes() -> None:
    moved = Diagnostic(
        UNREACHABLE.slug,
        UNREACHABLE.severity,
        UNREACHABLE.message,
        SourceSpan("./machines/door.yaml", 40, 1, 40, 5),
    )
    renamed = Diagnostic(
        UNREACHABLE.slug, UNREACHABLE.severity, "state 'busy' is unreachable", UNREACHABLE.span
    )
    other_file = Diagnostic(
        UNREACHABLE.slug,
        UNREACHABLE.severity,
        UNREACHABLE.message,
        SourceSpan("x.yaml", 3, 5, 3, 9),
    )
    [original] = fingerprints((UNREACHABLE,))
    assert re.fullmatch(r"[0-9a-f]{64}:1", original)
    assert fingerprints((moved,)) == [original]
    assert fingerprints((UNREACHABLE.with_severity(Severity.WARNING),)) == [original]
    assert fingerprints((renamed,))[0] != original
    assert fingerprints((other_file,))[0] != original


def test_identical_findings_get_distinct_fingerprints() -> None:
    first, second = fingerprints((UNREACHABLE, UNREACHABLE))
    assert first.endswith(":1")
    assert second == first[:-1] + "2"


def test_sarif_is_deterministic() -> None:
    assert format_sarif(DIAGNOSTICS, RULES) == format_sarif(
        DIAGNOSTICS, dict(reversed(RULES.items()))
    )


# -- github -------------------------------------------------------------------


def test_github_commands_escape_data_and_properties() -> None:
    assert format_github(DIAGNOSTICS, RULES) == (
        "::error file=machines/door.yaml,line=3,col=5,endLine=3,endColumn=9,"
        "title=statekit [unreachable-state]::state 'idle' is unreachable\n"
        "::warning file=charts/a%3Ab%2C c%25d é.yaml,line=12,col=1,endLine=14,endColumn=2,"
        "title=statekit [unused-event]::"
        "event \"50%25: go, now\" ça%0Asecond line%0Acandidates: 'go', 'stop'%0Atrace: a -> b\n"
        "::error file=C%3A\\charts\\bad.yaml,line=1,col=1,endLine=1,endColumn=1,"
        "title=statekit [yaml-syntax]::mapping values are not allowed here\n"
    )


def test_github_escapes_carriage_returns() -> None:
    diagnostic = Diagnostic(
        "x", Severity.WARNING, "a\r\nb%", SourceSpan("p\r\n%,:.yaml", 1, 1, 1, 1)
    )
    assert format_github((diagnostic,), RULES) == (
        "::warning file=p%0D%0A%25%2C%3A.yaml,line=1,col=1,endLine=1,endColumn=1,"
        "title=statekit [x]::a%0D%0Ab%25\n"
    )


def test_github_of_nothing_is_empty() -> None:
    assert format_github((), RULES) == ""


_UNESCAPE = {"%25": "%", "%0D": "\r", "%0A": "\n", "%3A": ":", "%2C": ","}


def unescape(text: str) -> str:
    return re.sub("%25|%0D|%0A|%3A|%2C", lambda m: _UNESCAPE[m.group()], text)


def parse_command(line: str) -> tuple[str, dict[str, str], str]:
    """Split a workflow command the way the runner does: properties end at the first `::`."""
    match = re.fullmatch(r"::(\w+) ([^:]*)::(.*)", line)
    assert match, line
    command, properties, data = match.groups()
    pairs = (item.split("=", 1) for item in properties.split(","))
    return command, {key: unescape(value) for key, value in pairs}, unescape(data)


# -- properties ---------------------------------------------------------------

spans = st.builds(
    SourceSpan,
    file=st.text(min_size=1),
    line=st.integers(-2, 10_000),
    column=st.integers(-2, 500),
    end_line=st.integers(-2, 10_000),
    end_column=st.integers(-2, 500),
)
diagnostics = st.lists(
    st.builds(
        Diagnostic,
        slug=st.sampled_from([*RULES, "yaml-syntax", "a.b_c"]),
        severity=st.sampled_from(Severity),
        message=st.text(),
        span=spans,
        notes=st.lists(st.text(), max_size=3).map(tuple),
        related=st.lists(st.builds(RelatedLocation, span=spans, message=st.text()), max_size=2).map(
            tuple
        ),
    ),
    max_size=5,
).map(tuple)


@settings(max_examples=60, deadline=None)
@given(diagnostics)
def test_any_diagnostics_give_valid_sarif(found: tuple[Diagnostic, ...]) -> None:
    text = format_sarif(found, RULES)
    assert_valid_sarif(text)
    shown = [d for d in found if d.severity is not Severity.OFF]
    results = json.loads(text)["runs"][0]["results"]
    assert len(results) == len(shown)
    for result, diagnostic in zip(results, shown, strict=True):
        assert_uri_reference(result["locations"][0]["physicalLocation"]["artifactLocation"]["uri"])
        related = result.get("relatedLocations", [])
        assert len(related) == len(diagnostic.related)
        for location in related:
            assert_uri_reference(location["physicalLocation"]["artifactLocation"]["uri"])


@settings(max_examples=200, deadline=None)
@given(diagnostics)
def test_any_diagnostics_give_one_reversible_github_command_each(
    found: tuple[Diagnostic, ...],
) -> None:
    shown = [d for d in found if d.severity is not Severity.OFF]
    # a base folder no generated path lies below: every file is named as given
    lines = format_github(found, RULES, base_dir=Path("/no-such-base")).split("\n")
    assert lines.pop() == ""
    assert len(lines) == len(shown)
    for line, diagnostic in zip(lines, shown, strict=True):
        command, properties, data = parse_command(line)
        assert command == {"info": "notice"}.get(
            diagnostic.severity.value, diagnostic.severity.value
        )
        assert properties["file"] == shown_in_log(diagnostic.span.file)
        assert properties["title"] == f"statekit [{diagnostic.slug}]"
        assert data == shown_in_log("\n".join((diagnostic.message, *diagnostic.notes)))


def shown_in_log(text: str) -> str:
    """What an annotation reads back as: the text, with every character a log viewer could
    act on but CR and LF (which the runner reads back) written as its escape."""
    return "".join(c if c in "\r\n" else terminal_text(c) for c in text)


@settings(max_examples=100, deadline=None)
@given(diagnostics)
def test_any_diagnostics_round_trip_through_json(found: tuple[Diagnostic, ...]) -> None:
    document = json.loads(format_json(found, RULES))
    shown = [d for d in found if d.severity is not Severity.OFF]
    assert sum(document["summary"].values()) == len(shown)
    assert [
        Diagnostic(
            d["slug"],
            Severity(d["severity"]),
            d["message"],
            SourceSpan(d["file"], d["line"], d["column"], d["end_line"], d["end_column"]),
            tuple(d["notes"]),
            tuple(
                RelatedLocation(
                    span=SourceSpan(
                        r["file"], r["line"], r["column"], r["end_line"], r["end_column"]
                    ),
                    message=r["message"],
                )
                for r in d["related"]
            ),
        )
        for d in document["diagnostics"]
    ] == shown


def test_rule_summary_is_one_line() -> None:
    with pytest.raises(ValueError, match="single line"):
        RuleInfo("x", Severity.ERROR, "two\nlines", "doc")


# -- sarif: rule help, related locations, GitHub's limits ---------------------


@pytest.mark.parametrize("slug", sorted(REGISTERED))
def test_every_rule_has_markdown_help_and_a_help_uri_that_exists(slug: str) -> None:
    info = REGISTERED[slug].info
    markdown = help_markdown(info)
    assert not re.search(r"::\s*$", markdown, re.M), "reStructuredText literal marker left"
    assert markdown.count("```") % 2 == 0
    if "Failing::" in info.doc:
        assert "Failing:\n\n```yaml\n" in markdown
    uri = help_uri(slug)
    page, _, anchor = uri.partition("#")
    assert page.endswith("/docs/rules.md") and anchor == slug
    assert f"\n## {slug}\n" in (ROOT / "docs" / "rules.md").read_text(encoding="utf-8")
    descriptor = next(
        rule
        for rule in json.loads(format_sarif((), {slug: info}))["runs"][0]["tool"]["driver"]["rules"]
    )
    assert descriptor["helpUri"] == uri
    assert descriptor["help"] == {"text": help_text(info), "markdown": markdown}
    assert "Failing::" not in descriptor["help"]["text"]
    # GitHub's limits: 1,024 characters of each description, 255 of the name; the full
    # description is the documentation up to the examples, which stay in `help`
    full = descriptor["fullDescription"]["text"]
    assert info.summary in full and len(full) <= 1024
    assert help_text(info).startswith(full) and "Failing:" not in full
    assert len(descriptor["shortDescription"]["text"]) <= 1024
    assert len(descriptor["name"]) <= 255


def test_undocumented_rules_get_help_too() -> None:
    rules = sarif()["runs"][0]["tool"]["driver"]["rules"]
    bare = next(rule for rule in rules if rule["id"] == "yaml-syntax")
    assert bare["helpUri"].endswith("/docs/rules.md")  # no heading of its own
    assert set(bare["help"]) == {"text", "markdown"}


@pytest.mark.parametrize("count", [0, 1, 2, MAX_RELATED_LOCATIONS, MAX_RELATED_LOCATIONS + 5])
def test_related_locations_are_rendered_and_capped(count: int) -> None:
    related = tuple(
        RelatedLocation(
            span=SourceSpan("machines/door.yaml", 10 + i, 3, 10 + i, 9), message=f"transition {i}"
        )
        if i % 2
        else RelatedLocation(
            span=SourceSpan(f"{Path.cwd()}/other.yaml", 1 + i, 1, 1 + i, 2), message=""
        )
        for i in range(count)
    )
    diagnostic = Diagnostic(
        slug="invariant-violation",
        severity=Severity.ERROR,
        message="m",
        span=SourceSpan("c.yaml", 1, 1, 1, 2),
        related=related,
    )
    text = format_sarif((diagnostic,), RULES, base_dir=Path.cwd())
    assert_valid_sarif(text)
    (result,) = json.loads(text)["runs"][0]["results"]
    if count == 0:
        assert "relatedLocations" not in result
        return
    shown = result["relatedLocations"]
    assert len(shown) == min(count, MAX_RELATED_LOCATIONS)
    assert [r["id"] for r in shown] == list(range(len(shown)))
    assert shown[0]["physicalLocation"]["artifactLocation"] == {
        "uri": "other.yaml",
        "uriBaseId": "%SRCROOT%",
    }
    assert "message" not in shown[0]
    if count > 1:
        assert shown[1]["message"] == {"text": "transition 1"}
        assert shown[1]["physicalLocation"]["region"]["startLine"] == 11


def _many(per_rule: dict[str, int]) -> tuple[Diagnostic, ...]:
    return tuple(
        Diagnostic(slug, Severity.ERROR, f"finding {i}", SourceSpan("c.yaml", i + 1, 1, i + 1, 2))
        for slug, n in per_rule.items()
        for i in range(n)
    )


@pytest.mark.parametrize(
    ("per_rule", "cap", "total", "expected"),
    [
        ({"a": 3}, 3, 100, {"a": 3}),
        ({"a": 4}, 3, 100, {"a": 4}),  # three kept and one saying one more was left out
        ({"a": 50, "b": 2}, 3, 100, {"a": 4, "b": 2}),
        ({"a": 5, "b": 5, "c": 5}, 3, 7, {"a": 4, "b": 3}),
        ({"a": 2, "b": 9}, 3, 3, {"a": 2, "b": 1}),
    ],
)
def test_results_are_capped_per_rule_and_per_run(
    monkeypatch: pytest.MonkeyPatch,
    per_rule: dict[str, int],
    cap: int,
    total: int,
    expected: dict[str, int],
) -> None:
    monkeypatch.setattr(sarif_format, "MAX_RESULTS_PER_RULE", cap)
    monkeypatch.setattr(sarif_format, "MAX_RESULTS", total)
    text = format_sarif(_many(per_rule), RULES)
    assert_valid_sarif(text)
    results = json.loads(text)["runs"][0]["results"]
    counted: dict[str, int] = {}
    for result in results:
        counted[result["ruleId"]] = counted.get(result["ruleId"], 0) + 1
    assert counted == expected
    assert len(results) <= total
    notes = [r["message"]["text"] for r in results if "left out" in r["message"]["text"]]
    for slug, n in per_rule.items():
        if n > cap and sum(per_rule.values()) <= total:
            assert f"{n - cap:,} more {slug} finding(s) left out" in "\n".join(notes)
    if sum(min(n, cap + 1) for n in per_rule.values()) > total:
        assert "per run" in results[-1]["message"]["text"]
    fingerprints = [r["partialFingerprints"][FINGERPRINT_KEY] for r in results]
    assert len(set(fingerprints)) == len(fingerprints)


def test_the_limits_are_under_githubs() -> None:
    """GitHub rejects more than 25,000 results per run and 1,000 locations per result."""
    assert MAX_RESULTS < 25_000
    assert MAX_RESULTS_PER_RULE <= MAX_RESULTS
    assert MAX_RELATED_LOCATIONS <= 1_000


def test_the_real_caps_keep_a_flood_within_githubs_limits() -> None:
    flood = _many({f"rule-{i:02}": MAX_RESULTS_PER_RULE + 1 for i in range(25)})
    text = format_sarif(flood, RULES)
    log = json.loads(text)
    (run,) = log["runs"]
    assert len(run["results"]) == MAX_RESULTS
    assert len(run["tool"]["driver"]["rules"]) <= 25_000
    assert len(gzip.compress(text.encode("utf-8"))) <= 10 * 1024 * 1024


@settings(max_examples=100, deadline=None)
@given(
    counts=st.dictionaries(st.sampled_from(["a", "b", "c", "d"]), st.integers(1, 30), max_size=4),
    cap=st.integers(1, 10),
    total=st.integers(1, 60),
)
def test_any_flood_is_capped_per_rule_and_per_run(
    counts: dict[str, int], cap: int, total: int
) -> None:
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(sarif_format, "MAX_RESULTS_PER_RULE", cap)
        patch.setattr(sarif_format, "MAX_RESULTS", total)
        text = format_sarif(_many(counts), RULES)
    assert_valid_sarif(text)
    results = json.loads(text)["runs"][0]["results"]
    kept = sum(n if n <= cap else cap + 1 for n in counts.values())
    assert len(results) == min(kept, total)
    for slug in counts:
        assert sum(r["ruleId"] == slug for r in results) <= cap + 1
    notes = [r["message"]["text"] for r in results if "left out" in r["message"]["text"]]
    left_out = 0
    for note in notes:
        match = re.match(r"([\d,]+) more", note)
        assert match, note
        left_out += int(match[1].replace(",", ""))
    if kept <= total:  # nothing cut per run: every finding is a result or counted in a note
        assert len(results) - len(notes) + left_out == sum(counts.values())
