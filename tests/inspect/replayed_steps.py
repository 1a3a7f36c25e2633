"""What each step of an instance's timeline should show, from the public API alone: the
history (`Runner.history`) replayed with `Chart.send`, and the audited rejections
(`Runner.rejections`), merged as they happened."""

from __future__ import annotations

from cli_process import ROOT

import statekit as sk

PAYMENT = ROOT / "machines" / "payment.yaml"


def expected_steps(url: str, instance_id: str) -> list[tuple[str, frozenset[int], frozenset[int]]]:
    """Per timeline step (0: the creation), from the public API: the event ID, and the
    active state ids before and after it (history events by sequence, each audited
    rejection after the event of its version)."""
    chart = sk.load(PAYMENT)
    with sk.open_store(url) as store:
        runner = sk.Runner(chart, store)
        history = runner.history(instance_id)
        rejections = runner.rejections(instance_id)
    states = {0: chart.start()}
    for event in history:
        result = chart.send(
            states[event.sequence - 1],
            event.type,
            event.payload,
            event_id=event.event_id,
            now_ms=event.clock_ms,
        )
        states[event.sequence] = result.state
    keyed = [((e.sequence, 0), e.event_id, e.sequence - 1, e.sequence) for e in history]
    keyed += [((r["version"], 1), r["event_id"], r["version"], r["version"]) for r in rejections]
    keyed.sort(key=lambda k: k[0])
    steps = [("", frozenset[int](), states[0].active_ids)]
    for _key, event_id, before, after in keyed:
        steps.append((event_id, states[before].active_ids, states[after].active_ids))
    return steps
