"""An instance's state expressed in a newer version of its chart (`map_state`).

Each stored path (active or remembered by a history state) maps through the
newer chart's declared `rename` for the old version, else to itself; context
fields the newer chart declares keep their value, new ones take their
default, fields it no longer declares are dropped (the mapping lists them),
and the declared `context` expressions, evaluated over the old context, give
the fields they name. Armed timers map as `statekit.engine.timer_migration`
says (renamed with their state, or as the migration's `timers:` declares).
States the newer chart requires and the mapped configuration lacks (a region
added, a child of a state that was atomic) are entered as
`statekit.engine.state_completion` says (the migration's `enter:`, else default
entry; no entry effect runs), and their `after` timers armed, due from `now_ms`,
the migration's clock reading (the runner records it with the entry, so a replay
arms them alike).
Anything that does not fit the newer chart (a path it lacks, an illegal
configuration, a context value of the wrong type, a broken invariant, a timer
it does not declare) strands the instance: `Stranded` says why. This is pure:
the runner records the result (`statekit.runner.migration`) and the analysis
asks it which configurations a new version strands (`statekit.analysis.diff`).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from statekit.compiler.diagnostics import Diagnostic, Severity, SourceSpan
from statekit.compiler.expressions.clock import clock_reading
from statekit.compiler.expressions.expression import Expression, compile_expression
from statekit.compiler.expressions.scope import ExpressionScope, NoEvent
from statekit.compiler.model.migration_reads import MIGRATION_READS, NOT_IN_MIGRATIONS
from statekit.compiler.rules import expression_type
from statekit.engine.chart import Chart
from statekit.engine.errors import EvaluationError
from statekit.engine.evaluation import computed_value
from statekit.engine.state import STATE_FORMAT, State, StateFormatError
from statekit.engine.state_completion import complete_configuration
from statekit.engine.timer_migration import Stranded, arm_entered, map_timers
from statekit.engine.validation import EMPTY

__all__ = ["Mapped", "Stranded", "express_state", "map_state"]


@dataclass(frozen=True, slots=True)
class Mapped:
    """A state expressed in a newer chart, and the mapping used (JSON-ready)."""

    state: State
    mapping: dict[str, Any]
    timer_ids: Mapping[str, str] = field(default_factory=dict)
    """The armed timers whose ID the mapping changed: old ID → new ID."""
    retimed: frozenset[str] = frozenset()
    """The armed timers (new IDs) that kept their ID and changed their delay or due time."""
    dropped_timers: tuple[str, ...] = ()
    """The armed timers (old IDs) the mapping disarmed."""
    armed_timers: tuple[str, ...] = ()
    """The timers the states the mapping entered armed (their IDs)."""


def map_state(state: State, old: Chart, new: Chart, now_ms: int | None = None) -> Mapped:
    """`state` (of `old`) expressed in `new` (see the module docstring), at the clock
    reading `now_ms`; `Stranded` when it does not fit."""
    if old.name != new.name:
        raise Stranded(f"chart {new.name!r} is not a version of {old.name!r}")
    if new.version <= old.version:
        raise Stranded(f"version {new.version} is not newer than {old.version}")
    with clock_reading(now_ms):  # `now` in the new version's timers and migration values
        return express_state(state, old, new, now_ms)


def express_state(state: State, old: Chart, new: Chart, now_ms: int | None = None) -> Mapped:
    """The mapping proper of `map_state`, for any two versions of one chart (`statekit
    diff` compares versions that may not be ordered yet); `Stranded` when it does not fit."""
    declared_decl = new.ir.migration_from(old.version)
    declared = _declared(new, old)
    rename: Mapping[str, str] = declared.rename if declared is not None else {}
    data = state.to_data()
    index = new.ir.path_index

    def moved(path: str, remembered: bool) -> str:
        target = rename.get(path, path)
        if target not in index or index[target] == 0:
            how = (
                f"remembers state {path!r} in its history"
                if remembered
                else f"is in state {path!r}"
            )
            renamed = f" (renamed to {target!r})" if target != path else ""
            raise Stranded(
                f"the instance {how}{renamed}, which chart {new.name!r} version "
                f"{new.version} does not have"
            )
        return target

    completion = complete_configuration(
        new.ir,
        {moved(p, False) for p in data["configuration"]},
        declared_decl.enter if declared_decl is not None else {},
    )
    history = {
        moved(key, True): sorted({moved(p, True) for p in value})
        for key, value in data["history"].items()
    }
    old_context: dict[str, Any] = dict(data["context"])
    context: dict[str, Any] = {}
    defaulted: list[str] = []
    for name, decl in new.ir.context.items():
        if name in old_context:
            context[name] = old_context[name]
        else:
            context[name] = decl.default
            defaulted.append(name)
    computed: dict[str, str] = {}
    if declared is not None:
        for name, expression in declared.context.items():
            try:
                context[name] = computed_value(
                    f"migration context.{name}", expression, old_context, EMPTY, frozenset()
                )
            except EvaluationError as exc:
                raise Stranded(str(exc)) from exc
            computed[name] = expression.source
            if name in defaulted:
                defaulted.remove(name)
    dropped = sorted(set(old_context) - set(new.ir.context))
    moved_state = {
        "format": STATE_FORMAT,
        "statechart": new.name,
        "version": new.version,
        "digest": new.digest,
        "configuration": list(completion.configuration),
        "context": context,
        "history": history,
    }
    timers = None
    generation = data.get("timer_generation") or 0
    kept: list[dict[str, Any]] = []
    if generation:  # armed timers stay armed (the newer chart must have them)
        timers = map_timers(data["timers"], new, declared_decl, context)
        kept = list(timers.entries)
    armed = arm_entered(completion.entered, new, context, generation, now_ms)
    if generation or armed:
        moved_state.update(timers=kept + list(armed), timer_generation=generation + len(armed))
    try:
        mapped = State.from_json(new, moved_state)
    except StateFormatError as exc:
        raise Stranded(f"the mapped state does not fit version {new.version}: {exc}") from exc
    mapping: dict[str, Any] = {
        "rename": {k: v for k, v in sorted(rename.items())},
        "context": computed,
        "defaulted": sorted(defaulted),
        "dropped": dropped,
    }
    armed_ids = tuple(t["id"] for t in armed)
    if completion.entered:  # absent otherwise: the entries of earlier migrations verify as before
        mapping["entered"] = list(completion.entered)
    if timers is None:
        return Mapped(state=mapped, mapping=mapping, armed_timers=armed_ids)
    if timers.declared:  # absent otherwise: the entries of earlier migrations verify as before
        mapping["timers"] = dict(sorted(timers.declared.items()))
    return Mapped(
        state=mapped,
        mapping=mapping,
        timer_ids=timers.renamed,
        retimed=timers.retimed,
        dropped_timers=timers.dropped,
        armed_timers=armed_ids,
    )


@dataclass(frozen=True, slots=True)
class _Declared:
    rename: Mapping[str, str]
    context: Mapping[str, Expression]


def _declared(new: Chart, old: Chart) -> _Declared | None:
    """The migration `new` declares from `old`'s version, its context values typed
    against `old`'s context (`Stranded`, with their positions, when they do not fit)."""
    declared = new.ir.migration_from(old.version)
    if declared is None:
        return None

    def no_states(ref: str, span: SourceSpan) -> Diagnostic:
        return Diagnostic(
            slug=expression_type.SLUG,
            severity=Severity.ERROR,
            message=f"active({ref!r}): a migration's context reads only the old context",
            span=span,
        )

    scope = ExpressionScope(
        context={name: decl.type for name, decl in old.ir.context.items()},
        event=NoEvent(reason="a migration's context reads only the old context"),
        resolve_state=no_states,
        no_definitions=f"{MIGRATION_READS}; {NOT_IN_MIGRATIONS}",
    )
    context: dict[str, Expression] = {}
    problems: list[str] = []
    for value in declared.context:
        compiled = compile_expression(
            value.source,
            value.span,
            scope,
            new.ir.context[value.field].type,
            f"migration context.{value.field}",
        )
        if isinstance(compiled, tuple):
            problems.extend(f"{d.span}: {d.message}" for d in compiled)
        else:
            context[value.field] = compiled
    if problems:
        raise Stranded(
            f"the migration from version {old.version} does not fit its context: "
            + "; ".join(problems)
        )
    return _Declared(rename=declared.rename, context=context)
