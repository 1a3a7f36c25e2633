"""Every rule module is registered, documented, and listed in the README."""

from __future__ import annotations

import pkgutil
import re
from pathlib import Path

import statekit.compiler.rules
import statekit.lint.rules
from statekit.compiler.diagnostics import Severity
from statekit.lint.registry import RULE_MODULES, RULES

ROOT = Path(__file__).resolve().parents[2]
ISSUE_SLUGS = {
    "yaml-syntax",
    "duplicate-key",
    "yaml-limits",
    "schema",
    "unknown-state",
    "ambiguous-state",
    "unknown-event",
    "unknown-guard",
    "invalid-initial",
    "expression-syntax",
    "expression-unsafe",
    "expression-type",
    "final-has-transitions",
    "unused-event",
    "unused-guard",
    "unreachable-state",
    "dead-state",
    "no-final-path",
    "undefined-pair",
    "shadowed-transition",
    "conflicting-transitions",
    "invariant-violation",
    "unreachable-transition",
    "analysis-limit",
}


def test_every_module_in_the_rules_folders_is_registered() -> None:
    folders = (*statekit.compiler.rules.__path__, *statekit.lint.rules.__path__)
    names = {m.name for m in pkgutil.iter_modules(folders)}
    registered = {m.__name__.rsplit(".", 1)[1] for m in RULE_MODULES}
    assert names == registered


def test_module_names_match_slugs_and_every_rule_is_documented() -> None:
    for module in RULE_MODULES:
        assert module.__name__.rsplit(".", 1)[1] == module.SLUG.replace("-", "_")
        doc = module.__doc__ or ""
        assert doc.startswith(f"{module.SLUG}: "), module.SLUG
        assert "Failing::" in doc and "Passing::" in doc, module.SLUG
        assert module.STAGE in {"compile", "chart", "family"}
        assert (module.STAGE != "compile") == callable(getattr(module, "check", None))


def test_family_rules_are_registered_with_their_family_check() -> None:
    family = {slug for slug, rule in RULES.items() if rule.stage == "family"}
    assert family == {
        "invoke-unknown-chart",
        "invoke-cycle",
        "invoke-input",
        "invoke-output",
        "invoke-unclassified",
        "send-unknown-target",
        "send-event",
    }
    assert all(
        RULES[slug].family_check is not None and RULES[slug].check is None for slug in family
    )


def test_the_issue_slugs_all_exist() -> None:
    assert set(RULES) >= ISSUE_SLUGS


def test_default_severities() -> None:
    warnings = {slug for slug, r in RULES.items() if r.info.default_severity is Severity.WARNING}
    assert warnings == {
        "unused-event",
        "unused-guard",
        "unreachable-transition",
        "transient-timer",
        "shadowed-reject",
        "region-reset",
        "confusable-name",
        "undecided-race",
        "stale-race-decision",
    }


def test_readme_lists_every_rule_with_its_default() -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    rows = dict(
        re.findall(
            r"^\| `([a-z-]+)` \| (?:compile|chart|family) \| (error|warning|info) \|", readme, re.M
        )
    )
    assert rows == {slug: r.info.default_severity.value for slug, r in RULES.items()}
