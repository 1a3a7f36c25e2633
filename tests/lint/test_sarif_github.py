"""The SARIF log against what GitHub code scanning documents it reads, property by property.

GitHub's table of supported properties ("SARIF support for code scanning",
https://docs.github.com/en/code-security/code-scanning/integrating-with-code-scanning/sarif-support-for-code-scanning):
per rule `id`, `name` (at most 255 characters), `shortDescription.text` and
`fullDescription.text` (each at most 1,024), `defaultConfiguration.level`,
`help.text` (required) and `help.markdown`, `properties.tags`,
`properties.precision` (`very-high`, `high`, `medium`, `low`),
`properties.problem.severity` (`error`, `warning`, `recommendation`) and
`properties.security-severity` (security rules only); per result `ruleId`,
`level`, `message.text`, `locations` and `partialFingerprints`, of which code
scanning reads `primaryLocationLineHash` only.

The logs come from the real command; each is also validated against the SARIF
2.1.0 JSON schema (`sarif-schema-2.1.0.json` beside this file: OASIS's errata01
schema, https://docs.oasis-open.org/sarif/sarif/v2.1.0/errata01/os/schemas/sarif-schema-2.1.0.json).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import jsonschema
import pytest
from cli_process import ROOT, statekit

from statekit.compiler.diagnostics import Severity
from statekit.lint.line_hash import line_hashes
from statekit.lint.registry import RULES
from statekit.lint.rule_properties import PRECISIONS, RULE_PROPERTIES
from statekit.lint.ruleinfo import RuleInfo
from statekit.lint.sarif_format import full_description

HERE = Path(__file__).parent
FIXTURES = HERE / "fixtures" / "rules"
SARIF_VALIDATOR = jsonschema.Draft4Validator(
    json.loads((HERE / "sarif-schema-2.1.0.json").read_text(encoding="utf-8"))
)
RULE_KEYS = {
    "id",
    "name",
    "shortDescription",
    "fullDescription",
    "defaultConfiguration",
    "help",
    "helpUri",
    "properties",
}
PROBLEM_SEVERITY = {
    Severity.ERROR: "error",
    Severity.WARNING: "warning",
    Severity.INFO: "recommendation",
    Severity.OFF: "recommendation",
}


def lint_sarif(*args: str, stdin: str = "", cwd: Path = ROOT) -> dict[str, Any]:
    done = statekit("lint", "--format", "sarif", *args, stdin=stdin, cwd=cwd)
    assert done.returncode in (0, 1), done.stderr
    log: dict[str, Any] = json.loads(done.stdout)
    errors = [f"{list(e.absolute_path)}: {e.message}" for e in SARIF_VALIDATOR.iter_errors(log)]
    assert errors == []
    return log


@pytest.fixture(scope="module")
def fixtures_log() -> dict[str, Any]:
    return lint_sarif(str(FIXTURES))


def test_every_registered_rule_has_a_precision_and_tags() -> None:
    assert set(RULE_PROPERTIES) == set(RULES)


def test_every_rule_descriptor_has_what_code_scanning_reads(fixtures_log: dict[str, Any]) -> None:
    rules = fixtures_log["runs"][0]["tool"]["driver"]["rules"]
    assert {rule["id"] for rule in rules} == set(RULES)
    for rule in rules:
        assert set(rule) <= RULE_KEYS, rule["id"]
        assert len(rule["name"]) <= 255
        for description in ("shortDescription", "fullDescription"):
            assert 0 < len(rule[description]["text"]) <= 1024, (rule["id"], description)
        assert rule["help"]["text"] and rule["help"]["markdown"]
        assert rule["defaultConfiguration"]["level"] in ("note", "warning", "error")
        properties = rule["properties"]
        assert properties["precision"] in PRECISIONS
        assert (
            properties["problem.severity"]
            == PROBLEM_SEVERITY[RULES[rule["id"]].info.default_severity]
        )
        tags = properties["tags"]
        assert tags and all(isinstance(t, str) and t for t in tags)
        # not a security query: no security severity, no tag that would make it one
        assert "security-severity" not in properties and "security" not in tags


def test_the_longest_documentation_stays_in_help(fixtures_log: dict[str, Any]) -> None:
    rules = {r["id"]: r for r in fixtures_log["runs"][0]["tool"]["driver"]["rules"]}
    long = [slug for slug, rule in rules.items() if len(rule["help"]["text"]) > 1024]
    assert "undefined-pair" in long  # its documentation is over 2,000 characters
    for slug in long:
        assert rules[slug]["help"]["text"].startswith(rules[slug]["fullDescription"]["text"])


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        # known answers from github/codeql-action's src/fingerprints.test.ts
        ("", ["c129715d7a2bc9a3:1"]),
        (
            " a\nb\n  \t\tc\n d",
            ["271789c17abda88f:1", "54703d4cd895b18:1", "180aee12dab6264:1", "a23a3dc5e078b07b:1"],
        ),
        *(
            (
                text,
                [
                    "e9496ae3ebfced30:1",
                    "fb7c023a8b9ccb3f:1",
                    "ce8ba1a563dcdaca:1",
                    "e20e36e16fcb0cc8:1",
                    "b3edc88f2938467e:1",
                    "c8e28b0b4002a3a0:1",
                    "c129715d7a2bc9a3:1",
                ],
            )
            for text in (
                " hello; \t\nworld!!!\n\n\n  \t\tGreetings\n End\n",
                " hello; \t\nworld!!!\r\r\r  \t\tGreetings\r End\r",
                " hello; \t\r\nworld!!!\r\n\r\n\r\n  \t\tGreetings\r\n End\r\n",
                " hello; \t\nworld!!!\r\n\n\r  \t\tGreetings\r End\r\n",
            )
        ),
        (
            "Lorem ipsum dolor sit amet.\n" * 10,
            [f"a7f2ff13bc495cf2:{n}" for n in range(1, 7)]
            + [
                "a7f2ff1481e87703:1",
                "a9cf91f7bbf1862b:1",
                "55ec222b86bcae53:1",
                "cc97dc7b1d7d8f7b:1",
                "c129715d7a2bc9a3:1",
            ],
        ),
    ],
    ids=["empty", "blanks", "lf", "cr", "crlf", "mixed", "repeated"],
)
def test_line_hashes_are_code_scannings(text: str, expected: list[str]) -> None:
    assert list(line_hashes(text)) == expected


def test_each_result_carries_the_hash_of_its_line(fixtures_log: dict[str, Any]) -> None:
    run = fixtures_log["runs"][0]
    base = Path(run["originalUriBaseIds"]["%SRCROOT%"]["uri"].removeprefix("file://"))
    assert run["results"]
    for result in run["results"]:
        location = result["locations"][0]["physicalLocation"]
        # read as the upload action reads it: UTF-8, an undecodable byte replaced
        data = (base / location["artifactLocation"]["uri"]).read_bytes()
        text = data.decode("utf-8", errors="replace")
        line = location["region"]["startLine"]
        assert (
            result["partialFingerprints"]["primaryLocationLineHash"]
            == (line_hashes(text)[line - 1])
        )


def test_standard_input_without_a_name_is_the_uri_stdin(tmp_path: Path) -> None:
    text = (FIXTURES / "unknown-state.yaml").read_text(encoding="utf-8")
    log = lint_sarif("-", stdin=text, cwd=tmp_path)
    [result] = log["runs"][0]["results"]
    artifact = result["locations"][0]["physicalLocation"]["artifactLocation"]
    assert artifact["uri"] == "stdin" and "uriBaseId" not in artifact
    assert "--stdin-filename" in artifact["description"]["text"]
    line = result["locations"][0]["physicalLocation"]["region"]["startLine"]
    assert result["partialFingerprints"]["primaryLocationLineHash"] == line_hashes(text)[line - 1]
    named = lint_sarif("-", "--stdin-filename", "charts/door.yaml", stdin=text, cwd=tmp_path)
    [result] = named["runs"][0]["results"]
    assert result["locations"][0]["physicalLocation"]["artifactLocation"] == {
        "uri": "charts/door.yaml",
        "uriBaseId": "%SRCROOT%",
    }


def test_a_long_description_keeps_the_sentences_that_fit() -> None:
    sentence = "A sentence of forty characters, e.g. this. "
    long_paragraph = (sentence * 40).strip()
    info = RuleInfo("x-rule", Severity.WARNING, "x-rule: a summary.", "")
    doc = f"x-rule: a summary.\n\n{long_paragraph}\n\nFailing::\n\n    a: b\n"
    full = full_description(RuleInfo(info.slug, info.default_severity, info.summary, doc))
    assert len(full) <= 1024 and full.endswith("e.g. this.")  # not cut after "e.g."
    assert full.startswith("x-rule: a summary.\n\nA sentence")
    assert len(full) > 1024 - len(sentence) - len("x-rule: a summary.\n\n")
    endless = RuleInfo("y-rule", Severity.WARNING, "no end", "word " * 400)
    assert len(full_description(endless)) == 1024 and full_description(endless).endswith("…")
