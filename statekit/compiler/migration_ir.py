"""The compiled migrations of a chart (`migrations:`): how an instance of an older version
maps into this one (states renamed, context computed, armed timers mapped, states
entered); part of `CompiledChart`."""

from __future__ import annotations

import enum
from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType

from statekit.compiler.diagnostics import SourceSpan
from statekit.compiler.source.nodes import Scalar


@dataclass(frozen=True, slots=True)
class MigrationValue:
    """A context value of a declared migration: an expression over the old context (its
    source, or a literal), typed against the old chart when an instance is migrated
    (the compiler does not know the old chart)."""

    field: str
    source: Scalar
    span: SourceSpan


class TimerDue(enum.Enum):
    """What a migration does with an armed timer's due time (`migrations: timers:`)."""

    KEEP = "keep"
    """The timer stays due when it was due (its delay becomes the new declaration's)."""
    RECOMPUTE = "recompute"
    """Due at the time it was armed plus the new declaration's delay (`at:`: its value)."""
    DROP = "drop"
    """The timer is disarmed: it will not fire."""


@dataclass(frozen=True, slots=True)
class TimerMigration:
    """How a migration maps one armed `after` timer of the old version: `to` the timer of
    this chart it becomes (its timer event's name; None: its own identity, moved with its
    state's rename), `due` what happens to its due time. `span` is the entry's key."""

    to: str | None
    due: TimerDue
    span: SourceSpan


@dataclass(frozen=True, slots=True)
class MigrationDecl:
    """How an instance of version `from_version` maps into this chart (`migrations:`):
    `rename` old full path → new full path, `context` the computed fields, `timers`
    old timer identity → how it maps, `enter` a state an instance may lack once
    mapped (a new region, or a new child of a state) → the state it enters there (that
    state or a descendant; `statekit.engine.state_completion`)."""

    from_version: int
    rename: Mapping[str, str]
    context: tuple[MigrationValue, ...]
    description: str | None
    span: SourceSpan
    timers: Mapping[str, TimerMigration] = field(default_factory=lambda: MappingProxyType({}))
    enter: Mapping[str, str] = field(default_factory=lambda: MappingProxyType({}))
