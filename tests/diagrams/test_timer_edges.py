"""Timers in diagrams: edges labelled `after 15m`, `at <expr>`, `after <expr> [guard]` in DOT
and Mermaid, `send`/`cancel` where effects are shown, and the Markdown tables."""

from __future__ import annotations

from chart_helpers import chart_of
from diagram_charts import TIMED, labels, timed

from statekit.diagrams.classify import classify
from statekit.diagrams.dot import to_dot
from statekit.diagrams.markdown import Image, LintSummary, machine_page
from statekit.diagrams.mermaid import to_mermaid
from statekit.diagrams.model import extract
from statekit.diagrams.views import whole_view


def _page() -> str:
    d = timed()
    return machine_page(
        d,
        source="../../machines/timed.yaml",
        images=[Image("", "timed.svg")],
        mermaid=to_mermaid(whole_view(d)),
        classification=classify(chart_of(TIMED)),
        lint=LintSummary(),
    )


def test_the_model_names_each_timer_transition_by_its_timer() -> None:
    d = timed()
    triggers = [(t.trigger, t.timer) for t in d.transitions if t.timer is not None]
    assert triggers == [
        ("after 7d", "after(7d)@"),
        ("after 15m", "after(15m)@processing"),
        ("at ctx.lease_until_ms", "at(ctx.lease_until_ms)@running"),
        ("after ctx.backoff_ms", "after(ctx.backoff_ms)@waiting_retry"),
        ("after ctx.backoff_ms", "after(ctx.backoff_ms)@waiting_retry"),
        ("after 1h30m", "after(1h30m)@waiting_retry"),
    ]
    assert [t.trigger for t in d.transitions if t.timer is None] == ["Start"]
    assert [(t.name, d.states[t.state].path, t.trigger) for t in d.timers] == [
        ("after(7d)@", "", "after 7d"),
        ("after(15m)@processing", "processing", "after 15m"),
        ("at(ctx.lease_until_ms)@running", "running", "at ctx.lease_until_ms"),
        ("after(ctx.backoff_ms)@waiting_retry", "waiting_retry", "after ctx.backoff_ms"),
        ("after(1h30m)@waiting_retry", "waiting_retry", "after 1h30m"),
    ]


def test_dot_labels_timer_edges_like_event_edges() -> None:
    dot = to_dot(whole_view(timed()))
    texts = labels(dot)
    assert "after 15m / emit PaymentTimedOut" in texts
    assert "at ctx.lease_until_ms / send Remind" in texts
    assert "after ctx.backoff_ms [retry_budget_left] / send Start" in texts
    assert "<B>after 15m</B>" in dot and "<B>at ctx.lease_until_ms</B>" in dot
    assert 'tooltip="after ctx.backoff_ms [retry_budget_left]"' in dot
    # effects in the state box: the delayed send, the cancel, the targetless timer
    assert 'entry / send Remind</TD></TR><TR><TD ALIGN="LEFT">exit / cancel nudge' in dot
    assert "after 1h30m / assign 1" in dot
    assert "after(" not in dot  # the timer event's name is for evidence, not drawings


def test_mermaid_labels_timer_edges_like_event_edges() -> None:
    d = timed()
    ids = {s.path: f"s{s.id}" for s in d.states}
    text = to_mermaid(whole_view(d))
    assert f"{ids['processing']} --> {ids['closed']} : after 15m\n" in text
    assert f"{ids['running']} --> {ids['waiting_retry']} : at ctx.lease_until_ms\n" in text
    assert (
        f"{ids['waiting_retry']} --> {ids['processing']} : after ctx.backoff_ms"
        "<br>[retry_budget_left]\n"  # a label's lines are at most 24 characters
    ) in text
    assert f"{ids['waiting_retry']} : after 1h30m / assign budget\n" in text
    assert "after 7d / emit StillAlive" in text


def test_markdown_tables_list_timers_and_sends() -> None:
    text = _page()
    assert "| `processing` | `after 15m` |  | `closed` | emit PaymentTimedOut |" in text
    assert (
        "| `waiting_retry` | `after ctx.backoff_ms` | `retry_budget_left` else "
        "`BUDGET_EXHAUSTED` | `processing` | send Start |"
    ) in text
    assert "entry: send Remind {n: 1} after 30s as nudge<br>exit: cancel nudge" in text
    assert "send Remind {n: 2} at ctx.lease_until_ms + 60000" in text
    timers = text[text.index("### Timers") :].split("\n\n")[1]
    assert timers.splitlines() == [
        "| timer event | state | fires |",
        "|---|---|---|",
        "| `after(7d)@` | `timed` | `after 7d` |",
        "| `after(15m)@processing` | `processing` | `after 15m` |",
        "| `at(ctx.lease_until_ms)@running` | `running` | `at ctx.lease_until_ms` |",
        "| `after(ctx.backoff_ms)@waiting_retry` | `waiting_retry` | `after ctx.backoff_ms` |",
        "| `after(1h30m)@waiting_retry` | `waiting_retry` | `after 1h30m` |",
    ]


def test_a_chart_without_timers_has_no_timers_table() -> None:
    text = machine_page(
        extract(chart_of("statechart: plain\ninitial: a\nstates: {a: {}}\n")),
        source="x.yaml",
        images=[Image("", "x.svg")],
        mermaid="",
        classification=[],
        lint=LintSummary(),
    )
    assert "### Timers" not in text


def test_the_same_timed_chart_gives_the_same_bytes() -> None:
    first, second = timed(), timed()
    assert to_dot(whole_view(first)) == to_dot(whole_view(second))
    assert to_mermaid(whole_view(first)) == to_mermaid(whole_view(second))
    assert _page() == _page()
