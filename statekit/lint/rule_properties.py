"""What GitHub code scanning reads of a rule beyond its text: how often its findings are
true (`precision`) and the tags it is filtered by, per rule.

Code scanning orders and filters alerts by `properties.precision` (`very-high`,
`high`, `medium`, `low`), `properties.problem.severity` (`error`, `warning`,
`recommendation`; written from the rule's default severity) and
`properties.tags`. No statekit rule is a security query, so none has a
`security-severity` (a rule with one is shown as a security alert) nor the
`security` tag. See
https://docs.github.com/en/code-security/code-scanning/integrating-with-code-scanning/sarif-support-for-code-scanning#reportingdescriptor-object
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType

from statekit.compiler.diagnostics import Severity
from statekit.compiler.rules import (
    ambiguous_state,
    definition_cycle,
    duplicate_key,
    expression_syntax,
    expression_type,
    expression_unsafe,
    invalid_idempotency_key,
    invalid_initial,
    invalid_migration,
    invalid_target,
    schema,
    table_incomplete,
    unknown_event,
    unknown_guard,
    unknown_state,
    unknown_timer_id,
    yaml_limits,
    yaml_syntax,
)
from statekit.lint.rules import (
    analysis_limit,
    conflicting_transitions,
    confusable_name,
    dead_state,
    final_has_transitions,
    invariant_violation,
    invoke_cycle,
    invoke_input,
    invoke_output,
    invoke_unclassified,
    invoke_unknown_chart,
    no_final_path,
    order_dependent_answer,
    region_reset,
    send_event,
    send_unknown_target,
    shadowed_reject,
    shadowed_transition,
    stale_race_decision,
    transient_timer,
    undecided_race,
    undefined_pair,
    unreachable_state,
    unreachable_transition,
    unused_event,
    unused_guard,
)

PRECISIONS = ("very-high", "high", "medium", "low")
"""The values code scanning accepts for `precision`, most precise first."""


@dataclass(frozen=True, slots=True)
class RuleProperties:
    """A rule's precision and tags (see the module docstring)."""

    precision: str
    tags: tuple[str, ...]

    def __post_init__(self) -> None:
        if self.precision not in PRECISIONS:
            raise ValueError(f"precision {self.precision!r} is not one of {PRECISIONS}")


# The compiler's findings are facts about the text (the chart cannot be built): very high.
_SYNTAX = RuleProperties("very-high", ("correctness", "syntax", "compile"))
_REFERENCE = RuleProperties("very-high", ("correctness", "references", "compile"))
_EXPRESSION = RuleProperties("very-high", ("correctness", "expressions", "compile"))
# The exploration's findings come with a counterexample from the initial configuration;
# data guards it cannot decide are assumed either way, so a path may not be feasible: high.
_EXPLORED = RuleProperties("high", ("correctness", "analysis"))
# Facts across the charts linted together (names, declared types): very high.
_FAMILY = RuleProperties("very-high", ("correctness", "references", "composition"))

RULE_PROPERTIES: Mapping[str, RuleProperties] = MappingProxyType(
    {
        yaml_syntax.SLUG: _SYNTAX,
        duplicate_key.SLUG: _SYNTAX,
        yaml_limits.SLUG: _SYNTAX,
        schema.SLUG: _SYNTAX,
        unknown_state.SLUG: _REFERENCE,
        ambiguous_state.SLUG: _REFERENCE,
        unknown_event.SLUG: _REFERENCE,
        unknown_guard.SLUG: _REFERENCE,
        unknown_timer_id.SLUG: _REFERENCE,
        invalid_initial.SLUG: _REFERENCE,
        invalid_migration.SLUG: _REFERENCE,
        invalid_target.SLUG: _REFERENCE,
        invalid_idempotency_key.SLUG: _REFERENCE,
        expression_syntax.SLUG: _EXPRESSION,
        expression_unsafe.SLUG: _EXPRESSION,
        expression_type.SLUG: _EXPRESSION,
        definition_cycle.SLUG: _EXPRESSION,
        table_incomplete.SLUG: RuleProperties("very-high", ("correctness", "completeness")),
        final_has_transitions.SLUG: RuleProperties("very-high", ("correctness",)),
        unused_event.SLUG: RuleProperties("very-high", ("maintainability", "unused-code")),
        unused_guard.SLUG: RuleProperties("very-high", ("maintainability", "unused-code")),
        # a heuristic over how names read: some findings are names meant that way
        confusable_name.SLUG: RuleProperties("medium", ("readability",)),
        shadowed_transition.SLUG: RuleProperties("high", ("correctness",)),
        unreachable_state.SLUG: _EXPLORED,
        dead_state.SLUG: _EXPLORED,
        no_final_path.SLUG: _EXPLORED,
        undefined_pair.SLUG: RuleProperties("high", ("correctness", "analysis", "completeness")),
        shadowed_reject.SLUG: RuleProperties("high", ("maintainability", "analysis")),
        # re-entering a parallel state may be meant: the rule asks to say so
        region_reset.SLUG: RuleProperties("medium", ("correctness", "concurrency")),
        conflicting_transitions.SLUG: RuleProperties(
            "high", ("correctness", "analysis", "concurrency")
        ),
        invariant_violation.SLUG: _EXPLORED,
        unreachable_transition.SLUG: RuleProperties("high", ("maintainability", "analysis")),
        transient_timer.SLUG: RuleProperties("high", ("correctness", "analysis", "timers")),
        undecided_race.SLUG: RuleProperties("high", ("correctness", "analysis", "concurrency")),
        # either order may be acceptable: an info-level prompt to decide
        order_dependent_answer.SLUG: RuleProperties("medium", ("analysis", "concurrency")),
        stale_race_decision.SLUG: RuleProperties("high", ("maintainability", "concurrency")),
        invoke_unknown_chart.SLUG: _FAMILY,
        invoke_cycle.SLUG: _FAMILY,
        invoke_input.SLUG: _FAMILY,
        invoke_output.SLUG: _FAMILY,
        send_unknown_target.SLUG: _FAMILY,
        send_event.SLUG: _FAMILY,
        invoke_unclassified.SLUG: RuleProperties(
            "high", ("correctness", "analysis", "completeness", "composition")
        ),
        # a statement about the analysis itself, always true when reported
        analysis_limit.SLUG: RuleProperties("very-high", ("analysis",)),
    }
)
"""Slug → precision and tags, for every registered rule (a test keeps them in step)."""

PROBLEM_SEVERITY = MappingProxyType(
    {
        Severity.ERROR: "error",
        Severity.WARNING: "warning",
        Severity.INFO: "recommendation",
        Severity.OFF: "recommendation",
    }
)
"""A rule's default severity as code scanning's `problem.severity`."""


def sarif_properties(slug: str, default_severity: Severity) -> dict[str, object]:
    """The `properties` bag of a rule's SARIF descriptor: `problem.severity` always,
    `precision` and `tags` when the rule is known."""
    bag: dict[str, object] = {"problem.severity": PROBLEM_SEVERITY[default_severity]}
    known = RULE_PROPERTIES.get(slug)
    if known is not None:
        bag["precision"] = known.precision
        bag["tags"] = list(known.tags)
    return bag
