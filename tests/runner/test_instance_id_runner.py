"""`instance.id` in the durable runner, on each store: every step of an instance reads
its own ID (creation, events, timer deliveries), and after a restart the replay,
`verify` and `rebuild` give the values the live steps computed."""

from __future__ import annotations

from runner_charts import chart_from

from statekit.runner.outcome import OutcomeStatus
from statekit.runner.runner import Runner
from statekit.runner.store import open_store

T0 = 1_767_225_600_000

TAGGED = """
statechart: tagged
context:
  tag: {type: string, default: ""}
events:
  CLAIM: {owner: string}
initial: open
states:
  open:
    entry: [{assign: {tag: "'#' + instance.id"}}]
    on:
      CLAIM:
        - {to: claimed, if: "event.owner == instance.id"}
        - {to: refused}
  claimed:
    after:
      - {delay: 1s, to: done, do: [{emit: {type: Closed, payload: {by: instance.id}}}]}
  refused: {final: true}
  done: {final: true}
"""


def test_each_step_reads_its_instances_id_and_replays_it(store_url: str) -> None:
    runner = Runner(chart_from(TAGGED), open_store(store_url), clock=lambda: T0)
    runner.create("a-1")
    runner.create("b-2")
    assert runner.apply("a-1", "e1", "CLAIM", {"owner": "a-1"}).status is OutcomeStatus.APPLIED
    assert runner.apply("b-2", "e1", "CLAIM", {"owner": "a-1"}).status is OutcomeStatus.APPLIED
    assert runner.load("a-1").state.is_active("claimed")
    assert runner.load("b-2").state.is_active("refused")
    assert runner.load("b-2").state.context["tag"] == "#b-2"
    runner.store.close()

    again = Runner(chart_from(TAGGED), open_store(store_url), clock=lambda: T0 + 5_000)
    (fired,) = again.fire_due()
    assert [dict(m.payload) for m in fired.emitted] == [{"by": "a-1"}]
    for instance in ("a-1", "b-2"):
        assert again.verify(instance).ok, again.verify(instance).differences
        rebuilt = again.rebuild(instance).state
        assert rebuilt is not None and rebuilt == again.load(instance).state
    assert again.load("a-1").state.is_active("done")
    again.store.close()
