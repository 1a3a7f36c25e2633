"""The family rules, each on a minimal family broken one way (a table), at its position,
and none of them on the correct family; the chart set of a file linted alone."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from cli_process import statekit
from order_payment_family import ORDER, PAYMENT, position, write_family

from statekit.lint.config import LintConfig
from statekit.lint.lint_files import lint_paths, lint_source

FAMILY_SLUGS = {
    "invoke-unknown-chart",
    "invoke-input",
    "invoke-output",
    "invoke-unclassified",
    "invoke-cycle",
    "send-unknown-target",
    "send-event",
}

PROGRESS_SEND = PAYMENT.replace(
    "      DECLINED: declined\n",
    "      DECLINED: declined\n"
    "      RETRIED: {do: [{send: {event: PAYMENT_RETRIED, to: parent}}]}\n",
).replace("  DECLINED: {}\n", "  DECLINED: {}\n  RETRIED: {}\n")
"""A payment that tells its parent about each retry."""

# (case, the files replaced, the slug, the file it sits in, the text it sits at, which one)
CASES: list[tuple[str, dict[str, str], str, str, str, int]] = [
    (
        "misspelt chart",
        {"order": ORDER.replace("chart: payment", "chart: paymnet")},
        "invoke-unknown-chart",
        "order",
        "paymnet",
        1,
    ),
    (
        "missing version",
        {"order": ORDER.replace("chart: payment\n", "chart: payment\n        version: 3\n")},
        "invoke-unknown-chart",
        "order",
        "3",
        1,
    ),
    (
        "input with no field",
        {"order": ORDER.replace("amount: ctx.total", "amout: ctx.total")},
        "invoke-input",
        "order",
        "amout",
        1,
    ),
    (
        "input of another type",
        {"order": ORDER.replace("amount: ctx.total", "amount: ctx.payment_ref")},
        "invoke-input",
        "order",
        "ctx.payment_ref",
        1,
    ),
    (
        "output a final state does not give",
        {"payment": PAYMENT.replace("    output: {ref: ctx.reference}\n", "")},
        "invoke-output",
        "order",
        "ref: string}",
        1,
    ),
    (
        "output of another type",
        {"payment": PAYMENT.replace("output: {ref: ctx.reference}", "output: {ref: ctx.amount}")},
        "invoke-output",
        "order",
        "ref: string}",
        1,
    ),
    (
        "output the parent does not declare",
        {
            "payment": PAYMENT.replace(
                "output: {ref: ctx.order_id}", "output: {ref: ctx.order_id, code: ctx.amount}"
            )
        },
        "invoke-output",
        "order",
        "{ref: string}",
        1,
    ),
    (
        "error.invoke unclassified",
        {"order": ORDER.replace("      error.invoke.payment: failed\n", "")},
        "invoke-unclassified",
        "order",
        "paying:",
        1,
    ),
    (
        "a child's send the parent does not declare",
        {"payment": PROGRESS_SEND},
        "invoke-unclassified",
        "order",
        "id: payment",
        1,
    ),
    (
        "a child's send inside an if branch the parent does not declare",
        {
            "payment": PROGRESS_SEND.replace(
                "{do: [{send: {event: PAYMENT_RETRIED, to: parent}}]}",
                "{do: [{if: {cond: ctx.amount > 0, "
                "then: [{send: {event: PAYMENT_RETRIED, to: parent}}]}}]}",
            )
        },
        "invoke-unclassified",
        "order",
        "id: payment",
        1,
    ),
    (
        "a child's send inside a foreach body the parent does not declare",
        {
            "payment": PROGRESS_SEND.replace(
                "{do: [{send: {event: PAYMENT_RETRIED, to: parent}}]}",
                "{do: [{foreach: {array: ctx.tries, item: t, "
                "do: [{send: {event: PAYMENT_RETRIED, to: parent}}]}}]}",
            ).replace(
                "  reference: string\n",
                "  reference: string\n  tries: {type: list, items: integer}\n",
            )
        },
        "invoke-unclassified",
        "order",
        "id: payment",
        1,
    ),
    (  # with a `reject: {"*": ...}` the parent's own undefined-pair reports it
        "a child's send the parent declares and mentions nowhere",
        {
            "payment": PROGRESS_SEND,
            "order": re.sub(r'    reject: \{"\*": [A-Z]+\}\n', "", ORDER).replace(
                "  CANCEL: {}\n", "  CANCEL: {}\n  PAYMENT_RETRIED: {}\n"
            ),
        },
        "invoke-unclassified",
        "order",
        "paying:",
        1,
    ),
    (
        "a send to no chart of the set",
        {
            "order": ORDER.replace(
                "      CANCEL: cancelled\n",
                "      CANCEL:\n        to: cancelled\n        do:\n"
                "          - send: {event: REFUND, to: {chart: ledgr, instance: ctx.order_id}}\n",
            )
        },
        "send-unknown-target",
        "order",
        "ledgr",
        1,
    ),
    (
        "a send to the child of an event it does not declare",
        {
            "order": ORDER.replace(
                "      CANCEL: cancelled\n",
                "      CANCEL: {to: cancelled, do: [{send: {event: ABORT, to: payment}}]}\n",
            )
        },
        "send-event",
        "order",
        "ABORT",
        1,
    ),
    (
        "a send to the child with a payload of another type",
        {
            "order": ORDER.replace(
                "      CANCEL: cancelled\n",
                "      CANCEL:\n        to: cancelled\n        do:\n          - send: "
                "{event: CAPTURED, to: payment, payload: {reference: ctx.total}}\n",
            )
        },
        "send-event",
        "order",
        "ctx.total",
        2,
    ),
    (
        "a send to the parent with a payload of another type",
        {
            "payment": PROGRESS_SEND.replace(
                "to: parent}", "to: parent, payload: {count: ctx.amount}}"
            ),
            "order": ORDER.replace(
                "  CANCEL: {}\n", "  CANCEL: {}\n  PAYMENT_RETRIED: {count: string}\n"
            ),
        },
        "send-event",
        "payment",
        "ctx.amount",
        1,
    ),
]


def _family_findings(folder: Path) -> list[tuple[str, str, int, int]]:
    report = lint_paths([folder], LintConfig())
    assert report.internal_errors == 0, report.diagnostics
    return [
        (d.slug, Path(d.span.file).stem, d.span.line, d.span.column)
        for d in report.diagnostics
        if d.slug in FAMILY_SLUGS
    ]


def test_the_correct_family_has_no_family_finding(tmp_path: Path) -> None:
    report = lint_paths([write_family(tmp_path)], LintConfig())
    assert report.internal_errors == 0
    assert [d for d in report.diagnostics if d.slug in FAMILY_SLUGS] == []
    assert not report.has_errors, report.diagnostics


@pytest.mark.parametrize(("case", "files", "slug", "where", "at", "nth"), CASES, ids=lambda c: c)
def test_each_rule_fires_at_its_position(
    tmp_path: Path, case: str, files: dict[str, str], slug: str, where: str, at: str, nth: int
) -> None:
    folder = write_family(tmp_path, **files)
    text = (folder / f"{where}.yaml").read_text(encoding="utf-8")
    line, column = position(text, at, nth)
    assert _family_findings(folder) == [(slug, where, line, column)], case


def test_every_family_rule_has_a_case() -> None:
    assert {case[2] for case in CASES} | {"invoke-cycle"} == FAMILY_SLUGS


PAYMENT_INVOKES_ORDER = PAYMENT.replace(
    "  pending:\n",
    "  pending:\n    invoke: {id: audit, chart: order}\n",
).replace(
    "      DECLINED: declined\n",
    "      DECLINED: declined\n"
    "      done.invoke.audit: declined\n"
    "      error.invoke.audit: declined\n",
)
"""A payment whose initial state invokes an order, which invokes a payment at its start."""


def test_an_invoke_cycle_through_initial_states_is_found_in_each_chart_of_it(
    tmp_path: Path,
) -> None:
    folder = write_family(tmp_path, payment=PAYMENT_INVOKES_ORDER)
    report = lint_paths([folder], LintConfig())
    found = [d for d in report.diagnostics if d.slug == "invoke-cycle"]
    order = (folder / "order.yaml").read_text(encoding="utf-8")
    payment = PAYMENT_INVOKES_ORDER
    assert [(Path(d.span.file).stem, d.span.line, d.span.column) for d in found] == [
        ("order", *position(order, "payment\n        input")),
        ("payment", *position(payment, "order}")),
    ]
    assert "order → payment (payment) → audit (order)" in found[0].message
    assert [r.span.line for r in found[0].related] == [
        position(order, "id: payment")[0],
        position(payment, "invoke: {id: audit")[0],
    ]


def test_an_invoke_cycle_through_a_later_state_is_not_found(tmp_path: Path) -> None:
    later = PAYMENT_INVOKES_ORDER.replace("initial: pending", "initial: waiting").replace(
        "  pending:\n", "  waiting:\n    on: {CAPTURED: pending}\n  pending:\n"
    )
    report = lint_paths([write_family(tmp_path, payment=later)], LintConfig())
    assert report.internal_errors == 0
    assert [d for d in report.diagnostics if d.slug == "invoke-cycle"] == []


def test_the_cli_refuses_a_chart_that_invokes_itself_at_its_start(tmp_path: Path) -> None:
    chart = ORDER.replace("chart: payment", "chart: order")
    (tmp_path / "order.yaml").write_text(chart, encoding="utf-8")
    done = statekit("lint", str(tmp_path / "order.yaml"))
    assert done.returncode == 1
    line, column = position(chart, "order\n        input")
    assert f"order.yaml:{line}:{column}: error[invoke-cycle]" in done.stdout, done.stdout


def test_the_closest_chart_name_is_suggested(tmp_path: Path) -> None:
    folder = write_family(tmp_path, order=ORDER.replace("chart: payment", "chart: paymnet"))
    report = lint_paths([folder], LintConfig())
    (finding,) = [d for d in report.diagnostics if d.slug == "invoke-unknown-chart"]
    assert "did you mean 'payment'?" in finding.notes


def test_a_file_linted_alone_sees_the_charts_of_its_folder(tmp_path: Path) -> None:
    folder = write_family(tmp_path)
    alone = statekit("lint", str(folder / "order.yaml"))
    assert alone.returncode == 0, alone.stdout + alone.stderr
    piped = statekit("lint", "-", stdin=ORDER)  # no folder: the chart alone
    assert piped.returncode == 1
    assert "invoke-unknown-chart" in piped.stdout


def test_the_cli_reports_a_family_finding_with_its_position(tmp_path: Path) -> None:
    folder = write_family(tmp_path, order=ORDER.replace("amount: ctx.total", "amout: ctx.total"))
    done = statekit("lint", str(folder))
    line, column = position((folder / "order.yaml").read_text(encoding="utf-8"), "amout")
    assert done.returncode == 1
    assert f"order.yaml:{line}:{column}: error[invoke-input]" in done.stdout, done.stdout


def test_stdin_lints_the_chart_alone() -> None:
    report = lint_source(ORDER, "order.yaml", LintConfig())
    assert [d.slug for d in report.diagnostics if d.slug in FAMILY_SLUGS] == [
        "invoke-unknown-chart"
    ]


def test_an_invocations_events_are_not_unused_declarations(tmp_path: Path) -> None:
    folder = write_family(tmp_path, order=ORDER.replace("      error.invoke.payment: failed\n", ""))
    report = lint_paths([folder], LintConfig())
    slugs = [d.slug for d in report.diagnostics if "error.invoke.payment" in d.message]
    assert slugs == ["invoke-unclassified"]


def test_an_invoke_means_the_nearest_chart_of_its_name(tmp_path: Path) -> None:
    write_family(tmp_path / "shop")
    other = tmp_path / "billing"
    other.mkdir()
    unrelated = PAYMENT.replace("version: 1", "version: 5").replace(
        "  amount: integer\n", "  amount_cents: integer\n"
    )
    (other / "payment.yaml").write_text(unrelated, encoding="utf-8")
    assert _family_findings(tmp_path) == []  # shop/order.yaml invokes shop/payment.yaml


def test_a_chart_on_stdin_named_by_stdin_filename_sees_its_folder(tmp_path: Path) -> None:
    folder = write_family(tmp_path)
    named = statekit("lint", "-", "--stdin-filename", str(folder / "order.yaml"), stdin=ORDER)
    assert named.returncode == 0, named.stdout + named.stderr


def test_a_compile_error_does_not_hide_the_invoke_output_behind_it(tmp_path: Path) -> None:
    # the order declares ref an integer (the payment gives a string) and assigns it to a
    # string field: the assign does not compile, and the cause is the invoke's output
    order = ORDER.replace("output: {ref: string}", "output: {ref: integer}")
    folder = write_family(tmp_path, order=order)
    report = lint_paths([folder], LintConfig())
    assert report.internal_errors == 0
    found = [
        (d.slug, d.span.line, d.span.column)
        for d in report.diagnostics
        if Path(d.span.file).stem == "order"
    ]
    output_at = position(order, "ref: integer")
    assign_at = position(order, "event.ref")
    assert found == [
        ("invoke-output", *output_at),
        ("invoke-output", *output_at),
        ("expression-type", *assign_at),
    ], found
    assert "fix this first" in report.diagnostics[0].notes[-1]
    alone = statekit("lint", str(folder / "order.yaml"))
    assert (
        f"order.yaml:{output_at[0]}:{output_at[1]}: error[invoke-output]"
        in (alone.stdout.splitlines()[0])
    ), alone.stdout
