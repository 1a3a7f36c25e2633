"""Named expressions (`define:`): used by bare name everywhere an expression goes, checked
once with an inferred type, inlined (the tree of a use is the written-out tree), and every
misuse a positioned diagnostic."""

from __future__ import annotations

import textwrap

import pytest

from statekit.compiler.expressions.tree import tree_to_json
from statekit.compiler.invariant_ir import ExpressionInvariant
from statekit.compiler.ir import Assign, CompiledChart
from statekit.compiler.pipeline import compile_source
from statekit.engine.chart import Chart
from statekit.engine.result import Status

CHART = """
statechart: dunning
context:
  retries: {type: integer, default: 0}
  amount: {type: integer, default: 100}
  fee: {type: integer, default: 0}
  strict: {type: boolean, default: false}
events:
  FAIL: {}
  PAY: {amount: integer}
define:
{define}
initial: billing
invariants:
  fee_bounded: {assert: "{invariant}"}
states:
  billing:
    initial: active
    states:
      active:
        on:
          FAIL:
            - {to: past_due, if: "{guard}"}
            - to: active
              do: [{assign: {retries: "ctx.retries + 1", fee: "{assign}"}}]
      past_due:
        after:
          - {delay: "{delay}", to: active}
        on:
          PAY: {to: active, if: "event.amount >= {threshold}"}
"""

WRITTEN_OUT = {
    "guard": "ctx.retries >= (3 if ctx.strict else 5) and active('billing.active')",
    "assign": "min(ctx.amount // 10, 50)",
    "invariant": "ctx.fee <= 50",
    "delay": "(3 if ctx.strict else 5) * 60000",
    "threshold": "ctx.amount + min(ctx.amount // 10, 50)",
}
DEFINED = {
    "guard": "overdue",
    "assign": "late_fee",
    "invariant": "ctx.fee <= fee_cap",
    "delay": "limit * 60000",
    "threshold": "ctx.amount + late_fee",
}
SELF = "'a' is defined in terms of itself:"
RESERVED = "the name belongs to the expression language"
UNCLOSED = "invalid syntax: '[' was never closed"
DEFINITIONS = """\
  limit: "3 if ctx.strict else 5"
  overdue: "ctx.retries >= limit and active('billing.active')"
  fee_cap: 50
  late_fee: "min(ctx.amount // 10, fee_cap)"
"""


def _source(uses: dict[str, str], definitions: str = DEFINITIONS) -> str:
    text = textwrap.dedent(CHART).lstrip("\n").replace("{define}", definitions.rstrip("\n"))
    for slot, expression in uses.items():
        text = text.replace("{" + slot + "}", expression)
    return text


def _chart(uses: dict[str, str], definitions: str = DEFINITIONS) -> CompiledChart:
    result = compile_source(_source(uses, definitions), "chart.yaml")
    assert result.chart is not None, result.diagnostics
    return result.chart


def _errors(definitions: str, uses: dict[str, str] | None = None) -> list[tuple[int, int, str]]:
    result = compile_source(_source(uses or WRITTEN_OUT, definitions), "chart.yaml")
    return [(d.span.line, d.span.column, f"{d.slug}: {d.message}") for d in result.errors]


def _trees(chart: CompiledChart) -> list[object]:
    """The trees of every guard, assign, invariant and timer expression."""
    out: list[object] = [
        tree_to_json(i.expression.tree)
        for i in chart.invariants
        if isinstance(i, ExpressionInvariant)
    ]
    for t in chart.transitions:
        out += [tree_to_json(g.expression.tree) for g in t.guards]
        out += [
            tree_to_json(e.tree)
            for effect in t.effects
            if isinstance(effect, Assign)
            for _, e in effect.assignments
        ]
    out += [tree_to_json(t.expression.tree) for t in chart.timers if t.expression]
    return out


def test_a_use_compiles_to_the_tree_of_the_written_out_expression() -> None:
    defined, written = _chart(DEFINED), _chart(WRITTEN_OUT)
    assert _trees(defined) == _trees(written)


def test_definitions_behave_as_the_written_out_expressions() -> None:
    for uses in (DEFINED, WRITTEN_OUT):
        chart = Chart(_chart(uses))
        state = chart.start(context={"retries": 4, "amount": 120})
        failed = chart.send(state, "FAIL")
        assert failed.status is Status.APPLIED and "billing.active" in failed.state.configuration
        assert failed.state.context["fee"] == 12
        due = chart.send(failed.state, "FAIL").state
        assert "billing.past_due" in due.configuration
        assert chart.send(due, "PAY", {"amount": 131}).status is Status.REJECTED
        assert chart.send(due, "PAY", {"amount": 132}).status is Status.APPLIED


def test_the_type_is_inferred_once_and_kept_with_the_chart() -> None:
    chart = _chart(DEFINED)
    types = {name: d.expression.type.describe() for name, d in chart.definitions.items()}
    assert types == {
        "limit": "integer",
        "overdue": "boolean",
        "fee_cap": "integer",
        "late_fee": "integer",
    }


def test_a_definition_of_the_wrong_type_is_an_error_at_the_use() -> None:
    errors = _errors(DEFINITIONS, {**DEFINED, "guard": "late_fee"})
    assert [m for _, _, m in errors] == ["expression-type: 'if': expected boolean, got integer"]


@pytest.mark.parametrize(
    ("definitions", "expected"),
    [
        (
            '  a: "b + 1"\n  b: "c * 2"\n  c: "a - 1"\n',
            f"definition-cycle: definition 'c': 'a' {SELF[4:]} a → b → c → a",
        ),
        (
            '  a: "a + 1"\n',
            "definition-cycle: definition 'a': 'a' is defined in terms of itself: a → a",
        ),
        (
            '  a: "ctx.retries > 1 and event.amount > 2"\n',
            "expression-type: definition 'a': event.amount is not available here: a definition "
            "means the same wherever it is used, so it sees no event: read event.<field> where "
            "the definition is used",
        ),
        *(
            (f'  {name}: "1"\n', f"schema: definition '{name}': {RESERVED}")
            for name in ("ctx", "event", "tables", "max", "active", "null", "lambda")
        ),
        ('  a: "ctx.nope"\n', "expression-type: definition 'a': unknown context field 'nope'"),
        (
            '  a: "ctx.retries["\n',
            "expression-syntax: definition 'a': invalid syntax: '[' was never closed",
        ),
    ],
    ids=lambda v: v[:30] if isinstance(v, str) else v,
)
def test_a_bad_definition_is_one_positioned_error(definitions: str, expected: str) -> None:
    errors = _errors(definitions)
    assert [m for _, _, m in errors][:1] == [expected]
    assert len(errors) == 1
    line, column, _ = errors[0]
    assert line >= 6 and column > 1  # in the define: block, not at the chart's start


def test_the_cycle_error_points_at_the_use_that_closes_it() -> None:
    text = _source(WRITTEN_OUT, '  a: "b + 1"\n  b: "2 * a"\n')
    (error,) = compile_source(text, "chart.yaml").errors
    line = text.splitlines()[error.span.line - 1]
    assert line == '  b: "2 * a"' and line[error.span.column - 1] == "a"


def test_an_unknown_name_suggests_a_definition() -> None:
    result = compile_source(_source({**DEFINED, "guard": "overdeu"}), "chart.yaml")
    (error,) = result.errors
    assert error.slug == "expression-unsafe" and "did you mean 'overdue'?" in error.notes


@pytest.mark.parametrize(
    ("written", "meant"),
    [
        ("overdeu", "overdue"),
        ("budget", "resolution_budget"),
        ("first_response", "first_response_sla"),
    ],
)
def test_an_unknown_name_sharing_a_word_with_a_definition_suggests_it(
    written: str, meant: str
) -> None:
    definitions = DEFINITIONS + "  resolution_budget: 5\n  first_response_sla: 6\n"
    uses = {**DEFINED, "guard": f"{written} > 1"}
    result = compile_source(_source(uses, definitions), "chart.yaml")
    (error,) = result.errors
    assert error.notes == (f"did you mean '{meant}'?",)


def test_an_unknown_name_like_no_definition_gets_the_quotes_hint() -> None:
    result = compile_source(_source({**DEFINED, "guard": "budget"}), "chart.yaml")
    (error,) = result.errors
    assert error.notes == ("a string literal needs quotes inside the expression: \"'budget'\"",)


def test_a_definition_may_shadow_no_field_but_reads_fields_by_ctx() -> None:
    chart = _chart(
        {**DEFINED, "invariant": "retries <= 1000000"}, DEFINITIONS + '  retries: "ctx.retries"\n'
    )
    assert "retries" in chart.definitions


def test_charts_without_definitions_keep_their_digest_form() -> None:
    chart = _chart(WRITTEN_OUT, "  unused: 1\n")
    plain = compile_source(_source(WRITTEN_OUT, "  {}").replace("define:\n  {}\n", ""), "c.yaml")
    assert plain.chart is not None
    assert chart.digest == plain.chart.digest  # an unused definition changes no answer
