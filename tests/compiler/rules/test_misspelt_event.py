"""One typo, one error: a misspelt event name gives `unknown-event` and nothing else.

The payload of an undeclared event is unknown, so what reads `event.<field>` under
it (an `if`, a named guard, an effect) is not checked against a payload and does
not cascade into `expression-type` errors ("not available here", an empty reason,
"used by an eventless transition"). The table puts the same typo, GOO for GO,
everywhere an event name is written; errors that are real whatever the event
(an unknown context field) are still reported.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from statekit.lint.config import LintConfig
from statekit.lint.lint_files import lint_paths

CHART = """\
statechart: typo
context: {m: integer}
events: {GO: {n: integer}, STOP: {}}
guards:
  big: {if: "event.n > 2", else: SMALL}
  bigger: {if: "event.n > 3"}
initial: a
states:
  a:
    on:
@ON@
@STATE@
  b:
    initial: b1
    on: {GO: a}
    states:
      b1:
        on:
@NESTED@
  c: {final: true}
"""

PLACES = {
    "on with an if on the payload": ("      GOO: {to: b, if: 'event.n > 1'}", "", ""),
    "on with a named guard": ("      GOO: {to: b, guard: big}", "", ""),
    "on with several named guards": ("      GOO: {to: b, guard: [big, bigger]}", "", ""),
    "on with an effect on the payload": (
        "      GOO: {to: b, do: [{assign: {m: event.n}}]}",
        "",
        "",
    ),
    "alternatives": (
        "      GOO: [{to: b, if: 'event.n > 1', else: LOW}, {to: c, guard: big}]",
        "",
        "",
    ),
    "a raise with a payload": (
        "      GO: {to: b, do: [{raise: {event: GOO, payload: {n: event.n}}}]}",
        "",
        "",
    ),
    "a raise": ("      GO: {to: b, do: [{raise: GOO}]}", "", ""),
    "entry raise": ("      GO: b", "    entry: [{raise: GOO}]", ""),
    "already": ("      GO: b", "    already: [GOO]", ""),
    "reject": ("      GO: b", "    reject: {GOO: NOT_NOW}", ""),
    "a nested state's on with a guard": (
        "      GO: b",
        "",
        "          GOO: {to: c, guard: big, if: 'event.n < 9'}",
    ),
}


def _chart(template: str, on: str, state_keys: str, nested_on: str) -> str:
    return (
        template.replace("@ON@", on.replace("'", '"'))
        .replace("@STATE@", state_keys)
        .replace("@NESTED@", nested_on.replace("'", '"') or "          STOP: c")
    )


def _lint(tmp_path: Path, on: str, state_keys: str, nested_on: str) -> list[tuple[str, str]]:
    text = _chart(CHART, on, state_keys, nested_on)
    path = tmp_path / "typo.yaml"
    path.write_text(text, encoding="utf-8")
    report = lint_paths([path], LintConfig())
    return [(d.slug, d.message) for d in report.diagnostics]


def test_the_chart_without_the_typo_compiles(tmp_path: Path) -> None:
    found = _lint(tmp_path, "      GO: {to: b, guard: [big, bigger]}", "", "")
    assert [slug for slug, _ in found if slug.startswith(("unknown", "expression"))] == []


@pytest.mark.parametrize(("on", "state_keys", "nested_on"), PLACES.values(), ids=list(PLACES))
def test_one_typo_gives_one_error(tmp_path: Path, on: str, state_keys: str, nested_on: str) -> None:
    found = _lint(tmp_path, on, state_keys, nested_on)
    assert len(found) == 1, found
    ((slug, message),) = found
    assert slug == "unknown-event"
    assert "'GOO'" in message


@pytest.mark.parametrize(
    ("on", "expected"),
    [
        ("      GOO: {to: b, if: 'ctx.missing > 1'}", "unknown context field 'missing'"),
        ("      GOO: {to: b, do: [{assign: {m: ctx.missing}}]}", "unknown context field 'missing'"),
        ("      GOO: {to: b, if: 'event.n'}", None),
    ],
)
def test_errors_that_do_not_depend_on_the_event_are_still_reported(
    tmp_path: Path, on: str, expected: str | None
) -> None:
    found = _lint(tmp_path, on, "", "")
    slugs = sorted(slug for slug, _ in found)
    if expected is None:
        assert slugs == ["unknown-event"], found
    else:
        assert slugs == ["expression-type", "unknown-event"], found
        assert any(expected in message for _, message in found)


def test_a_guard_only_the_typo_uses_is_still_checked(tmp_path: Path) -> None:
    template = CHART.replace('{if: "event.n > 3"}', '{if: "ctx.missing > 3"}')
    path = tmp_path / "typo.yaml"
    path.write_text(_chart(template, "      GOO: {to: b, guard: bigger}", "", ""), encoding="utf-8")
    found = [(d.slug, d.message) for d in lint_paths([path], LintConfig()).diagnostics]
    assert sorted(slug for slug, _ in found) == ["expression-type", "unknown-event"], found
    assert any("unknown context field 'missing'" in message for _, message in found)
