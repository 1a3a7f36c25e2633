"""What `statekit diff` says about a chart's `tables:` and `define:` sections (pure).

Every use of a definition or a table is inlined where it is read, so a changed entry
(`sla['normal']: was 1d, now 12h`) or definition (`period_len: was 30d, now 31d`)
changes no expression's source, no transition and often no answer the exploration
sees: it is reported here by name. Durations read as the chart writes them
(`format_delay`). A timer whose `delay:` or `at:` reads a changed table or definition
(directly or through other definitions) gets a `timer-retimed` note saying what
migrating does to a timer already armed (`statekit.engine.timer_migration`): its due
time is kept unless the migration's `timers:` says `due: recompute`.
"""

from __future__ import annotations

import ast
from collections.abc import Generator, Iterator, Mapping

from statekit.compiler.canonical import canonical_json
from statekit.compiler.expressions.lookup_table import LookupTable
from statekit.compiler.expressions.named import NamedExpression
from statekit.compiler.expressions.tree import TableRead, iter_nodes
from statekit.compiler.ir import CompiledChart, TimerKind
from statekit.compiler.migration_ir import MigrationDecl, TimerDue
from statekit.compiler.model.table_text import key_text, value_text, value_type_text
from statekit.compiler.model.timers import timer_spec
from statekit.engine.timer_migration import moved_timer_id

Change = tuple[str, str, str | None, str | None]
"""A change as `statekit.analysis.diff.Change` takes it: kind, subject, old, new."""
Changes = Generator[Change, None, set[str]]


def named_changes(old: CompiledChart, new: CompiledChart) -> Iterator[Change]:
    """Tables and definitions added, removed and changed, then the timers reading them."""
    changed_tables = yield from _table_changes(old.tables, new.tables)
    changed_definitions = yield from _definition_changes(old.definitions, new.definitions)
    yield from _timer_notes(
        old, new, new.migration_from(old.version), changed_tables, changed_definitions
    )


def _shape(table: LookupTable) -> str:
    return f"key {table.key.describe()}, value {value_type_text(table)}"


def _table_changes(old: Mapping[str, LookupTable], new: Mapping[str, LookupTable]) -> Changes:
    """Yields the changes; returns the names of the tables that changed."""
    changed: set[str] = set()
    for name in sorted(old.keys() | new.keys()):
        if name not in new:
            yield ("table-removed", name, _shape(old[name]), None)
        elif name not in old:
            yield ("table-added", name, None, _shape(new[name]))
        else:
            found = list(_one_table(old[name], new[name]))
            yield from found
            if found:
                changed.add(name)
    return changed


def _one_table(a: LookupTable, b: LookupTable) -> Iterator[Change]:
    if _shape(a) != _shape(b):
        yield ("table-changed", a.name, _shape(a), _shape(b))
    for key in sorted(a.entries.keys() | b.entries.keys(), key=repr):
        subject = f"{a.name}[{key_text(key)}]"
        if key not in b.entries:
            yield ("table-changed", subject, value_text(a, a.entries[key]), "no entry")
        elif key not in a.entries:
            yield ("table-changed", subject, "no entry", value_text(b, b.entries[key]))
        else:
            before, after = value_text(a, a.entries[key]), value_text(b, b.entries[key])
            if before != after:
                yield ("table-changed", subject, before, after)
    defaults = [value_text(t, t.default) if t.has_default else "none" for t in (a, b)]
    if defaults[0] != defaults[1]:
        yield ("table-changed", f"{a.name} default", defaults[0], defaults[1])


def _definition(named: NamedExpression) -> str:
    return " ".join(named.expression.source.split())


def _definition_changes(
    old: Mapping[str, NamedExpression], new: Mapping[str, NamedExpression]
) -> Changes:
    """Yields the changes; returns the names of the definitions that changed."""
    changed: set[str] = set()
    for name in sorted(old.keys() | new.keys()):
        if name not in new:
            yield ("definition-removed", name, _definition(old[name]), None)
        elif name not in old:
            yield ("definition-added", name, None, _definition(new[name]))
        else:
            a, b = old[name], new[name]
            before, after = _definition(a), _definition(b)
            if before == after and a.expression.type != b.expression.type:
                before += f" ({canonical_json(a.expression.type.to_json())})"
                after += f" ({canonical_json(b.expression.type.to_json())})"
            if before != after:
                changed.add(name)
                yield ("definition-changed", name, before, after)
    return changed


def _names(source: str) -> set[str]:
    """The bare names an expression's source reads (it compiled, so it parses)."""
    try:
        tree = ast.parse(source, mode="eval")
    except SyntaxError:  # a literal such as `30d` is no Python expression
        return set()
    return {n.id for n in ast.walk(tree) if isinstance(n, ast.Name)}


def _definitions_read(source: str, definitions: Mapping[str, NamedExpression]) -> set[str]:
    """The definitions `source` reads, directly or through other definitions."""
    seen: set[str] = set()
    todo = [n for n in _names(source) if n in definitions]
    while todo:
        name = todo.pop()
        if name not in seen:
            seen.add(name)
            todo.extend(n for n in _names(definitions[name].expression.source) if n in definitions)
    return seen


def _timer_notes(
    old: CompiledChart,
    new: CompiledChart,
    declared: MigrationDecl | None,
    tables: set[str],
    definitions: set[str],
) -> Iterator[Change]:
    """A note for each timer of `new` kept from `old` whose delay or deadline reads a
    changed table or definition (a timer whose own spec changed is `timer-retimed`
    already, in `statekit.analysis.diff`)."""
    if not tables and not definitions:
        return
    rename = declared.rename if declared is not None else {}
    ways = declared.timers if declared is not None else {}
    for timer in old.timers:
        way = ways.get(timer.name)
        if timer.expression is None or (way is not None and way.due is TimerDue.DROP):
            continue
        path = old.states[timer.state].path
        new_name = way.to if way is not None and way.to is not None else None
        now = new.timer(new_name or moved_timer_id(timer.name, path, rename))
        if now is None or now.expression is None:
            continue
        spec = f"{now.kind.value} {timer_spec(now, new.states[now.state].path)}"
        if spec != f"{timer.kind.value} {timer_spec(timer, path)}":
            continue
        reads = sorted(
            {
                f"tables.{n.table}"
                for n in iter_nodes(now.expression.tree)
                if isinstance(n, TableRead) and n.table in tables
            }
            | (_definitions_read(now.expression.source, new.definitions) & definitions)
        )
        if reads:
            due = "recomputed" if way is not None and way.due is TimerDue.RECOMPUTE else "kept"
            word = "at" if now.kind is TimerKind.AT else "after"
            written = f"{word} {timer_spec(now, new.states[now.state].path)}"
            yield (
                "timer-retimed",
                now.name,
                None,
                f"{written} reads {', '.join(reads)}, which changed (a timer already armed: "
                f"its due time is {due})",
            )
