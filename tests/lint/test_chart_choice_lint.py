"""The family rules on an invoke that chooses its chart (`chart: {by, cases}`): every
case's chart is part of the family, so each is checked (it exists, takes the input,
gives the output), at the case's own position, and the correct family has no finding."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from order_payment_family import position

import statekit
from statekit.compiler.chart_set import ChartSet, invocation_producers
from statekit.lint.config import LintConfig
from statekit.lint.lint_files import lint_paths

FAMILY = Path(__file__).parents[2] / "examples" / "payment_choice"
CARD, INVOICE, ORDER = "card_payment", "invoice_payment", "order"

# (case, file changed, text replaced, by, the slug, the file it sits in, the text it sits at)
CASES = [
    ("unknown case chart", ORDER, "invoice: invoice_payment", "invoice: invoce_payment",
     "invoke-unknown-chart", ORDER, "invoice: invoce"),
    ("first case's chart unknown", ORDER, "card: card_payment", "card: cart_payment",
     "invoke-unknown-chart", ORDER, "card: cart"),
    ("input of one case", INVOICE, "amount: {type: integer, default: 0}",
     "amount: {type: string, default: \"\"}",
     "invoke-input", ORDER, "ctx.total"),
    ("output of the other case", CARD, "output: {ref: ctx.ref}", "output: {ref: 1}",
     "invoke-output", ORDER, "ref: string"),
    ("an event one case's child sends", CARD, "  authorising:\n    on:",
     "  authorising:\n    entry: [{send: {event: retrying, to: parent}}]\n    on:",
     "invoke-unclassified", ORDER, "id: pay"),
]  # fmt: skip


def _family(tmp_path: Path, file: str, old: str, new: str) -> Path:
    folder = tmp_path / "family"
    shutil.copytree(FAMILY, folder)
    path = folder / f"{file}.yaml"
    text = path.read_text(encoding="utf-8")
    assert old in text
    path.write_text(text.replace(old, new), encoding="utf-8")
    return folder


def _findings(folder: Path) -> list[tuple[str, str, int, int]]:
    report = lint_paths([folder], LintConfig())
    assert report.internal_errors == 0, report.diagnostics
    return [
        (d.slug, Path(d.span.file).stem, d.span.line, d.span.column)
        for d in report.diagnostics
        if d.severity.value == "error"
    ]


def test_the_correct_family_has_no_error() -> None:
    assert _findings(FAMILY) == []


@pytest.mark.parametrize(("case", "file", "old", "new", "slug", "where", "at"), CASES)
def test_each_case_is_checked_at_its_position(
    tmp_path: Path, case: str, file: str, old: str, new: str, slug: str, where: str, at: str
) -> None:
    folder = _family(tmp_path, file, old, new)
    line, column = position((folder / f"{where}.yaml").read_text(encoding="utf-8"), at)
    assert _findings(folder) == [(slug, where, line, column)], case


def test_the_race_analysis_counts_one_producer_with_every_case_s_events(tmp_path: Path) -> None:
    retry = "  authorising:\n    entry: [{send: {event: retrying, to: parent}}]\n    on:"
    folder = _family(tmp_path, CARD, "  authorising:\n    on:", retry)
    invoice = folder / f"{INVOICE}.yaml"
    invoice.write_text(
        invoice.read_text(encoding="utf-8").replace(
            "  invoiced:\n    on:",
            "  invoiced:\n    entry: [{send: {event: reminded, to: parent}}]\n    on:",
        ),
        encoding="utf-8",
    )
    order = folder / f"{ORDER}.yaml"
    order.write_text(
        order.read_text(encoding="utf-8")
        .replace("  cancel: {}\n", "  cancel: {}\n  retrying: {}\n  reminded: {}\n")
        .replace(
            "      cancel: cancelled\n",
            "      cancel: cancelled\n      retrying: {}\n      reminded: {}\n",
        ),
        encoding="utf-8",
    )
    charts = ChartSet(
        tuple(statekit.compile_chart(folder / f"{n}.yaml") for n in (ORDER, CARD, INVOICE))
    )
    (producer,) = invocation_producers(charts.charts[0], charts)
    assert (producer.name, producer.events) == (
        "invoke.pay",
        ("retrying", "reminded", "done.invoke.pay", "error.invoke.pay"),
    )
    assert _findings(folder) == []
