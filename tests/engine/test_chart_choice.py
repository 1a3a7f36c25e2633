"""`invoke: {chart: {by, cases}}`: the child's chart chosen by an expression when it
starts, through `FamilySimulator` (each case starts its chart, a value with no case
starts none and the parent gets `error.invoke.<id>`), and the compiler's positioned
errors for cases that cannot be values of `by`."""

from __future__ import annotations

from pathlib import Path

import pytest
from chart_helpers import chart_of, compile_text

import statekit
from statekit.engine.chart import Chart
from statekit.engine.family_members import MemberStatus
from statekit.engine.result import EVALUATION_ERROR
from statekit.testing import FamilySimulator

FAMILY = Path(__file__).parents[2] / "examples" / "payment_choice"


def _sim() -> FamilySimulator:
    return FamilySimulator(
        statekit.load(FAMILY / f"{name}.yaml")
        for name in ("order", "card_payment", "invoice_payment")
    )


@pytest.mark.parametrize(
    ("method", "chart", "event", "final"),
    [
        ("card", "card_payment", "authorised", "paid"),
        ("invoice", "invoice_payment", "transferred", "paid"),
    ],
)
def test_each_case_starts_its_chart_and_its_output_comes_back(
    method: str, chart: str, event: str, final: str
) -> None:
    sim = _sim()
    sim.start("checkout", "o-1", {"order_id": "A1", "total": 30, "method": method})
    child = sim.member("o-1/pay/0")
    assert (child.chart, child.parent, child.invoke_id) == (chart, "o-1", "pay")
    assert dict(child.state.context) == {"order_id": "A1", "amount": 30, "ref": ""}
    sim.send(event, {"ref": "R-1"}, to="o-1/pay/0")
    order = sim.member("o-1")
    assert order.state.leaves == (final,)
    assert order.state.context["payment_ref"] == "R-1"
    assert sim.status("o-1/pay/0") is MemberStatus.DONE


def test_a_value_with_no_case_starts_no_child_and_the_parent_gets_error_invoke() -> None:
    sim = _sim()
    step = sim.start("checkout", "o-1", {"method": "cash"})
    assert "o-1/pay/0" not in sim.members
    errors = [r for r in step.records if r.delivery.event == "error.invoke.pay"]
    assert len(errors) == 1
    reason = errors[0].delivery.payload["reason"]
    assert reason.startswith(f"{EVALUATION_ERROR}: chart choice of invoke 'pay' `ctx.method`")
    assert "has no case (cases: 'card', 'invoice')" in reason
    assert sim.member("o-1").state.leaves == ("failed",)


def test_the_choice_is_read_when_the_child_starts_not_when_the_chart_was_created() -> None:
    text = (FAMILY / "order.yaml").read_text()
    text = (
        text.replace("initial: paying\n", "initial: choosing\n")
        .replace("  cancel: {}\n", "  cancel: {}\n  go: {}\n")
        .replace(
            "states:\n  paying:",
            "states:\n  choosing:\n"
            "    on: {go: {to: paying, do: [{assign: {method: \"'invoice'\"}}]}}\n  paying:",
        )
    )
    order = Chart(chart_of(text))
    others = (statekit.load(FAMILY / f"{n}.yaml") for n in ("card_payment", "invoice_payment"))
    sim = FamilySimulator([order, *others])
    sim.start("checkout", "o-1", {"method": "card"})
    sim.send("go", to="o-1")
    assert sim.member("o-1/pay/1").chart == "invoice_payment"


CHOICE = """\
statechart: chooser
context:
  kind: {{type: {type}, default: {default}}}
initial: a
states:
  a:
    invoke:
      id: kid
      chart:
        by: {by}
        cases: {cases}
  b: {{final: true}}
"""


@pytest.mark.parametrize(
    ("type_", "default", "by", "cases", "message", "line", "column"),
    [
        ("string", "x", "ctx.kind", "{1: one, x: two}", None, 0, 0),
        ("integer", "0", "ctx.kind", "{x: one}", "case 'x' of the chart choice", 11, 17),
        ("string", "x", "ctx.kind", "{x: one, x: two}", "duplicate", 11, 25),
        ("integer", "0", "ctx.kind", "{1: one, 01: two}", "duplicate case 1", 11, 25),
        ("boolean", "true", "ctx.kind", "{true: one, maybe: two}", "case 'maybe'", 11, 28),
        ("number", "0.5", "ctx.kind", "{1: one}", "is number: a case needs", 10, 13),
        ("string", "x", "ctx.nope", "{x: one}", "nope", 10, 13),
    ],
)
def test_cases_that_are_not_values_of_by_are_positioned_compile_errors(
    type_: str, default: str, by: str, cases: str, message: str | None, line: int, column: int
) -> None:
    result = compile_text(CHOICE.format(type=type_, default=default, by=by, cases=cases))
    if message is None:
        assert result.chart is not None, [str(d) for d in result.diagnostics]
        return
    assert result.chart is None
    found = [d for d in result.diagnostics if message in d.message]
    assert found, [str(d) for d in result.diagnostics]
    assert (found[0].span.line, found[0].span.column) == (line, column)


def test_a_chosen_chart_cannot_pin_a_version() -> None:
    text = CHOICE.format(type="string", default="x", by="ctx.kind", cases="{x: one}")
    result = compile_text(text.replace("      id: kid\n", "      id: kid\n      version: 2\n"))
    assert result.chart is None
    (found,) = [d for d in result.diagnostics if "cannot pin one 'version'" in d.message]
    assert (found.span.line, found.span.column) == (9, 16)
