"""The registry of lint rules: every rule module, listed explicitly.

The compile-stage rules live in `statekit.compiler.rules`, the chart rules and
the family rules (across the charts linted together) in `statekit.lint.rules`.
The list is explicit (not discovered at run time) so that imports stay cheap
and typed; a test checks that every module in both folders is listed here.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from types import MappingProxyType, ModuleType

from statekit.analysis.facts import ChartFacts
from statekit.compiler.diagnostics import Diagnostic, Severity
from statekit.compiler.ir import CompiledChart
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
from statekit.lint.family_checks import FamilyView
from statekit.lint.ruleinfo import RuleInfo
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

RULE_MODULES: tuple[ModuleType, ...] = (
    yaml_syntax,
    duplicate_key,
    yaml_limits,
    schema,
    unknown_state,
    ambiguous_state,
    unknown_event,
    unknown_guard,
    unknown_timer_id,
    invalid_initial,
    invalid_migration,
    invalid_target,
    invalid_idempotency_key,
    expression_syntax,
    expression_unsafe,
    expression_type,
    definition_cycle,
    table_incomplete,
    final_has_transitions,
    unused_event,
    unused_guard,
    confusable_name,
    shadowed_transition,
    unreachable_state,
    dead_state,
    no_final_path,
    undefined_pair,
    shadowed_reject,
    region_reset,
    conflicting_transitions,
    invariant_violation,
    unreachable_transition,
    transient_timer,
    undecided_race,
    order_dependent_answer,
    stale_race_decision,
    invoke_unknown_chart,
    invoke_cycle,
    invoke_input,
    invoke_output,
    invoke_unclassified,
    send_unknown_target,
    send_event,
    analysis_limit,
)

Check = Callable[[CompiledChart, ChartFacts], Iterator[Diagnostic]]
"""A chart rule: the findings of one compiled chart, given its shared exploration facts."""

FamilyCheck = Callable[[CompiledChart, FamilyView], Iterator[Diagnostic]]
"""A family rule: the findings of one compiled chart about the chart set it is linted in."""


@dataclass(frozen=True, slots=True)
class Rule:
    """A registered rule: its documentation, stage and its check (`check` for a chart
    rule, `family_check` for a family rule; neither for a compile-stage rule)."""

    info: RuleInfo
    stage: str
    check: Check | None
    family_check: FamilyCheck | None = None

    @property
    def configurable(self) -> bool:
        """Compile-stage rules stop the build, so they cannot be ignored or downgraded."""
        return self.stage != "compile"


def _rule(module: ModuleType) -> Rule:
    doc = (module.__doc__ or "").strip()
    summary = doc.splitlines()[0].split(":", 1)[-1].strip() if doc else module.SLUG
    severity: Severity = module.DEFAULT_SEVERITY
    info = RuleInfo(module.SLUG, severity, summary, doc)
    if module.STAGE == "family":
        return Rule(info, module.STAGE, None, module.check)
    check: Check | None = getattr(module, "check", None)
    return Rule(info, module.STAGE, check)


RULES: Mapping[str, Rule] = MappingProxyType({m.SLUG: _rule(m) for m in RULE_MODULES})


def rule_infos() -> dict[str, RuleInfo]:
    """Slug → RuleInfo, for the output formats."""
    return {slug: rule.info for slug, rule in RULES.items()}
