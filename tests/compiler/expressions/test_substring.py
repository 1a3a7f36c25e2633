"""`'text' in s` / `not in` on a string: a substring test, typed (the item a string,
the string not nullable), each misuse one positioned diagnostic."""

from __future__ import annotations

import pytest

from statekit.compiler.pipeline import compile_source
from statekit.engine.chart import Chart
from statekit.engine.result import Status


def _chart(condition: str, *, raw: str = "string") -> str:
    return f"""statechart: s
context:
  n: {{type: integer, default: 0}}
events:
  GO: {{raw: {raw}}}
initial: a
states:
  a:
    on:
      GO: {{to: b, if: "{condition}"}}
  b: {{final: true}}
"""


@pytest.mark.parametrize(
    ("condition", "raw", "taken"),
    [
        ("'POST' in event.raw", "POST /x HTTP/1.1", True),
        ("'POST' in event.raw", "GET /x", False),
        ("'POST' not in event.raw", "GET /x", True),
        ("'' in event.raw", "", True),
        ("'a=1' in event.raw and 'b' not in event.raw", "a=1&c=2", True),
    ],
)
def test_a_substring_test_is_decided_by_the_text(condition: str, raw: str, taken: bool) -> None:
    result = compile_source(_chart(condition), "s.yaml")
    assert result.chart is not None, [d.message for d in result.errors]
    chart = Chart(result.chart)
    sent = chart.send(chart.start(), "GO", {"raw": raw})
    assert (sent.status is Status.APPLIED) is taken


@pytest.mark.parametrize(
    ("condition", "raw", "slug", "words"),
    [
        ("ctx.n in event.raw", "string", "expression-type", "tests a substring, but ctx.n is"),
        (
            "'a' in event.raw",
            "{type: string, nullable: true, default: null}",
            "expression-unsafe",
            "a list or a string on its right",
        ),
        ("'a' in ctx.n", "string", "expression-unsafe", "but ctx.n is integer"),
    ],
)
def test_a_misused_substring_test_is_one_positioned_error(
    condition: str, raw: str, slug: str, words: str
) -> None:
    result = compile_source(_chart(condition, raw=raw), "s.yaml")
    assert result.chart is None
    (error,) = result.errors
    assert (error.slug, error.span.line) == (slug, 10), error.message
    assert words in error.message
