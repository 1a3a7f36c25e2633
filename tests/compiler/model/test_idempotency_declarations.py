"""The chart's `idempotency:`: key fields per event, and a positioned error for every bad one."""

from __future__ import annotations

import pytest
from chart_helpers import chart_of, compile_text

from statekit.compiler.serialize import chart_to_json

EVENTS = """\
statechart: keys
events:
  TaskStarted:
    attempt: integer
    worker: string
    ok: boolean
    kind: {enum: [a, b]}
    late: {type: integer, default: 0}
    maybe: {type: string, nullable: true}
    amount: number
  PING: {}
idempotency:
  {key}
initial: idle
states:
  idle: {on: {TaskStarted: idle, PING: idle}}
"""


def chart_with(key: str) -> str:
    return EVENTS.replace("{key}", key)


@pytest.mark.parametrize(
    "key, fields",
    [
        ("TaskStarted: [attempt]", ("attempt",)),
        ("TaskStarted: [worker, attempt]", ("worker", "attempt")),
        ("TaskStarted: [ok, kind]", ("ok", "kind")),
    ],
)
def test_key_fields_are_kept_in_declaration_order(key: str, fields: tuple[str, ...]) -> None:
    chart = chart_of(chart_with(key))
    assert dict(chart.idempotency) == {"TaskStarted": fields}
    assert chart_to_json(chart)["idempotency"] == {"TaskStarted": list(fields)}


def test_a_chart_without_the_key_keeps_its_digest_form() -> None:
    chart = chart_of(chart_with("{}").replace("idempotency:\n  {}\n", ""))
    assert "idempotency" not in chart_to_json(chart, positions=False)
    keyed = chart_of(chart_with("TaskStarted: [attempt]"))
    assert keyed.digest != chart.digest  # the key changes what the runner does


# (the `idempotency:` line, the slug, the column of the finding on line 13, words in it)
BAD = [
    ("NOPE: [attempt]", "unknown-event", 3, "undeclared event 'NOPE'"),
    ("TaskStarte: [attempt]", "unknown-event", 3, "undeclared event 'TaskStarte'"),
    ("TaskStarted: [attempts]", "invalid-idempotency-key", 17, "not a payload field"),
    ("TaskStarted: [late]", "invalid-idempotency-key", 17, "has a default"),
    ("TaskStarted: [maybe]", "invalid-idempotency-key", 17, "is nullable"),
    ("TaskStarted: [amount]", "invalid-idempotency-key", 17, "is a number"),
    ("TaskStarted: [attempt, amount]", "invalid-idempotency-key", 26, "is a number"),
    ("PING: [attempt]", "invalid-idempotency-key", 10, "not a payload field"),
]


@pytest.mark.parametrize("key, slug, column, words", BAD)
def test_every_bad_key_is_a_positioned_error(key: str, slug: str, column: int, words: str) -> None:
    result = compile_text(chart_with(key))
    assert result.chart is None
    found = [d for d in result.diagnostics if d.slug == slug]
    assert len(found) == 1, result.diagnostics
    assert words in found[0].message
    assert (found[0].span.line, found[0].span.column) == (13, column)


@pytest.mark.parametrize(
    "key",
    [
        "TaskStarted: []",
        "TaskStarted: attempt",
        "TaskStarted: [attempt, attempt]",
        "TaskStarted: {attempt: 1}",
        "TaskStarted: [[attempt]]",
        "TaskStarted: [1]",
        "[TaskStarted]",
        "bad name!: [attempt]",
    ],
)
def test_every_malformed_key_is_a_positioned_schema_error(key: str) -> None:
    result = compile_text(chart_with(key))
    assert result.chart is None
    assert result.diagnostics
    assert all(d.span.line >= 12 for d in result.diagnostics), result.diagnostics
