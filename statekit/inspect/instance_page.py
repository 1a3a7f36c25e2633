"""The instance page's body: the selected step on the diagram, with the panels around it.

The step navigation works without a script: previous and next are links
(`?step=N`), the slider sits in a GET form with a button. The static script
(`static/inspect.js`) adds the keys (← → and j k) and moves on as the slider
moves, by following the same addresses. The diagram of the step is the
chart's drawing with the step's states and transitions highlighted by class
(`diagram_highlight`): `before`, `after`, `taken`.
"""

from __future__ import annotations

from statekit.engine.state import State
from statekit.inspect.diagram_highlight import drawing, highlight
from statekit.inspect.instance_panels import (
    KIND_TEXT,
    entry_answer,
    json_text,
    limits_panel,
    messages_table,
    outbox_panel,
    reproduce_panel,
    step_href,
    timeline_table,
    timers_panel,
    verify_panel,
    when,
)
from statekit.inspect.instance_story import InstanceStory
from statekit.inspect.layout import Markup, chart_href, html, instance_href, join
from statekit.inspect.run_lines_export import RunLines
from statekit.inspect.step_view import StepView
from statekit.inspect.value_preview import is_cut, raw_value_href
from statekit.inspect.visible_text import identifier, shown_id


def instance_body(
    story: InstanceStory, view: StepView, lines: RunLines, now: float, chart_hint: str
) -> Markup:
    """The whole body of the instance page at the step `view`."""
    row = story.row
    leaves = ", ".join(_leaves(story.states.get(row.version))) or row.columns.configuration
    summary = html(
        '<p class="summary">Chart <a href="{}">{} v{}</a> · version <span class="mono" '
        "data-version>{}</span> · now in <code data-configuration>{}</code></p>",
        chart_href(row.chart_name, row.chart_version),
        row.chart_name,
        row.chart_version,
        row.version,
        leaves,
    )
    return html(
        '<h1>Instance <code>{}</code></h1><div id="instance" data-live-region>{}{}{}'
        '<div class="columns"><section class="timeline-panel"><h2>Timeline</h2>{}</section>'
        '<section class="side"><h2>Verify</h2>{}<h2>Armed timers</h2>{}'
        "<h2>Reproduce</h2>{}<h2>What this page cannot show</h2>{}</section></div>"
        '<section class="outbox"><h2>Outbox</h2>{}</section></div>',
        shown_id(row.instance_id),
        summary,
        family_line(story),
        step_section(story, view, now),
        timeline_table(story, view.number),
        verify_panel(story),
        timers_panel(story, now),
        reproduce_panel(story, lines, chart_hint),
        limits_panel(story),
        outbox_panel(story, now),
    )


def family_line(story: InstanceStory) -> Markup:
    """One line linking the instance that invoked this one and those it invoked (empty
    for an instance in no family)."""
    parts = []
    if story.parent is not None:
        link = story.parent
        parts.append(
            html(
                'Invoked by <a href="{}" data-parent><code>{}</code></a> as <code>{}</code> ({})',
                instance_href(link.parent_instance_id),
                shown_id(link.parent_instance_id),
                link.invoke_id,
                link.status,
            )
        )
    if story.children:
        children = [
            html(
                '<a href="{}" data-child><code>{}</code></a> (<code>{}</code>, {})',
                instance_href(c.child_instance_id),
                shown_id(c.child_instance_id),
                c.invoke_id,
                c.status,
            )
            for c in story.children
        ]
        parts.append(html("Invoked {}", join(children, ", ")))
    if not parts:
        return html("")
    return html('<p class="family">{}</p>', join(parts, " · "))


def step_section(story: InstanceStory, view: StepView, now: float) -> Markup:
    """The navigation, the diagram and the details of the selected step."""
    instance_id = story.row.instance_id
    entry = view.entry
    if entry is None:
        title = html("Step 0: the creation")
    else:
        title = html(
            'Step {}: <span class="badge kind">{}</span> <code>{}</code> <code>{}</code> → {}',
            view.number,
            KIND_TEXT.get(entry.kind, entry.kind),
            entry.type,
            shown_id(entry.event_id),
            entry_answer(entry),
        )
    return html(
        '<section class="step" id="step" data-step="{}" data-steps="{}">'
        '<h2>{}</h2>{}{}{}<div class="step-details">{}{}{}{}</div></section>',
        view.number,
        view.count,
        title,
        navigation(instance_id, view),
        _missing(view),
        diagram(view),
        _payload(view, instance_id),
        configurations(view),
        context_changes(view, instance_id),
        effects(view, now, story),
    )


def navigation(instance_id: str, view: StepView) -> Markup:
    """Previous / next links and the slider form (it works without a script)."""
    previous = (
        html(
            '<a rel="prev" data-step-prev href="{}">← previous</a>',
            step_href(instance_id, view.number - 1),
        )
        if view.number > 0
        else html('<span class="muted">← previous</span>')
    )
    following = (
        html(
            '<a rel="next" data-step-next href="{}">next →</a>',
            step_href(instance_id, view.number + 1),
        )
        if view.number < view.count
        else html('<span class="muted">next →</span>')
    )
    return html(
        '<nav class="steps">{}<form method="get" action="{}" class="slider">'
        '<label>step <input type="range" name="step" min="0" max="{}" value="{}" '
        'data-step-slider aria-label="step"></label> <output data-step-output>{} of {}</output> '
        '<button type="submit">show</button></form>{}'
        '<span class="muted keys">keys: ← → or j k</span></nav>',
        previous,
        instance_href(instance_id),
        view.count,
        view.number,
        view.number,
        view.count,
        following,
    )


def diagram(view: StepView) -> Markup:
    """The chart's drawing with the step highlighted, and its legend."""
    if view.chart is None:
        return html('<p class="note">No diagram: the chart of this step is not available.</p>')
    drawn = drawing(view.chart)
    if drawn.svg is None:
        return html('<p class="note">No diagram: {}</p>', drawn.problem or "")
    svg = highlight(drawn.svg, before=view.before_ids, after=view.after_ids, taken=view.taken)
    legend = html(
        '<p class="legend"><span class="swatch before">before the step</span>'
        '<span class="swatch after">after the step</span>'
        '<span class="swatch taken">transition taken</span></p>'
    )
    # The SVG is Graphviz's output for statekit's own DOT text, in which every value from
    # the chart went through `diagrams.dot_text`'s escaping (and Graphviz escapes again).
    return html('<figure class="diagram" data-diagram>{}{}</figure>', Markup(svg), legend)


def _missing(view: StepView) -> Markup:
    return html('<p class="error">{}</p>', view.missing) if view.missing else Markup("")


def _payload(view: StepView, instance_id: str) -> Markup:
    entry = view.entry
    if entry is None:
        return Markup("")
    problem = html('<p class="error">{}</p>', entry.problem) if entry.problem else Markup("")
    whole = (
        html(
            '<p><a href="{}">whole payload</a> ({:,} bytes)</p>',
            raw_value_href(instance_href(instance_id), view.number, "payload"),
            len(entry.payload_text.encode("utf-8")),
        )
        if is_cut(entry.payload_text)
        else Markup("")
    )
    return html(
        '<h3>Payload</h3><pre class="payload">{}</pre>{}{}',
        json_text(entry.payload),
        whole,
        problem,
    )


def _leaves(state: State | None) -> tuple[str, ...]:
    return () if state is None else state.leaves


def configurations(view: StepView) -> Markup:
    """The active leaves before and after the step."""
    before = ", ".join(_leaves(view.before)) or "—"
    after = ", ".join(_leaves(view.after)) or "—"
    return html(
        '<h3>Configuration</h3><p class="configurations"><code data-before>{}</code> → '
        "<code data-after>{}</code></p>",
        before,
        after,
    )


def context_changes(view: StepView, instance_id: str) -> Markup:
    """The context diff of the step, by key path."""
    whole = (
        html(
            '<p class="muted"><a href="{}">whole context after this step</a> (JSON)</p>',
            raw_value_href(instance_href(instance_id), view.number, "context"),
        )
        if view.after is not None
        else Markup("")
    )
    if not view.changes:
        return html('<h3>Context</h3><p class="muted">unchanged</p>{}', whole)
    rows = join(
        html(
            '<tr class="{}"><td><code>{}</code></td><td>{}</td><td><code>{}</code></td>'
            "<td><code>{}</code></td></tr>",
            c.kind,
            c.path,
            c.kind,
            "" if c.kind == "added" else json_text(c.before),
            "" if c.kind == "removed" else json_text(c.after),
        )
        for c in view.changes
    )
    return html(
        '<h3>Context</h3><table class="context-diff"><thead><tr><th>key path</th><th>change'
        "</th><th>before</th><th>after</th></tr></thead><tbody>{}</tbody></table>{}",
        rows,
        whole,
    )


def effects(view: StepView, now: float, story: InstanceStory) -> Markup:
    """The microsteps of the step's evidence, and the messages it emitted."""
    items = []
    for step in view.effects:
        lines = [html("<li>transition {}</li>", t) for t in step.transitions]
        lines += [html("<li>exited {}</li>", ", ".join(step.exited))] if step.exited else []
        lines += [html("<li>entered {}</li>", ", ".join(step.entered))] if step.entered else []
        lines += [
            html(
                "<li>assign <code>{}</code>: <code>{}</code> → <code>{}</code></li>",
                name,
                json_text(old),
                json_text(new),
            )
            for name, old, new in step.changes
        ]
        for label, values in (
            ("emitted", step.emitted),
            ("raised", step.raised),
            ("armed timer", step.armed),
            ("cancelled timer", step.cancelled),
            ("sent", step.sent),
        ):
            lines += [html("<li>{} <code>{}</code></li>", label, v) for v in values]
        items.append(html("<li><code>{}</code><ul>{}</ul></li>", step.trigger, join(lines)))
    shown = (
        html('<ol class="effects">{}</ol>', join(items))
        if items
        else html('<p class="muted">No microstep (nothing fired).</p>')
    )
    armed = view.after.timers if view.after is not None else ()
    timers = join(
        html(
            "<li><code>{}</code>{} due {}</li>",
            identifier(t.id),
            Markup("") if t.event == t.id else html(" fires <code>{}</code>", identifier(t.event)),
            "(paused)" if t.due_ms is None else when(t.due_ms / 1000) + " UTC",
        )
        for t in armed
    )
    armed_after = (
        html("<h3>Timers armed after the step</h3><ul>{}</ul>", timers) if armed else Markup("")
    )
    return html(
        "<h3>Effects</h3>{}<h3>Messages emitted</h3>{}{}",
        shown,
        messages_table(view.messages, now),
        armed_after,
    )
