"""`explain` on a chart that invokes: an invocation's done or error where its state is
not active cannot arrive (no child runs there), and says so instead of standing as a
gap; where the invocation runs, an unclassified one is still UNDEFINED_TRANSITION."""

from __future__ import annotations

import json
from pathlib import Path

from cli_process import statekit
from order_payment_family import ORDER

from statekit.analysis.explain import explain
from statekit.analysis.explorer import explore
from statekit.compiler.pipeline import compile_source

ORDER_STARTED_LATER = (
    ORDER.replace("initial: paying\n", "initial: idle\n")
    .replace("  CANCEL: {}\n", "  CANCEL: {}\n  START: {}\n")
    .replace("states:\n", "states:\n  idle:\n    on: {START: paying, CANCEL: cancelled}\n", 1)
    .replace("      error.invoke.payment: failed\n", "")
)
"""An order that invokes its payment once started, and leaves error.invoke.payment
unclassified where the payment runs."""


def _verdicts(state: str, event: str) -> list[tuple[str | None, str | None]]:
    result = compile_source(ORDER_STARTED_LATER, "order.yaml")
    assert result.chart is not None, result.diagnostics
    explanation = explain(explore(result.chart))
    (row,) = [r for r in explanation.rows if r.states == (state,)]
    return [(v.reason, v.cannot_arrive) for v in row.verdicts[event]]


def test_an_invocations_event_where_it_is_not_active_cannot_arrive() -> None:
    assert _verdicts("idle", "done.invoke.payment") == [
        ("UNDEFINED_TRANSITION", "its invocation runs only while 'paying' is active")
    ]
    assert _verdicts("paying", "error.invoke.payment") == [("UNDEFINED_TRANSITION", None)]


def test_the_cli_says_it_cannot_arrive(tmp_path: Path) -> None:
    (tmp_path / "order.yaml").write_text(ORDER_STARTED_LATER, encoding="utf-8")
    done = statekit("explain", str(tmp_path / "order.yaml"), "--state", "idle")
    assert done.returncode == 0, done.stderr
    assert (
        "  done.invoke.payment: REJECTED UNDEFINED_TRANSITION, but it cannot arrive here: "
        "its invocation runs only while 'paying' is active"
    ) in done.stdout, done.stdout
    as_json = statekit("explain", str(tmp_path / "order.yaml"), "--format", "json")
    (idle,) = [c for c in json.loads(as_json.stdout)["configurations"] if c["states"] == ["idle"]]
    assert idle["events"]["done.invoke.payment"][0]["cannot_arrive"]
    assert "cannot_arrive" not in idle["events"]["START"][0]
