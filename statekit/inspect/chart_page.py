"""The chart page's body: the diagram with the live distribution of instances drawn on it,
the state x event classification, the invariants with their proofs, and the races with
their decisions (`chart_summary`, `distribution`, `diagram_highlight`).

Every value goes through `layout.html`'s escaping; the SVG is statekit's own
drawing (see `instance_page.diagram`).
"""

from __future__ import annotations

from statekit.analysis.races import Race
from statekit.compiler.chart_set import sends_to_charts
from statekit.engine.chart import Chart
from statekit.inspect.chart_summary import Analysis, InvariantProof, classification
from statekit.inspect.diagram_highlight import drawing, with_counts
from statekit.inspect.distribution import Distribution
from statekit.inspect.layout import Markup, chart_href, html, join, query_url
from statekit.inspect.visible_text import identifier

SOURCES = {
    "given": "given with --chart",
    "stored": "compiled from the source the store kept",
}


def chart_body(
    chart: Chart,
    source: str,
    versions: list[tuple[int, bool]],
    spread: Distribution,
    found: Analysis | None,
) -> Markup:
    """The whole body; `versions` lists (version, usable) of the chart's name, `source`
    where this version's chart came from (`SOURCES`)."""
    others = join(
        html(
            '<a href="{}"{}>v{}</a>{}',
            chart_href(chart.name, version),
            Markup(' aria-current="page"') if version == chart.version else Markup(""),
            version,
            "" if usable else " (source not available)",
        )
        for version, usable in versions
    )
    return html(
        '<h1>Chart <code>{}</code> v{}</h1><p class="summary">digest <code>{}</code> · {} · '
        "versions: {}</p>{}"
        '<section id="distribution" data-live-region><h2>Instances by state</h2>{}</section>'
        "<h2>State x event classification</h2>{}"
        '<section id="analysis" data-live-region>{}</section>',
        chart.name,
        chart.version,
        chart.digest,
        SOURCES.get(source, source),
        others,
        linked_charts(chart),
        distribution_panel(chart, spread),
        classification_table(chart),
        analysis_panel(chart, found),
    )


def linked_charts(chart: Chart) -> Markup:
    """The charts this one invokes and sends to, each linked to its page (nothing for a
    chart that does neither): "invokes payment as payment in paying"."""
    ir = chart.ir
    items = [
        html(
            '<li>invokes <a href="{}"><code>{}</code></a>{} as <code>{}</code> in <code>{}</code>'
            "</li>",
            chart_href(name, inv.version),
            name,
            "" if inv.version is None else f" v{inv.version}",
            inv.id,
            ir.states[inv.state].path,
        )
        for inv in ir.invocations
        for name in inv.charts
    ]
    items += [
        html(
            '<li>sends <code>{}</code> to <a href="{}"><code>{}</code></a> instance '
            "<code>{}</code></li>",
            send.event,
            chart_href(target.chart),
            target.chart,
            target.instance.source,
        )
        for send, target in sends_to_charts(ir)
    ]
    if not items:
        return Markup("")
    return html('<ul class="linked-charts" data-linked-charts>{}</ul>', join(items))


def distribution_panel(chart: Chart, spread: Distribution) -> Markup:
    """The diagram with a count on each occupied state, and the same counts as a table."""
    drawn = drawing(chart)
    if drawn.svg is None:
        figure = html('<p class="note">No diagram: {}</p>', drawn.problem or "")
    else:
        figure = html(
            '<figure class="diagram" data-diagram>{}<p class="legend"><span class="swatch '
            'occupied">instances there now (the number in the corner)</span></p></figure>',
            # statekit's own drawing: every chart value in it was escaped for DOT and SVG
            Markup(with_counts(drawn.svg, spread.by_state)),
        )
    states = chart.ir.states
    rows = join(
        html(
            '<tr data-state="{}"><td><code>{}</code></td><td class="count" data-count>{}</td>'
            "<td>{}</td></tr>",
            states[sid].path,
            identifier(states[sid].path),
            count,
            _list_link(chart, sid),
        )
        for sid, count in sorted(spread.by_state.items())
    )
    unknown = (
        html(
            '<p class="error">{} instance(s) store a configuration this chart does not have.</p>',
            spread.unknown,
        )
        if spread.unknown
        else Markup("")
    )
    return html(
        "<p><span data-total>{}</span> instance(s) on this version.</p>{}{}"
        '<table class="distribution"><thead><tr><th>state</th><th>instances</th><th></th>'
        "</tr></thead><tbody>{}</tbody></table>",
        spread.total,
        unknown,
        figure,
        rows,
    )


def _list_link(chart: Chart, sid: int) -> Markup:
    """A link to the instances list filtered to this state (a composite state: the
    instances active anywhere inside it, as its count)."""
    state = chart.ir.states[sid]
    if state.parent is None:
        return Markup("")  # the root: every instance of the version, the count above
    address = query_url("/", {"chart": chart.name, "version": chart.version, "state": state.path})
    return html('<a href="{}">list them</a>', address)


def classification_table(chart: Chart) -> Markup:
    """What each leaf state does with each declared event (static, from the chart)."""
    events, rows = classification(chart.ir)
    if not events:
        return html('<p class="muted">The chart declares no events.</p>')
    head = join(html("<th><code>{}</code></th>", identifier(event)) for event in events)
    body = join(
        html(
            "<tr><th><code>{}</code></th>{}</tr>",
            identifier(row.state),
            join(html("<td>{}</td>", identifier(cell)) for cell in row.cells),
        )
        for row in rows
    )
    return html(
        '<p class="muted">Each row is a leaf state, each column an event: → the transition '
        "tried (with its guards; · else what follows when they fail), ALREADY_APPLIED, the "
        "reject reason, or — for UNDEFINED_TRANSITION. With parallel regions an event's "
        "answer combines the rows of every region's active state.</p>"
        '<div class="wide"><table class="classification"><thead><tr><th>state</th>{}</tr>'
        "</thead><tbody>{}</tbody></table></div>",
        head,
        body,
    )


def analysis_panel(chart: Chart, found: Analysis | None) -> Markup:
    """The invariants and races, or why they are not shown yet."""
    if found is None:
        return html(
            '<h2>Invariants</h2><p class="note" data-analysis-running>The analysis of this '
            "chart is running (bounded: it stops at its limits); the page asks again every "
            "few seconds until it is done.</p>"
        )
    if found.error is not None:
        return html('<h2>Invariants</h2><p class="error">The analysis failed: {}</p>', found.error)
    limit = (
        html(
            '<p class="error" data-analysis-limit>Analysis limit reached: {} What is shown '
            "holds only for the configurations explored; `statekit explain` and `statekit "
            "races` can explore further.</p>",
            " ".join(found.limits),
        )
        if not found.complete
        else html(
            '<p class="muted">Explored completely: {} reachable configuration(s).</p>',
            found.configurations,
        )
    )
    races = (
        races_table(found.races, found.convergent)
        if found.complete
        else html(
            '<p class="note">Not searched: the exploration hit its bound (run '
            "<code>statekit races</code> on the chart).</p>"
        )
    )
    return html(
        "<h2>Invariants</h2>{}{}<h2>Races</h2>{}",
        limit,
        invariants_table(found.invariants),
        races,
    )


def invariants_table(proofs: tuple[InvariantProof, ...]) -> Markup:
    """Each invariant with its status and proof (or the path that breaks it)."""
    if not proofs:
        return html('<p class="muted">The chart declares no invariants.</p>')
    rows = join(
        html(
            '<tr class="invariant {}"><td><code>{}</code></td><td>{}</td><td><span class="badge '
            '{}">{}</span></td><td>{}{}</td></tr>',
            p.status.status.replace(" ", "-"),
            p.status.name,
            p.description or "",
            "ok" if p.status.status in ("proven", "runtime") else "bad",
            p.status.status,
            p.status.detail,
            html('<pre class="path">{}</pre>', "\n".join(p.path)) if p.path else Markup(""),
        )
        for p in proofs
    )
    return html(
        '<table class="invariants"><thead><tr><th>invariant</th><th>says</th><th>status</th>'
        "<th>proof</th></tr></thead><tbody>{}</tbody></table>",
        rows,
    )


def races_table(races: tuple[Race, ...], convergent: int) -> Markup:
    """Each order-sensitive pair of events: where, both orders, and its decision."""
    note = html(
        '<p class="muted">{} pair(s) whose orders of arrival end alike everywhere are not '
        "listed (convergent).</p>",
        convergent,
    )
    if not races:
        return html(
            '<p class="muted">No race: no two events race to different answers.</p>{}', note
        )
    rows = join(
        html(
            '<tr class="race {}"><td><code>{}</code> / <code>{}</code></td><td>{}</td>'
            "<td><code>{}</code></td><td>{}<br>{}</td><td>{}</td></tr>",
            "decided" if race.decided else "undecided",
            identifier(race.events[0]),
            identifier(race.events[1]),
            race.race_class,
            identifier(", ".join(race.configuration)),
            identifier(race.orders[0].text()),
            identifier(race.orders[1].text()),
            _decision(race),
        )
        for race in races
    )
    table = html(
        '<table class="races"><thead><tr><th>events</th><th>class</th><th>in</th>'
        "<th>the two orders</th><th>decision</th></tr></thead><tbody>{}</tbody></table>",
        rows,
    )
    undecided = sum(not race.decided for race in races)
    return html(
        '<details class="races"{}><summary>{} race(s), {} undecided</summary>{}</details>{}',
        Markup(" open") if len(races) <= FOLDED_RACES else Markup(""),
        len(races),
        undecided,
        table,
        note,
    )


FOLDED_RACES = 20
"""A races table longer than this is folded (a chart like media_player has 150 rows)."""


def _decision(race: Race) -> Markup:
    if race.decision is None:
        return html('<span class="badge bad">undecided</span>')
    return html(
        '<span class="badge ok">decided</span> <code>{}</code>: {}',
        race.decision.name,
        race.decision.decision,
    )
