"""The root state is never entered or exited (docs/semantics.md, "The root"): an instance
starts in the root's initial states and ends in a top-level final state, so an `entry:`
or `exit:` on the root would never run. The schema lets a state have them; this check
refuses them on the root with a positioned error naming where the effects belong."""

from __future__ import annotations

from collections.abc import Iterator

from statekit.compiler.diagnostics import Diagnostic, Severity
from statekit.compiler.rules import schema as schema_rule
from statekit.compiler.source.nodes import MappingNode

_NEVER = {
    "entry": (
        "entered",
        "put these effects in the `entry:` of the initial state (they run when an instance "
        "is created), or in `context:` defaults",
    ),
    "exit": (
        "exited",
        "put these effects on the transitions into a top-level final state, or in that "
        "final state's `entry:`",
    ),
}


def root_effect_problems(root: MappingNode) -> Iterator[Diagnostic]:
    """An error for each `entry:` and `exit:` of the root mapping, at its key."""
    for key, (verb, note) in _NEVER.items():
        value = root.get(key)
        if value is None:
            continue
        where = root.key_node(key)
        yield Diagnostic(
            slug=schema_rule.SLUG,
            severity=Severity.ERROR,
            message=f"'{key}:' on the root: the root state is never {verb}, so these "
            "effects would never run",
            span=(where or value).span,
            notes=(note,),
        )
