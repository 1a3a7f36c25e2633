"""The DSL's `migrations:`: positioned diagnostics for what the compiler can check, and
the declared renames and context values applied by `Runner.migrate` (expressions over
the old context, typed against the old chart)."""

from __future__ import annotations

import pytest
from runner_charts import chart_from
from test_migration import TASK_V1

from statekit.compiler.pipeline import compile_source
from statekit.runner.runner import Runner
from statekit.runner.store import open_store

V2_HEAD = TASK_V1.replace("version: 1", "version: 2", 1)


def _with(migrations: str, chart: str = V2_HEAD) -> str:
    return chart.replace("initial: queued", f"migrations:\n{migrations}\ninitial: queued", 1)


BAD = [
    # (migrations: block, slug, line, column, words of the message)
    ("  - {from: 2}", "invalid-migration", 13, 12, "not an earlier version"),
    ("  - {from: 3}", "invalid-migration", 13, 12, "not an earlier version"),
    ("  - {from: 1}\n  - {from: 1}", "invalid-migration", 14, 12, "a second migration"),
    ("  - {from: 1, rename: {running: busy}}", "invalid-migration", 13, 33, "not a state"),
    ("  - {from: 1, context: {retries: ctx.attempt}}", "invalid-migration", 13, 25, "'retries'"),
    ("  - {from: 1, enter: {running: busy}}", "invalid-migration", 13, 32, "not a state"),
    ("  - {from: 1, enter: {busy: running}}", "invalid-migration", 13, 23, "not a state"),
    ("  - {from: 1, enter: {running: queued}}", "invalid-migration", 13, 32, "inside it"),
    ("  - {from: 1, enter: {running: [a]}}", "schema", 13, 32, "a state reference"),
    ("  - {from: 1, colour: red}", "schema", 13, 15, "colour"),
    ("  - {rename: {a: b}}", "schema", 13, 5, "from"),
    ("  - {from: one}", "schema", 13, 12, "integer"),
    ("  - {from: 0}", "schema", 13, 12, "at least 1"),
    ("  - {from: 1, rename: {running: [a]}}", "schema", 13, 33, "a state reference"),
    ("  from: 1", "schema", 13, 3, "a list of migrations"),
]


@pytest.mark.parametrize(("block", "slug", "line", "column", "words"), BAD)
def test_a_bad_migration_is_a_positioned_diagnostic(
    block: str, slug: str, line: int, column: int, words: str
) -> None:
    text = _with(block).lstrip("\n")
    result = compile_source(text, "task.yaml")
    assert result.chart is None
    found = [(d.slug, d.span.line, d.span.column, d.message) for d in result.diagnostics]
    assert any((s, ln, col) == (slug, line, column) and words in m for s, ln, col, m in found), (
        found
    )


def test_migrations_are_part_of_the_digest_and_absent_ones_change_nothing() -> None:
    plain = chart_from(V2_HEAD)
    declared = chart_from(_with("  - {from: 1}"))
    renamed = chart_from(_with("  - {from: 1, rename: {running: cancelling}}"))
    entering = chart_from(_with("  - {from: 1, enter: {running: running}}"))
    assert len({plain.digest, declared.digest, renamed.digest, entering.digest}) == 4
    assert plain.ir.migrations == () and declared.ir.migration_from(1) is not None


RENAMED_V2 = _with(
    "  - from: 1\n"
    "    rename: {cancelling: stopping}\n"
    "    context: {attempt: ctx.attempt + 10, note: \"'moved'\"}",
    V2_HEAD.replace("cancelling", "stopping").replace(
        "  attempt: {type: integer, default: 0}",
        "  attempt: {type: integer, default: 0}\n  retries: {type: integer, default: 3}",
    ),
)


def test_declared_renames_and_context_values_are_applied(store_url: str) -> None:
    store = open_store(store_url)
    v1 = Runner(chart_from(TASK_V1), store)
    v2 = Runner(chart_from(RENAMED_V2), store, previous=[v1.chart])
    v1.create("t")
    v1.apply("t", "s", "TaskStarted", {"attempt": 1})
    v1.apply("t", "c", "CancelRequested")
    report = v2.migrate("t")
    assert report.status == "MIGRATED", report.reason
    assert report.mapped_configuration == ("stopping",)
    assert report.mapping == {
        "rename": {"cancelling": "stopping"},
        "context": {"attempt": "ctx.attempt + 10", "note": "'moved'"},
        "defaulted": ["retries"],
        "dropped": [],
    }
    state = v2.load("t").state
    assert state.context == {"attempt": 11, "note": "moved", "retries": 3}
    assert v2.verify("t").ok and v2.rebuild("t").state == state


STRANDING_VALUES = [
    # (context value, words of the reason)
    ("ctx.missing", "missing"),
    ("ctx.note", "string"),  # a string into an integer field
    ("event.attempt", "old context"),
    ("active('running')", "old context"),
    ("ctx.attempt // 0", "ctx.attempt // 0"),  # raises while evaluated
    ("ctx.attempt +", "attempt"),  # a syntax error
]


@pytest.mark.parametrize(("value", "words"), STRANDING_VALUES)
def test_a_context_value_that_does_not_fit_the_old_chart_strands_with_its_position(
    store_url: str, value: str, words: str
) -> None:
    store = open_store(store_url)
    v1 = Runner(chart_from(TASK_V1), store)
    text = _with(f'  - {{from: 1, context: {{attempt: "{value}"}}}}')
    v2 = Runner(chart_from(text), store, previous=[v1.chart])
    v1.create("t")
    report = v2.migrate("t")
    assert report.status == "STRANDED" and report.reason is not None
    assert words in report.reason, report.reason
    if "//" not in value:
        assert "inline.yaml:13:" in report.reason, report.reason
    assert v2.load("t").chart_version == 1


DEFINING_V2 = V2_HEAD.replace(
    "initial: queued",
    'define:\n  bumped: "ctx.attempt + 1"\n'
    "tables:\n  weight: {key: string, value: integer, entries: {a: 1}, default: 0}\n"
    "initial: queued",
    1,
)
NOT_IN_OLD_CONTEXT = [
    # (context value, what it reads, the column of that read within the value)
    ("bumped", "definition 'bumped'", 0),
    ("ctx.attempt + bumped * 2", "definition 'bumped'", 14),
    ("tables.weight['a']", "tables.weight", 0),
    ("ctx.attempt + tables.weight[ctx.note]", "tables.weight", 14),
]


@pytest.mark.parametrize(("value", "read", "offset"), NOT_IN_OLD_CONTEXT)
def test_a_migration_value_reading_a_definition_or_table_is_a_positioned_error(
    value: str, read: str, offset: int
) -> None:
    text = _with(f'  - {{from: 1, context: {{attempt: "{value}"}}}}', DEFINING_V2).lstrip("\n")
    result = compile_source(text, "task.yaml")
    assert result.chart is None
    line = next(n for n, row in enumerate(text.split("\n"), 1) if "- {from: 1" in row)
    column = text.split("\n")[line - 1].index(value) + 1 + offset
    found = [(d.slug, d.span.line, d.span.column, d.message) for d in result.diagnostics]
    assert found == [
        (
            "invalid-migration",
            line,
            column,
            f"migration from version 1: context.attempt reads {read}: definitions and tables "
            "are not available in a migration's context: (it reads the earlier version's "
            "context)",
        )
    ], found


def test_a_migration_value_may_read_ctx_durations_and_now_beside_definitions() -> None:
    text = _with('  - {from: 1, context: {attempt: "ctx.attempt + 1h + now"}}', DEFINING_V2)
    assert compile_source(text.lstrip("\n"), "task.yaml").chart is not None


def test_now_in_a_migration_value_is_the_migrations_clock_reading(store_url: str) -> None:
    store = open_store(store_url)
    v1 = Runner(chart_from(TASK_V1), store, clock=lambda: 1_000)
    text = _with('  - {from: 1, context: {attempt: "now - ctx.attempt"}}')
    v2 = Runner(chart_from(text), store, previous=[v1.chart], clock=lambda: 5_000)
    v1.create("t")
    v1.apply("t", "s", "TaskStarted", {"attempt": 7})
    report = v2.migrate("t")
    assert report.status == "MIGRATED", report.reason
    assert v2.load("t").state.context["attempt"] == 4_993
    assert v2.verify("t").ok


def test_an_unknown_name_in_a_migration_value_strands_saying_what_can_be_read(
    store_url: str,
) -> None:
    store = open_store(store_url)
    v1 = Runner(chart_from(TASK_V1), store)
    text = _with('  - {from: 1, context: {attempt: "retries"}}')
    v2 = Runner(chart_from(text), store, previous=[v1.chart])
    v1.create("t")
    report = v2.migrate("t")
    assert report.status == "STRANDED" and report.reason is not None
    assert (
        "name 'retries' is not allowed: only ctx.<field>, literals and now can be read; "
        "definitions and tables are not available in a migration's context:" in report.reason
    ), report.reason
    assert "define:" not in report.reason
