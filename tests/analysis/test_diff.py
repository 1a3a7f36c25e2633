"""`diff_charts` (pure): what is and is not a behavioural difference, and exit codes."""

from __future__ import annotations

import pytest
from runner_charts import COUNTER, chart_from

from statekit.analysis.diff import diff_charts

BUMPED = COUNTER.replace("version: 1", "version: 2")
DECLARED = BUMPED.replace("initial: open", "migrations:\n  - {from: 1}\ninitial: open")
CASES = [
    # (id, new chart text, behaviour changed, exit code)
    ("identical", COUNTER, False, 0),
    ("description only", COUNTER.replace("A counter whose", "A counter, whose"), False, 0),
    ("version bump only", BUMPED, False, 0),
    ("bump with a declared migration", DECLARED, False, 0),
    ("guard changed", COUNTER.replace("event.by > 0", "event.by > 1"), True, 1),
    ("guard changed, bumped", BUMPED.replace("event.by > 0", "event.by > 1"), True, 0),
    ("emit changed", COUNTER.replace("type: Counted", "type: Tallied"), True, 1),
    ("already removed", COUNTER.replace("    already: [Ping]\n", ""), True, 1),
]  # fmt: skip


@pytest.mark.parametrize(
    ("text", "changed", "code"), [c[1:] for c in CASES], ids=[c[0] for c in CASES]
)
def test_what_counts_as_a_behavioural_change(text: str, changed: bool, code: int) -> None:
    found = diff_charts(chart_from(COUNTER).ir, chart_from(text).ir)
    assert found.behaviour_changed is changed, found.lines()
    assert found.exit_code == code
    assert found.to_data()["behaviour_changed"] is changed
    if not changed:
        assert found.summary() == "no behavioural difference"


def test_an_already_removed_is_a_changed_answer() -> None:
    text = COUNTER.replace("    already: [Ping]\n", "")
    found = diff_charts(chart_from(COUNTER).ir, chart_from(text).ir)
    [answer] = [c for c in found.changes if c.kind == "answer-changed"]
    assert answer.subject == "{open} + Ping"
    assert answer.old == "ALREADY_APPLIED" and answer.new is not None
    assert answer.new.startswith("REJECTED")
