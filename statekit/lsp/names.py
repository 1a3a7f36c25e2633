"""The names of a chart document: what they name, where they are declared and used, and
the index that holds them (built by `statekit.lsp.index`)."""

from __future__ import annotations

import enum
from collections.abc import Container, Iterable
from dataclasses import dataclass, field

from statekit.compiler.model.relative_refs import is_explicit, resolve_relative
from statekit.compiler.source.nodes import MappingNode, Node
from statekit.lsp.records import Range


class Kind(enum.Enum):
    """What a name names."""

    STATE = "state"
    EVENT = "event"
    GUARD = "guard"
    CONTEXT = "context field"
    PAYLOAD = "payload field"
    INVARIANT = "invariant"
    TIMER = "timer"
    DEFINITION = "definition"
    TABLE = "table"


class Role(enum.Enum):
    """Where a reference sits (what completes there, how a rename rewrites it)."""

    TARGET = "to"
    INITIAL = "initial"
    DEFAULT = "default"
    WHEN = "when"
    REQUIRE = "require"
    FORBID = "forbid"
    ACTIVE = "active"
    ON = "on"
    ALREADY = "already"
    REJECT = "reject"
    RAISE = "raise"
    GUARD = "guard"
    CTX = "ctx"
    EVENT_FIELD = "event"
    ASSIGN = "assign"
    PRODUCER = "producers"
    RACE_EVENTS = "races.events"
    PRECEDES = "races.precedes"
    RACE_IN = "races.in"
    MIGRATION_TIMER = "migrations.timers"
    MIGRATION_TO = "migrations.timers.to"
    MIGRATION_STATE = "migrations.state"
    DEFINED_NAME = "define"
    TABLE_READ = "tables"
    TIMER_CONTROL = "pause/resume"


SUFFIX_ROLES = frozenset(
    {Role.TARGET, Role.DEFAULT, Role.WHEN, Role.REQUIRE, Role.FORBID, Role.ACTIVE, Role.RACE_IN}
)
"""State references resolved as dotted suffixes of a path (all but `initial` and a
migration's full paths); those of `RELATIVE_ROLES` are looked for near their source first."""
RELATIVE_ROLES = frozenset({Role.TARGET, Role.DEFAULT})
"""State references relative to their source state (`scope`) before they are global."""
FULL_PATH_ROLES = frozenset({Role.INITIAL, Role.MIGRATION_STATE})
"""State references resolved as paths from their scope (a migration's: from the root)."""


@dataclass(frozen=True, slots=True)
class Declaration:
    """A declared name: what it is, its key (`path` for states, `Event.field` for payload
    fields), the range of its name and the YAML node of its body."""

    kind: Kind
    key: str
    name: str
    range: Range
    node: Node
    whole: Range


@dataclass(frozen=True, slots=True)
class Reference:
    """A use of a name as written (`text`), resolved to a declaration's key (or None).

    `precise` is False when the name's own characters could not be located in the
    file (a multi-line or escaped scalar): `range` is then the whole scalar's.
    `scope` is the state path an `initial` is relative to, or the source state of a
    target (a history state for its `default:`); `events` the events an expression
    sees as `event`.
    """

    kind: Kind
    role: Role
    text: str
    key: str | None
    range: Range
    precise: bool
    scope: str = ""
    events: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class StateInfo:
    """A state as the YAML declares it."""

    path: str
    name: str
    parent: str | None
    node: MappingNode
    key_range: Range | None
    children: tuple[str, ...]
    history: bool


@dataclass(slots=True)
class Index:
    """The declarations and references of one document."""

    text: str
    root: MappingNode | None
    states: dict[str, StateInfo] = field(default_factory=dict)
    declarations: list[Declaration] = field(default_factory=list)
    references: list[Reference] = field(default_factory=list)
    reasons: dict[str, list[Range]] = field(default_factory=dict)
    guard_events: dict[str, set[str]] = field(default_factory=dict)
    suffixes: dict[str, list[str]] = field(default_factory=dict)
    expressions: list[Range] = field(default_factory=list)
    """The ranges of the expression scalars (for hover on `now`, `str`, durations...)."""

    def declared(self, kind: Kind) -> dict[str, Declaration]:
        """The declarations of one kind by key, in document order."""
        return {d.key: d for d in self.declarations if d.kind is kind}

    def declaration_of(self, kind: Kind, key: str) -> Declaration | None:
        """The first declaration of `key` as a `kind`, or None."""
        return next((d for d in self.declarations if d.kind is kind and d.key == key), None)

    def resolve_reference(self, ref: str, role: Role, scope: str) -> str | None:
        """The path a state reference in `role` names, or None."""
        if role in RELATIVE_ROLES:
            return self.resolve_target(ref, scope)
        return self.resolve_state(ref, scope, relative=role in FULL_PATH_ROLES)

    def resolve_target(self, ref: str, source: str) -> str | None:
        """The path a target names from its source state, as the compiler resolves it."""
        if not self.suffixes and self.states:
            self.suffixes = suffix_table(self.states)
        return resolve_target(ref, source, self.states, self.suffixes)

    def resolve_state(self, ref: str, scope: str = "", *, relative: bool = False) -> str | None:
        """The path a state reference names (relative to `scope` for `initial`), or None."""
        if relative:
            current = scope
            for part in (ref[1:] if ref.startswith(".") else ref).split("."):
                child = f"{current}.{part}" if current else part
                if child not in self.states or self.states[child].parent != current:
                    return None
                current = child
            return current
        if is_explicit(ref):
            return None
        found = self._suffix_matches(ref)
        return found[0] if len(found) == 1 else None

    def _suffix_matches(self, ref: str) -> list[str]:
        if not self.suffixes and self.states:
            self.suffixes = suffix_table(self.states)
        return self.suffixes.get(ref, [])

    def shortest_reference(self, path: str) -> str:
        """The shortest unique dotted suffix naming the state at `path`."""
        parts = path.split(".")
        for start in range(len(parts) - 1, -1, -1):
            suffix = ".".join(parts[start:])
            if len(self._suffix_matches(suffix)) == 1:
                return suffix
        return path


def suffix_table(paths: Iterable[str]) -> dict[str, list[str]]:
    """Every dotted suffix of every state path → the paths it names (as the compiler's
    `StateIndex` resolves references)."""
    table: dict[str, list[str]] = {}
    for path in paths:
        if not path:
            continue
        parts = path.split(".")
        for start in range(len(parts)):
            table.setdefault(".".join(parts[start:]), []).append(path)
    return table


def resolve_target(
    ref: str, source: str, paths: Container[str], suffixes: dict[str, list[str]]
) -> str | None:
    """The path a target names from `source`: its explicit or nearest relative match,
    else the unique path `ref` is a dotted suffix of (None: none or several)."""
    found = resolve_relative(ref, source, paths)
    if found is not None or is_explicit(ref):
        return found
    matches = suffixes.get(ref, [])
    return matches[0] if len(matches) == 1 else None
