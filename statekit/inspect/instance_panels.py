"""The panels of the instance page around the selected step: the timeline, the armed
timers, the outbox, `verify`'s answer, the reproduction link and what cannot be shown.

Each is a pure function of the instance's story (`instance_story`) returning
escaped markup (`layout.html`): a value from the store reaches the page only
through `html`'s escaping.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime
from typing import Any

from statekit.inspect.instance_story import InstanceStory
from statekit.inspect.layout import Markup, html, instance_href, join, query_url
from statekit.inspect.run_lines_export import RunLines
from statekit.inspect.timeline import NOT_RECORDED, TimelineEntry
from statekit.inspect.value_preview import is_cut, preview, raw_value_href
from statekit.inspect.visible_text import identifier, shown_id
from statekit.runner.store.rows import OutboxRow

TIMELINE_WINDOW = 200
"""How many timeline entries the table lists, around the selected step (a history of
thousands of events would otherwise be a page of thousands of rows)."""

MESSAGES_SHOWN = 100
"""How many of an instance's outbox messages its page lists (the counts cover all)."""

KIND_TEXT = {
    "applied": "applied",
    "already-applied": "already applied",
    "timer": "timer delivered",
    "timer-rejected": "timer rejected",
    "sent": "sent by the chart",
    "migration": "migration",
    "rejected": "rejected",
    "conflict": "conflict",
}


def when(seconds: float | None) -> str:
    """An epoch time in seconds as UTC text (`2026-12-04 23:36:45.123Z`); "" for none."""
    if seconds is None or seconds <= 0:
        return ""
    try:
        moment = datetime.fromtimestamp(seconds, UTC)
    except (OverflowError, OSError, ValueError):
        return str(seconds)
    return moment.strftime("%Y-%m-%d %H:%M:%S.") + f"{moment.microsecond // 1000:03d}Z"


def duration(seconds: float) -> str:
    """A time span in words: `3d 4h`, `12m 5s`, `0.4s`; `overdue 2m` when negative."""
    if seconds < 0:
        return "overdue " + duration(-seconds)
    if seconds < 10:
        return f"{seconds:.1f}s"
    whole = int(seconds)
    parts = [(whole // 86400, "d"), (whole % 86400 // 3600, "h"), (whole % 3600 // 60, "m")]
    parts.append((whole % 60, "s"))
    shown = [f"{n}{unit}" for n, unit in parts if n]
    return " ".join(shown[:2])


def json_text(value: Any) -> str:
    """A JSON value as compact text for a cell, cut to a preview when long
    (`value_preview`)."""
    return preview(json.dumps(value, ensure_ascii=False, sort_keys=True, default=str))


def step_href(instance_id: str, step: int) -> str:
    """The address of one step of the instance page."""
    return query_url(instance_href(instance_id), {"step": step})


def entry_answer(entry: TimelineEntry) -> Markup:
    """The entry's answer: its status, and reason and message when it has them."""
    reason = html(" <code>{}</code>", entry.reason) if entry.reason else Markup("")
    message = html(' <span class="muted">{}</span>', entry.message) if entry.message else Markup("")
    return html("{}{}{}", entry.status, reason, message)


def timeline_table(story: InstanceStory, selected: int) -> Markup:
    """Every entry, newest last, each linking to its step (the selected one marked)."""
    instance_id = story.row.instance_id
    first = html(
        '<tr{}><td><a href="{}">0</a></td><td>created</td><td>0</td><td colspan="3">{}</td>'
        "<td></td></tr>",
        Markup(' aria-current="step" class="selected"') if selected == 0 else Markup(""),
        step_href(instance_id, 0),
        "the creation"
        if not story.pruned_through
        else f"the snapshot at #{story.pruned_through} (earlier events were pruned)",
    )
    low = max(0, selected - TIMELINE_WINDOW // 2)
    high = min(len(story.timeline), low + TIMELINE_WINDOW)
    low = max(0, high - TIMELINE_WINDOW)
    rows = [first] if low == 0 else [first, _gap(instance_id, 1, low)]
    for entry in story.timeline[low:high]:
        current = entry.step == selected
        rows.append(
            html(
                '<tr class="kind-{}{}"{}><td><a href="{}">{}</a></td><td>'
                '<span class="badge kind">{}</span></td><td>{}</td><td><code>{}</code></td>'
                "<td><code>{}</code></td><td>{}</td><td>{}</td></tr>",
                entry.kind,
                " selected" if current else "",
                Markup(' aria-current="step"') if current else Markup(""),
                step_href(instance_id, entry.step),
                entry.step,
                KIND_TEXT.get(entry.kind, entry.kind),
                entry.version if entry.accepted else f"(at {entry.version})",
                shown_id(entry.event_id),
                identifier(entry.type),
                entry_answer(entry),
                when(entry.recorded_at),
            )
        )
    if high < len(story.timeline):
        rows.append(_gap(instance_id, high + 1, len(story.timeline)))
    return html(
        '<table class="timeline"><thead><tr><th>step</th><th>what</th><th>version</th>'
        "<th>event ID</th><th>type</th><th>answer</th><th>recorded (UTC)</th></tr></thead>"
        "<tbody>{}</tbody></table>",
        join(rows),
    )


def _gap(instance_id: str, first: int, last: int) -> Markup:
    """A row standing for the steps `first`..`last`, not listed (the slider reaches them)."""
    return html(
        '<tr class="gap"><td colspan="7">steps <a href="{}">{}</a> to <a href="{}">{}</a> '
        "not listed here (the slider and the keys reach every step)</td></tr>",
        step_href(instance_id, first),
        first,
        step_href(instance_id, last),
        last,
    )


def timers_panel(story: InstanceStory, now: float) -> Markup:
    """The instance's armed timers: ID, event, due time and time left at `now`."""
    if not story.timers:
        return html('<p class="muted">No timer is armed.</p>')
    rows = []
    for timer in sorted(story.timers, key=lambda t: (t.due_ms, t.timer_id)):
        due = timer.due_ms / 1000 if type(timer.due_ms) is int else None
        left = duration(due - now) if due is not None else ""
        rows.append(
            html(
                "<tr{}><td><code>{}</code></td><td><code>{}</code></td><td>{}</td><td>{}</td>"
                "<td>{}</td><td>{}</td></tr>",
                Markup(' class="overdue"') if due is not None and due < now else Markup(""),
                identifier(timer.timer_id),
                identifier(timer.event),
                when(due),
                left,
                timer.generation,
                timer.sequence,
            )
        )
    return html(
        '<table class="timers"><thead><tr><th>timer</th><th>event</th><th>due (UTC)</th>'
        "<th>time left</th><th>generation</th><th>armed at</th></tr></thead><tbody>{}</tbody>"
        "</table>",
        join(rows),
    )


def outbox_panel(story: InstanceStory, now: float) -> Markup:
    """The instance's messages by delivery state, and the latest `MESSAGES_SHOWN` of them
    (every dead and pending one first)."""
    counts: dict[str, int] = {}
    for m in story.outbox:
        counts[m.status] = counts.get(m.status, 0) + 1
    if not counts:
        return html('<p class="muted">No message.</p>')
    waiting = [m for m in story.outbox if m.status != "delivered"][-MESSAGES_SHOWN:]
    room = MESSAGES_SHOWN - len(waiting)
    delivered = [m for m in story.outbox if m.status == "delivered"]
    recent = delivered[len(delivered) - room :] if room > 0 else []
    shown = sorted([*waiting, *recent], key=lambda m: m.id)
    summary = ", ".join(f"{n} {status}" for status, n in sorted(counts.items()))
    more = len(story.outbox) - len(shown)
    note = f"; the latest {len(shown)} listed" if more else ""
    return html('<p class="outbox-counts">{}{}</p>{}', summary, note, messages_table(shown, now))


def messages_table(messages: tuple[OutboxRow, ...] | list[OutboxRow], now: float) -> Markup:
    """Outbox messages with their delivery state."""
    if not messages:
        return html('<p class="muted">No message.</p>')
    rows = []
    for m in messages:
        retry = ""
        if m.status == "pending" and m.attempts:
            retry = "retry in " + duration(max(0.0, m.next_attempt_at - now))
        rows.append(
            html(
                '<tr class="status-{}"><td><code>{}</code></td><td>{}</td><td><code>{}</code>'
                '</td><td><span class="badge {}">{}</span></td><td>{}</td><td>{}</td>'
                "<td>{}</td><td>{}</td></tr>",
                m.status,
                m.message_id,
                m.sequence,
                m.type,
                "bad" if m.status == "dead" else ("ok" if m.status == "delivered" else ""),
                m.status,
                m.attempts,
                retry,
                preview(m.last_error or ""),
                _payload_cell(m),
            )
        )
    return html(
        '<table class="messages"><thead><tr><th>message ID</th><th>event #</th><th>type</th>'
        "<th>state</th><th>attempts</th><th>next</th><th>last error</th><th>payload</th>"
        "</tr></thead><tbody>{}</tbody></table>",
        join(rows),
    )


def _payload_cell(message: OutboxRow) -> Markup:
    """The message's payload (a preview, with a link to all of it when it is cut)."""
    try:
        text = json_text(json.loads(message.payload))
    except (TypeError, ValueError):
        text = f"(not valid JSON) {str(message.payload)[:200]}"
    if not is_cut(message.payload):
        return html("{}", text)
    href = raw_value_href(instance_href(message.instance_id), 0, "message", message.message_id)
    return html('{} <a href="{}">whole payload</a>', text, href)


def verify_panel(story: InstanceStory) -> Markup:
    """`statekit verify`'s answer for the instance."""
    report = story.verified
    if report is None:
        why = story.verify_error or "; ".join(story.replay_problems) or "no chart to replay with"
        return html('<p class="verify unknown">Not verified: {}</p>', why)
    pruned = (
        f" (checked from the snapshot at #{report.checked_from}: earlier events were pruned)"
        if report.checked_from
        else ""
    )
    if report.ok:
        return html(
            '<p class="verify ok"><span class="badge ok">ok</span> the replay of its {} '
            "event(s) gives everything stored, version {}{}.</p>",
            report.events,
            report.version,
            pruned,
        )
    items = join(
        html("<li>{}</li>", line) for line in (*report.differences, *report.snapshot_problems)
    )
    return html(
        '<div class="verify differs"><p><span class="badge bad">differs</span> the replay '
        "disagrees with what is stored{}:</p><ul>{}</ul></div>",
        pruned,
        items,
    )


def reproduce_panel(story: InstanceStory, lines: RunLines, chart_hint: str) -> Markup:
    """The link to the history as `statekit run` JSON lines, the copy button, the command
    that replays it and what the lines leave out."""
    instance_id = story.row.instance_id
    address = instance_href(instance_id) + "/events.jsonl"
    skipped = join(
        html("<li>{} x {}</li>", count, what) for what, count in sorted(lines.skipped.items())
    )
    left_out = (
        html(
            '<p class="muted">Left out (statekit run cannot send them; the runner makes them '
            "itself):</p><ul>{}</ul>",
            skipped,
        )
        if lines.skipped
        else Markup("")
    )
    pruned = (
        html(
            '<p class="error">Events 1 to {} were pruned: the lines start after them and do '
            "not reproduce this instance.</p>",
            story.pruned_through,
        )
        if story.pruned_through
        else Markup("")
    )
    return html(
        '<p><a href="{}" data-run-lines>{} line(s) as <code>statekit run</code> JSON lines</a> '
        '<button type="button" class="copy" data-copy-from="{}">copy</button> '
        '<span class="copy-status" data-copy-status></span></p>'
        "<p>Reproduce in a test: <code>statekit run CHART.yaml --db sqlite:///repro.db "
        "--input events.jsonl</code>, CHART.yaml being {}.</p>{}{}",
        address,
        lines.lines,
        address,
        chart_hint,
        left_out,
        pruned,
    )


def limits_panel(story: InstanceStory) -> Markup:
    """What this page cannot show, and why."""
    items = [html("<li>{}</li>", NOT_RECORDED[0].upper() + NOT_RECORDED[1:] + ".")]
    if story.pruned_through:
        items.append(
            html(
                "<li>Events 1 to {} were pruned by retention: the timeline starts at the "
                "snapshot they were pruned to.</li>",
                story.pruned_through,
            )
        )
    for problem in story.replay_problems:
        items.append(html("<li>The replay stopped: {}</li>", problem))
    return html('<ul class="limits">{}</ul>', join(items))
