"""What the linter's output formats know about a rule: its slug, default severity and docs."""

from __future__ import annotations

from dataclasses import dataclass

from statekit.compiler.diagnostics import Severity


@dataclass(frozen=True, slots=True)
class RuleInfo:
    """The documentation of one lint rule, as the output formats publish it.

    `summary` is a single line (SARIF `shortDescription`); `doc` is the rule
    module's full docstring (SARIF `help`, and `fullDescription` up to its examples).
    """

    slug: str
    default_severity: Severity
    summary: str
    doc: str

    def __post_init__(self) -> None:
        if not self.slug:
            raise ValueError("a rule needs a non-empty slug")
        if "\n" in self.summary or "\r" in self.summary:
            raise ValueError(f"rule {self.slug!r}: summary must be a single line")
