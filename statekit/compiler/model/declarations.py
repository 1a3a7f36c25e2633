"""Chart-level declarations: context fields, events with payloads, named guards, lint settings.

The schema has already checked the shapes; this pass turns them into typed
values and reports what the schema cannot express (a default of the wrong
type, a context field without a default).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass

from statekit.compiler.diagnostics import Diagnostic, Severity
from statekit.compiler.ir import EventDecl, FieldDecl, GuardDecl, LintSettings
from statekit.compiler.record_values import freeze
from statekit.compiler.rules import schema as schema_rule
from statekit.compiler.source.nodes import (
    MappingNode,
    Node,
    Scalar,
    ScalarNode,
    SequenceNode,
    to_plain,
)
from statekit.compiler.value_types import BaseType, ValueType, out_of_range

DEFAULT_GUARD_REASON = "GUARD_FAILED"
_ZERO: dict[BaseType, Scalar] = {
    BaseType.INTEGER: 0,
    BaseType.NUMBER: 0.0,
    BaseType.STRING: "",
    BaseType.BOOLEAN: False,
}


def text(node: Node | None) -> str | None:
    """The string value of a scalar node, else None."""
    if isinstance(node, ScalarNode) and isinstance(node.value, str):
        return node.value
    return None


def scalar_list(node: Node | None) -> list[ScalarNode]:
    """A scalar or a sequence of scalars, as a list of scalar nodes."""
    if isinstance(node, ScalarNode):
        return [node]
    if isinstance(node, SequenceNode):
        return [item for item in node.items if isinstance(item, ScalarNode)]
    return []


def mapping_items(node: Node | None) -> Iterator[tuple[ScalarNode, Node]]:
    """The items of a mapping node (nothing for any other node)."""
    if isinstance(node, MappingNode):
        yield from node.items


def _error(message: str, node: Node, *notes: str) -> Diagnostic:
    return Diagnostic(
        slug=schema_rule.SLUG, severity=Severity.ERROR, message=message, span=node.span, notes=notes
    )


def _parse_field(
    key: ScalarNode, spec: Node, *, in_context: bool
) -> tuple[FieldDecl | None, list[Diagnostic]]:
    """A field spec (type name or mapping) as a typed field declaration."""
    name = str(key.value)
    what = f"context field '{name}'" if in_context else f"payload field '{name}'"
    type_name = text(spec)
    description: str | None = None
    secret = False
    nullable = False
    enum: tuple[str | int, ...] | None = None
    default_node: Node | None = None
    if isinstance(spec, MappingNode):
        type_name = text(spec.get("type"))
        description = text(spec.get("description"))
        secret = _flag(spec.get("secret"))
        nullable = _flag(spec.get("nullable"))
        default_node = spec.get("default")
        enum_node = spec.get("enum")
        if isinstance(enum_node, SequenceNode):
            # The schema admits one or more strings or integers here.
            values = [i.value for i in enum_node.items if isinstance(i, ScalarNode)]
            if len({type(v) for v in values}) > 1:
                return None, [_error(f"{what}: enum values must all have one type", enum_node)]
            enum = tuple(v for v in values if isinstance(v, str | int))
            for item in enum_node.items:
                if isinstance(item, ScalarNode) and (why := out_of_range(item.value)):
                    return None, [_error(f"{what}: enum value {_short(item)} {why}", item)]
    items: ValueType | None = None
    record_fields: tuple[tuple[str, ValueType], ...] | None = None
    record_default: dict[str, object] | None = None
    if enum is not None:
        base = BaseType.STRING if isinstance(enum[0], str) else BaseType.INTEGER
        if type_name is not None and type_name != base.value:
            return None, [_error(f"{what}: enum values are {base.value}s, not {type_name}", spec)]
    elif type_name is None:
        return None, [
            _error(
                f"{what} needs a type (integer, number, string, boolean, list, record) or an enum",
                spec,
            )
        ]
    else:
        base = BaseType(type_name)  # the schema admits only the DSL's type names
    if base is BaseType.LIST:
        items_node = spec.get("items") if isinstance(spec, MappingNode) else None
        if items_node is None:
            return None, [_error(f"{what}: a list needs `items:` (the type of its elements)", spec)]
        item_decl, problems = _parse_field(key, items_node, in_context=False)
        if item_decl is None:
            return None, problems
        if item_decl.has_default:
            node = items_node.get("default") if isinstance(items_node, MappingNode) else None
            return None, [_error(f"{what}: list items have no default", node or items_node)]
        items = item_decl.type
    elif isinstance(spec, MappingNode) and spec.get("items") is not None:
        return None, [_error(f"{what}: `items:` needs `type: list`", spec.get("items") or spec)]
    fields_node = spec.get("fields") if isinstance(spec, MappingNode) else None
    if base is BaseType.RECORD:
        if not isinstance(fields_node, MappingNode) or not fields_node.items:
            return None, [
                _error(
                    f"{what}: a record needs `fields:` (a mapping of field name to field spec)",
                    fields_node or spec,
                )
            ]
        parsed = _record_fields(fields_node, what, in_context=in_context)
        if isinstance(parsed, Diagnostic):
            return None, [parsed]
        record_fields, record_default = parsed
    elif fields_node is not None:
        return None, [_error(f"{what}: `fields:` needs `type: record`", fields_node)]
    vtype = ValueType(base=base, nullable=nullable, enum=enum, items=items, fields=record_fields)
    has_default = default_node is not None
    default: object = None
    if isinstance(default_node, SequenceNode | MappingNode):  # a list's or a record's
        default = to_plain(default_node)
        problem = vtype.problem_at(default, "default")
        if problem is not None or not vtype.accepts(default):
            shown = problem or f"default is not {vtype.describe()}"
            return None, [_error(f"{what}: {shown}", default_node)]
        for element in _scalars_of(default_node):
            if (why := out_of_range(element.value)) is not None:
                return None, [_error(f"{what}: default element {_short(element)} {why}", element)]
        if isinstance(default_node, MappingNode):
            default = freeze(vtype, default)
    elif isinstance(default_node, ScalarNode):
        default = default_node.value
        if not vtype.accepts(default):
            return None, [
                _error(f"{what}: default {default!r} is not {vtype.describe()}", default_node)
            ]
        why = out_of_range(default)
        if why is not None:
            return None, [_error(f"{what}: default {_short(default_node)} {why}", default_node)]
    elif in_context:  # no default (the schema admits only a single value as one)
        if nullable:
            has_default = True
        elif base is BaseType.LIST:
            default, has_default = [], True  # a list starts empty
        elif record_default is not None:  # a record starts with its fields' defaults
            default, has_default = freeze(vtype, record_default), True
        elif isinstance(spec, ScalarNode) and enum is None:
            default, has_default = _ZERO[base], True
        else:
            return None, [
                _error(f"{what} needs a default (or nullable: true)", spec),
            ]
    return FieldDecl(
        name=name,
        type=vtype,
        default=default,
        has_default=has_default,
        secret=secret,
        description=description,
        span=key.span,
    ), []


def _record_fields(
    node: MappingNode, what: str, *, in_context: bool
) -> tuple[tuple[tuple[str, ValueType], ...], dict[str, object] | None] | Diagnostic:
    """A record's `fields:`, sorted by name, and (in context) the record of their
    defaults; or the first problem. In a payload a record's fields have no default
    (a payload record has exactly its fields)."""
    fields: list[tuple[str, ValueType]] = []
    defaults: dict[str, object] = {}
    for key, spec in node.items:
        decl, problems = _parse_field(key, spec, in_context=in_context)
        if decl is None:
            return problems[0]
        if not in_context and decl.has_default:
            where = spec.get("default") if isinstance(spec, MappingNode) else None
            return _error(
                f"{what}: record field '{decl.name}' has a default; a payload record has"
                " exactly its fields",
                where or spec,
            )
        fields.append((decl.name, decl.type))
        defaults[decl.name] = decl.default
    return tuple(sorted(fields, key=lambda f: f[0])), (defaults if in_context else None)


def _scalars_of(node: Node) -> list[ScalarNode]:
    """Every scalar inside a sequence or mapping default, nested values included."""
    if isinstance(node, ScalarNode):
        return [node]
    if isinstance(node, SequenceNode):
        return [s for item in node.items for s in _scalars_of(item)]
    if isinstance(node, MappingNode):
        return [s for _, item in node.items for s in _scalars_of(item)]
    return []


def _short(node: ScalarNode) -> str:
    """A scalar's value for a message, at most about 40 characters."""
    shown = repr(node.value)
    return shown if len(shown) <= 40 else f"{shown[:37]}... ({len(shown)} characters)"


def _flag(node: Node | None) -> bool:
    return isinstance(node, ScalarNode) and node.value is True


@dataclass(frozen=True, slots=True)
class ParsedFields:
    """The field declarations of a mapping (those without errors) and the errors."""

    fields: tuple[FieldDecl, ...]
    problems: tuple[Diagnostic, ...]


@dataclass(frozen=True, slots=True)
class ParsedEvents:
    """The event declarations, by name in declaration order, and the errors in their payloads."""

    events: Mapping[str, EventDecl]
    problems: tuple[Diagnostic, ...]


def parse_fields(node: Node | None, *, in_context: bool) -> ParsedFields:
    """All field specs of a mapping (context, or one event's payload)."""
    fields: list[FieldDecl] = []
    problems: list[Diagnostic] = []
    for key, spec in mapping_items(node):
        decl, errors = _parse_field(key, spec, in_context=in_context)
        problems.extend(errors)
        if decl is not None:
            fields.append(decl)
    return ParsedFields(fields=tuple(fields), problems=tuple(problems))


def parse_events(node: Node | None) -> ParsedEvents:
    """The `events:` mapping."""
    events: dict[str, EventDecl] = {}
    problems: list[Diagnostic] = []
    for key, spec in mapping_items(node):
        parsed = parse_fields(spec, in_context=False)
        problems.extend(parsed.problems)
        events[str(key.value)] = EventDecl(name=str(key.value), fields=parsed.fields, span=key.span)
    return ParsedEvents(events=events, problems=tuple(problems))


def parse_guards(node: Node | None) -> dict[str, GuardDecl]:
    """The `guards:` mapping (expressions are compiled where each guard is used)."""
    guards: dict[str, GuardDecl] = {}
    for key, spec in mapping_items(node):
        name = str(key.value)
        if isinstance(spec, MappingNode):
            if_node = spec.get("if")
            source = if_node.value if isinstance(if_node, ScalarNode) else ""
            reason = text(spec.get("else")) or DEFAULT_GUARD_REASON
            guards[name] = GuardDecl(
                name=name,
                source=str(source),
                reason=reason,
                description=text(spec.get("description")),
                span=key.span,
                if_span=(if_node or spec).span,
            )
        elif isinstance(spec, ScalarNode):
            guards[name] = GuardDecl(
                name=name,
                source=str(spec.value),
                reason=DEFAULT_GUARD_REASON,
                description=None,
                span=key.span,
                if_span=spec.span,
            )
    return guards


def parse_lint_settings(node: Node | None) -> LintSettings:
    """The chart's `lint:` block: ignored slugs and per-slug severities, each with its span."""
    if not isinstance(node, MappingNode):
        return LintSettings()
    ignored = scalar_list(node.get("ignore"))
    severities = list(mapping_items(node.get("severity")))
    return LintSettings(
        ignore=tuple(str(n.value) for n in ignored),
        severity=tuple((str(k.value), str(text(v))) for k, v in severities),
        span=node.span,
        slug_spans=tuple((str(n.value), n.span) for n in ignored)
        + tuple((str(k.value), k.span) for k, _ in severities),
    )
