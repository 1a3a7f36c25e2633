"""What an expression may refer to where it is written: the context, the event, the states."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Protocol

from statekit.compiler.diagnostics import Diagnostic, SourceSpan
from statekit.compiler.expressions.lookup_table import LookupTable
from statekit.compiler.expressions.tree import ExprNode
from statekit.compiler.value_types import ValueType


@dataclass(frozen=True, slots=True)
class TypedEvent:
    """The triggering event is known: `event.<field>` is checked against its payload fields.

    `name` names the event(s) in messages about payload fields ("" for a generic wording).
    """

    fields: Mapping[str, ValueType]
    name: str = ""


@dataclass(frozen=True, slots=True)
class NoEvent:
    """No event is in scope (entry/exit actions, `always`, invariants).

    Every `event.<field>` is an `expression-type` error that gives `reason`.
    """

    reason: str


@dataclass(frozen=True, slots=True)
class AnyEvent:
    """Code that runs for whichever event the macrostep is processing, or before any
    (entry and exit actions, eventless transitions).

    What the event is (`_event.name`, `.type`, `.origin`, `.invokeid`, `.sendid`,
    `.origintype`) is read typed nullable: null where no event is bound yet (the start's
    entry). Its payload is not: every `event.<field>` is an `expression-type` error that
    gives `reason`, since which fields there are depends on which event it is.
    """

    reason: str


@dataclass(frozen=True, slots=True)
class DeferredEvent:
    """The event is only known where the expression is used (a guard no transition uses).

    `event.<field>` is neither checked nor reported here; the rest of the expression is. An
    expression that reads the payload then compiles to no `Expression` and no diagnostic.
    """


EventInScope = TypedEvent | NoEvent | AnyEvent | DeferredEvent
"""The four ways an expression can see the event payload."""


@dataclass(frozen=True, slots=True)
class DefinitionCycle:
    """A definition used while it is being checked: `path` runs from it back to itself."""

    path: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class DefinitionFailed:
    """A definition with errors of its own (reported at the definition, once)."""


Expansion = ExprNode | DefinitionCycle | DefinitionFailed
"""What a use of a definition stands for: its checked tree, or why there is none."""


class Definitions(Protocol):
    """The chart's named expressions (`define:`), checked on first use."""

    def __contains__(self, name: object) -> bool: ...

    def names(self) -> tuple[str, ...]:
        """Every defined name, in declaration order."""
        ...

    def expand(self, name: str) -> Expansion:
        """The checked tree `name` stands for (a defined name), or why there is none."""
        ...


class NoDefinitions:
    """A chart without `define:`."""

    def __contains__(self, name: object) -> bool:
        return False

    def names(self) -> tuple[str, ...]:
        """No names."""
        return ()

    def expand(self, name: str) -> Expansion:
        """Never called: nothing is defined."""
        raise KeyError(name)


NO_DEFINITIONS = NoDefinitions()
"""The definitions of a chart that declares none."""


@dataclass(frozen=True, slots=True)
class ExpressionScope:
    """What an expression may refer to where it is written.

    `event` says whether and how the payload can be read. `resolve_state` maps an
    `active('ref')` argument to a state id, or returns the diagnostic (unknown or
    ambiguous state) to report as is. `definitions` are the chart's named expressions
    (a bare name), `tables` its lookup tables (`tables.<name>[key]`). `broken_tables` names
    the tables declared with errors of their own: a read of one reports nothing more.
    `no_definitions`, when set, says why neither definitions nor tables can be read here
    (a migration's `context:`), and every such read is reported with it.
    """

    context: Mapping[str, ValueType]
    event: EventInScope
    resolve_state: Callable[[str, SourceSpan], int | Diagnostic]
    definitions: Definitions = NO_DEFINITIONS
    tables: Mapping[str, LookupTable] = field(default_factory=lambda: MappingProxyType({}))
    broken_tables: frozenset[str] = frozenset()
    no_definitions: str | None = None
    locals: Mapping[str, ValueType] = field(default_factory=lambda: MappingProxyType({}))
    """The read-only locals in scope (the `item` and `index` of the `foreach` bodies
    around the expression), by name."""

    @property
    def payload(self) -> Mapping[str, ValueType] | None:
        """The payload field types, or None where no typed event is in scope."""
        return self.event.fields if isinstance(self.event, TypedEvent) else None
