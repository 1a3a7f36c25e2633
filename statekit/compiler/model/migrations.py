"""The chart's `migrations:` read: earlier versions, state renames and context values.

What the compiler can check without the earlier chart is checked here, each
with its position: `from` is an earlier version and appears once, a rename's
target is a state of this chart (a full dotted path, not the root or a
history pseudo-state), and a computed field is declared in this chart's
context. The context expressions read the old context, so they are typed
against the earlier chart when an instance is migrated (`statekit.runner`).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType

from statekit.compiler.diagnostics import Diagnostic, Severity, SourceSpan
from statekit.compiler.ir import FieldDecl, MigrationDecl, MigrationValue
from statekit.compiler.model.declarations import mapping_items, text
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
) -> ReadMigrations:
    """The `migrations:` list of a chart of `version`; `paths` maps each full state path
    of this chart to whether a migration may map a state onto it (not a history
    pseudo-state)."""
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
            if isinstance(value, ScalarNode):
                values.append(MigrationValue(field=name, source=value.value, span=value.span))
        if len(problems) == before:
            out.append(
                MigrationDecl(
                    from_version=from_version,
                    rename=MappingProxyType(rename),
                    context=tuple(values),
                    description=text(item.get("description")),
                    span=item.span,
                )
            )
    return ReadMigrations(migrations=tuple(out), problems=tuple(problems))
