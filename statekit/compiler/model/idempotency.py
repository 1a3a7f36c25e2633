"""The chart's `idempotency:` compiled: event → the payload fields that identify its fact."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType

from statekit.compiler.diagnostics import Diagnostic, Severity, SourceSpan
from statekit.compiler.ir import EventDecl
from statekit.compiler.model.declarations import mapping_items, scalar_list
from statekit.compiler.rules import invalid_idempotency_key, unknown_event
from statekit.compiler.source.nodes import Node
from statekit.compiler.value_types import BaseType


@dataclass(frozen=True, slots=True)
class CompiledIdempotency:
    """The key fields per event (declaration order kept; events with errors left out)
    and the errors."""

    keys: Mapping[str, tuple[str, ...]] = field(default_factory=lambda: MappingProxyType({}))
    problems: tuple[Diagnostic, ...] = ()


def compile_idempotency(node: Node | None, events: Mapping[str, EventDecl]) -> CompiledIdempotency:
    """Check every `event: [field, …]` of `idempotency:` against the declared events."""
    keys: dict[str, tuple[str, ...]] = {}
    problems: list[Diagnostic] = []

    def error(slug: str, message: str, span: SourceSpan, *notes: str) -> None:
        problems.append(
            Diagnostic(slug=slug, severity=Severity.ERROR, message=message, span=span, notes=notes)
        )

    for key, spec in mapping_items(node):
        name = str(key.value)
        event = events.get(name)
        if event is None:
            error(
                unknown_event.SLUG,
                f"idempotency: undeclared event '{name}'",
                key.span,
                f"declare it under events: (declared: {', '.join(events) or 'none'})",
            )
            continue
        declared = {f.name: f for f in event.fields}
        names: list[str] = []
        bad = False
        for ref in scalar_list(spec):
            field_name = str(ref.value)
            decl = declared.get(field_name)
            where = f"idempotency key of '{name}'"
            if decl is None:
                error(
                    invalid_idempotency_key.SLUG,
                    f"{where}: '{field_name}' is not a payload field of '{name}'",
                    ref.span,
                    f"payload fields of '{name}': {', '.join(declared) or 'none'}",
                )
            elif field_name in names:
                error(
                    invalid_idempotency_key.SLUG,
                    f"{where}: '{field_name}' is named twice",
                    ref.span,
                )
            elif decl.has_default:
                error(
                    invalid_idempotency_key.SLUG,
                    f"{where}: '{field_name}' has a default, so it is not required",
                    ref.span,
                    "a key field identifies the fact: every event must carry it",
                )
            elif decl.type.nullable:
                error(
                    invalid_idempotency_key.SLUG,
                    f"{where}: '{field_name}' is nullable",
                    ref.span,
                    "a key field identifies the fact: null identifies nothing",
                )
            elif decl.type.enum is None and decl.type.base not in _EXACT:
                error(
                    invalid_idempotency_key.SLUG,
                    f"{where}: '{field_name}' is a {decl.type.describe()}, not an integer, "
                    "string, boolean or enum",
                    ref.span,
                    "key values must compare exactly (a number's 1 and 1.0 are one value)",
                )
            else:
                names.append(field_name)
                continue
            bad = True
        if not bad and names:
            keys[name] = tuple(names)
    return CompiledIdempotency(keys=MappingProxyType(keys), problems=tuple(problems))


_EXACT = frozenset({BaseType.INTEGER, BaseType.STRING, BaseType.BOOLEAN})
