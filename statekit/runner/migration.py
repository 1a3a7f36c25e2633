"""Migrating an instance to a newer version of its chart: the mapping and its history entry.

An instance stays on the chart version it was created under; it moves to a
newer version only by `Runner.migrate`, which writes one history entry of its
own: an event row with the reserved event ID `statekit.migrate.v<from>.v<to>`
and type `statekit.migrate`, taking the next sequence (so a writer holding the
old version gets VERSION_CONFLICT and re-reads). Its payload is what was
mapped (`from`, `to`, the `mapping`); its evidence adds both chart digests and
the sha256 of the state before and after (of `State.to_json`, the text a
snapshot hashes). Replay (`history.fold`) maps the state again with the
mapping the newer chart declares and `verify` compares the entry with it.

The mapping (`map_state`): each stored path (active or remembered by a
history state) maps through the newer chart's declared `rename` for the old
version, else to itself; context fields the newer chart declares keep their
value, new ones take their default, fields it no longer declares are dropped
(the entry lists them), and the declared `context` expressions, evaluated over
the old context, give the fields they name. Anything that does not fit the
newer chart (a path it lacks, an illegal configuration, a context value of
the wrong type, a broken invariant) strands the instance: `Stranded` says why
and nothing is written. An armed `after` timer of a renamed state moves with it
(`moved_timer_id`: its ID names the owning state's path), keeping its generation
and due time; `Mapped.timer_ids` lists the IDs that changed, which the runner's
timer rows (`Runner.migrate`) and the replay's (`history.fold`) follow.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from statekit.compiler.diagnostics import Diagnostic, Severity, SourceSpan
from statekit.compiler.expressions.expression import Expression, compile_expression
from statekit.compiler.expressions.scope import ExpressionScope, NoEvent
from statekit.compiler.rules import expression_type
from statekit.compiler.serialize import canonical_json
from statekit.engine.chart import Chart
from statekit.engine.errors import EvaluationError
from statekit.engine.evaluation import computed_value
from statekit.engine.state import STATE_FORMAT, State, StateFormatError
from statekit.engine.validation import EMPTY
from statekit.runner.hashes import text_sha256

MIGRATE_TYPE = "statekit.migrate"
"""The type of a migration entry in a history."""
MIGRATE_PREFIX = "statekit.migrate."
"""The start of a migration entry's (reserved) event ID."""


class Stranded(Exception):
    """The state cannot be expressed in the newer chart; the message says why."""


def migration_event_id(from_version: int, to_version: int) -> str:
    """The reserved event ID of the entry migrating from `from_version` to `to_version`."""
    return f"{MIGRATE_PREFIX}v{from_version}.v{to_version}"


def is_migration(event_id: str, type: str) -> bool:
    """Whether an event row is a migration entry (its ID is reserved: no caller can send it)."""
    return type == MIGRATE_TYPE and event_id.startswith(MIGRATE_PREFIX)


@dataclass(frozen=True, slots=True)
class Mapped:
    """A state expressed in a newer chart, and the mapping used (JSON-ready)."""

    state: State
    mapping: dict[str, Any]
    timer_ids: Mapping[str, str] = field(default_factory=dict)
    """The armed timers whose ID the mapping changed: old ID → new ID."""


def moved_timer_id(timer_id: str, owner: str | None, rename: Mapping[str, str]) -> str:
    """The ID of an armed timer once its owning state `owner` is renamed by `rename`: an
    `after` timer's ID ends with `@<owner path>` (`compiler.model.timers.timer_name`),
    so it moves with its state; a sent timer (no owner) keeps its ID."""
    suffix = f"@{owner}"
    if owner is None or owner not in rename or not timer_id.endswith(suffix):
        return timer_id
    return f"{timer_id[: -len(suffix)]}@{rename[owner]}"


def state_sha256(state: State) -> str:
    """The sha256 a migration entry records for a state (of its `to_json` text)."""
    return text_sha256(state.to_json())


def map_state(state: State, old: Chart, new: Chart) -> Mapped:
    """`state` (of `old`) expressed in `new` (see the module docstring); `Stranded` when
    it does not fit."""
    if old.name != new.name:
        raise Stranded(f"chart {new.name!r} is not a version of {old.name!r}")
    if new.version <= old.version:
        raise Stranded(f"version {new.version} is not newer than {old.version}")
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

    configuration = sorted({moved(p, False) for p in data["configuration"]})
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
        "configuration": configuration,
        "context": context,
        "history": history,
    }
    timer_ids: dict[str, str] = {}
    if data.get("timer_generation"):  # armed timers stay armed (the newer chart must have them)
        timers = []
        for entry in data["timers"]:
            owner = entry.get("owner")
            new_id = moved_timer_id(entry["id"], owner, rename)
            if new_id != entry["id"]:  # an `after` timer delivers its own ID as its event
                timer_ids[entry["id"]] = new_id
                entry = {**entry, "id": new_id, "event": new_id, "owner": rename[owner]}
            timers.append(entry)
        moved_state.update(timers=timers, timer_generation=data["timer_generation"])
    try:
        mapped = State.from_json(new, moved_state)
    except StateFormatError as exc:
        raise Stranded(f"the mapped state does not fit version {new.version}: {exc}") from exc
    mapping = {
        "rename": {k: v for k, v in sorted(rename.items())},
        "context": computed,
        "defaulted": sorted(defaulted),
        "dropped": dropped,
    }
    return Mapped(state=mapped, mapping=mapping, timer_ids=timer_ids)


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


def entry_payload(from_version: int, to_version: int, mapping: Mapping[str, Any]) -> dict[str, Any]:
    """The payload of a migration entry."""
    return {"from": from_version, "to": to_version, "mapping": dict(mapping)}


def entry_evidence(before: State, after: State, old: Chart, new: Chart, mapped: Mapped) -> str:
    """The evidence of a migration entry, as canonical JSON (what replay recomputes)."""
    return canonical_json(
        {
            "migration": {
                "from": old.version,
                "to": new.version,
                "from_digest": old.digest,
                "to_digest": new.digest,
                "mapping": mapped.mapping,
                "state_sha256_before": state_sha256(before),
                "state_sha256_after": state_sha256(after),
            }
        }
    )


@dataclass(frozen=True, slots=True)
class MigrationReport:
    """What `Runner.migrate` did or would do with one instance.

    `status`: `MIGRATED` (an entry was written at `sequence`), `WOULD_MIGRATE`
    (a dry run that would), `CURRENT` (already on this version: nothing to
    do), `STRANDED` (`reason` says why; nothing written).
    """

    instance_id: str
    status: str
    from_version: int
    to_version: int
    configuration: tuple[str, ...]
    mapped_configuration: tuple[str, ...] = ()
    reason: str | None = None
    mapping: Mapping[str, Any] = field(default_factory=dict)
    state_sha256_before: str | None = None
    state_sha256_after: str | None = None
    sequence: int | None = None

    def to_data(self) -> dict[str, Any]:
        """JSON-ready form (`statekit migrate --format json`)."""
        return {
            "instance": self.instance_id,
            "status": self.status,
            "from": self.from_version,
            "to": self.to_version,
            "configuration": list(self.configuration),
            "mapped_configuration": list(self.mapped_configuration),
            "reason": self.reason,
            "mapping": dict(self.mapping),
            "state_sha256_before": self.state_sha256_before,
            "state_sha256_after": self.state_sha256_after,
            "sequence": self.sequence,
        }
