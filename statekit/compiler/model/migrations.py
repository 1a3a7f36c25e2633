"""The chart's `migrations:` read: earlier versions, state renames, context values, timers,
states entered.

What the compiler can check without the earlier chart is checked here, each
with its position: `from` is an earlier version and appears once, a rename's
target is a state of this chart (a full dotted path, not the root or a
history pseudo-state), a computed field is declared in this chart's
context, a timer's `to` is a timer of this chart, and an `enter:` entry names a
state of this chart and that state or one of its descendants. The context
expressions read the old context, so they are typed against the earlier
chart when an instance is migrated (`statekit.engine.state_migration`); only
their reads of this chart's definitions and tables are reported here
(`statekit.compiler.model.migration_reads`).
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Mapping
from dataclasses import dataclass
from types import MappingProxyType

from statekit.compiler.diagnostics import Diagnostic, Severity, SourceSpan
from statekit.compiler.ir import FieldDecl
from statekit.compiler.migration_ir import MigrationDecl, MigrationValue, TimerDue, TimerMigration
from statekit.compiler.model.declarations import mapping_items, text
from statekit.compiler.model.migration_reads import NOT_IN_MIGRATIONS, unavailable_reads
from statekit.compiler.rules import invalid_migration
from statekit.compiler.source.nodes import MappingNode, Node, ScalarNode, SequenceNode


@dataclass(frozen=True, slots=True)
class ReadMigrations:
    """The declared migrations without errors, in declaration order, and the errors."""

    migrations: tuple[MigrationDecl, ...]
    problems: tuple[Diagnostic, ...]


def read_migrations(
    node: Node | None,
    version: int,
    paths: Mapping[str, bool],
    context: Mapping[str, FieldDecl],
    timers: Collection[str] = (),
    definitions: Collection[str] = (),
) -> ReadMigrations:
    """The `migrations:` list of a chart of `version`; `paths` maps each full state path
    of this chart to whether a migration may map a state onto it (not a history
    pseudo-state); `timers` are the names of this chart's timers, `definitions` the names
    it defines."""
    out: list[MigrationDecl] = []
    problems: list[Diagnostic] = []

    def error(message: str, span: SourceSpan) -> None:
        problems.append(
            Diagnostic(
                slug=invalid_migration.SLUG,
                severity=Severity.ERROR,
                message=message,
                span=span,
            )
        )

    seen: dict[int, SourceSpan] = {}
    items = node.items if isinstance(node, SequenceNode) else ()
    for item in items:
        if not isinstance(item, MappingNode):
            continue  # the schema admits only mappings
        start = item.get("from")
        if not isinstance(start, ScalarNode) or not isinstance(start.value, int):
            continue
        before = len(problems)
        from_version = start.value
        if from_version >= version:
            error(
                f"migration from version {from_version}: not an earlier version "
                f"(this chart is version {version})",
                start.span,
            )
        elif from_version in seen:
            first = seen[from_version]
            error(
                f"a second migration from version {from_version} (the first is at line "
                f"{first.line})",
                start.span,
            )
        seen.setdefault(from_version, start.span)
        rename: dict[str, str] = {}
        for key, value in mapping_items(item.get("rename")):
            if not isinstance(value, ScalarNode):
                continue
            target = str(value.value)
            if not paths.get(target, False):
                known = "a history pseudo-state" if target in paths else "not a state"
                error(
                    f"migration from version {from_version}: rename {key.value} → {target}: "
                    f"{target!r} is {known} of this version (use its full dotted path)",
                    value.span,
                )
            rename[str(key.value)] = target
        values: list[MigrationValue] = []
        for key, value in mapping_items(item.get("context")):
            name = str(key.value)
            if name not in context:
                error(
                    f"migration from version {from_version}: context field {name!r} is not "
                    "declared in this version's context",
                    key.span,
                )
            if isinstance(value, ScalarNode) and isinstance(value.value, str):
                for read, span in unavailable_reads(value.value, value.span, definitions):
                    error(
                        f"migration from version {from_version}: context.{name} reads "
                        f"{read}: {NOT_IN_MIGRATIONS}",
                        span,
                    )
            if isinstance(value, ScalarNode):
                values.append(MigrationValue(field=name, source=value.value, span=value.span))
        mapped_timers: dict[str, TimerMigration] = {}
        for key, value in mapping_items(item.get("timers")):
            mapped = _timer_migration(key, value)
            if mapped is None:
                continue  # the schema reports its shape
            if mapped.to is not None and mapped.to not in timers:
                error(
                    f"migration from version {from_version}: timer {key.value} → {mapped.to}: "
                    f"{mapped.to!r} is not a timer of this version (timers: "
                    f"{', '.join(sorted(timers)) or 'none'})",
                    mapped.span,
                )
            mapped_timers[str(key.value)] = mapped
        enter = _entered(item.get("enter"), from_version, paths, error)
        if len(problems) == before:
            out.append(
                MigrationDecl(
                    from_version=from_version,
                    rename=MappingProxyType(rename),
                    context=tuple(values),
                    description=text(item.get("description")),
                    span=item.span,
                    timers=MappingProxyType(mapped_timers),
                    enter=MappingProxyType(enter),
                )
            )
    return ReadMigrations(migrations=tuple(out), problems=tuple(problems))


def _entered(
    node: Node | None,
    from_version: int,
    paths: Mapping[str, bool],
    error: Callable[[str, SourceSpan], None],
) -> dict[str, str]:
    """A migration's `enter:` map (state → the state entered in it), each side checked:
    a state of this chart (not a history pseudo-state), the target the key itself or one
    of its descendants; problems go to `error` at the offending side."""
    enter: dict[str, str] = {}
    for key, value in mapping_items(node):
        if not isinstance(value, ScalarNode):
            continue  # the schema reports its shape
        where, target = str(key.value), str(value.value)
        what = f"migration from version {from_version}: enter {where} → {target}"
        for side, span in ((where, key.span), (target, value.span)):
            if not paths.get(side, False):
                known = "a history pseudo-state" if side in paths else "not a state"
                error(f"{what}: {side!r} is {known} of this version (use its full dotted path)",
                      span)  # fmt: skip
                break
        else:
            if target != where and not target.startswith(where + "."):
                error(
                    f"{what}: {target!r} is not {where!r} or a state inside it (the state "
                    "entered is the key or one of its descendants)",
                    value.span,
                )
        enter[where] = target
    return enter


def _timer_migration(key: ScalarNode, value: Node) -> TimerMigration | None:
    """One entry of a migration's `timers:` (`drop` or `{to, due}`); None when malformed."""
    if isinstance(value, ScalarNode):
        return TimerMigration(None, TimerDue.DROP, key.span) if value.value == "drop" else None
    if not isinstance(value, MappingNode):
        return None
    to, due = value.get("to"), value.get("due")
    if to is not None and not isinstance(to, ScalarNode):
        return None
    how = TimerDue.KEEP
    if isinstance(due, ScalarNode) and due.value in ("keep", "recompute"):
        how = TimerDue(due.value)
    elif due is not None:
        return None
    target = None if to is None else str(to.value)
    return TimerMigration(target, how, key.span if to is None else to.span)
