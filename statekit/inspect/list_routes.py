"""The instances list, `GET /`: filters, sort, pages, counts per state and search.

Everything the list shows is chosen by the address's query (so a filtered list is a
link to share): `chart`, `version`, `state` (an active state), `rejections=1`,
`conflicts=1`, `timers=armed|overdue`, `outbox=pending|dead`, `from` / `to` (last
activity, `YYYY-MM-DD` or `YYYY-MM-DDTHH:MM`, UTC), `sort=activity|instance|chart|state|
version`, `order=asc|desc`, `page` (from 1). `q` searches instead: an instance ID, an
event ID or an idempotency key; one instance found leads to its page (303), several are
listed. A value the list cannot read is said on the page (400), never guessed.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from datetime import UTC, datetime

from starlette.requests import Request
from starlette.responses import RedirectResponse, Response
from starlette.routing import BaseRoute, Route

from statekit.inspect import live
from statekit.inspect.context import Inspector
from statekit.inspect.layout import (
    Markup,
    chart_href,
    error_page,
    html,
    instance_href,
    join,
    page,
    query_url,
)
from statekit.inspect.list_queries import (
    MAX_OFFSET,
    OUTBOX_FILTERS,
    PAGE_SIZE,
    SORTS,
    TIMER_FILTERS,
    InstanceLine,
    ListPage,
    ListQuery,
    SearchHit,
    StateCounts,
    list_page,
    search,
    state_counts,
)
from statekit.inspect.visible_text import plain_id, shown_id

FILTER_NAMES = ("chart", "version", "state", "rejections", "conflicts", "timers", "outbox")
SHOWN_NAMES = (*FILTER_NAMES, "from", "to", "sort", "order")
"""The query parameters that choose the list (kept by the pager and the sort links)."""
MAX_PAGE = MAX_OFFSET // PAGE_SIZE + 1


class BadQuery(ValueError):
    """A query parameter the list cannot read (the message says which and why)."""


def read_query(params: Mapping[str, str]) -> ListQuery:
    """The `ListQuery` of a list address's parameters (module docstring); `BadQuery` for a
    value it cannot read."""
    version = _integer(params, "version", 0, 2**63 - 1)
    page_number = _integer(params, "page", 1, MAX_PAGE)
    sort = params.get("sort") or "activity"
    if sort not in SORTS:
        raise BadQuery(f"sort={sort!r}: one of {', '.join(SORTS)}")
    order = params.get("order") or ("desc" if sort == "activity" else "asc")
    if order not in ("asc", "desc"):
        raise BadQuery(f"order={order!r}: asc or desc")
    return ListQuery(
        chart=params.get("chart") or None,
        chart_version=version,
        state=params.get("state") or None,
        rejections=_flag(params, "rejections"),
        conflicts=_flag(params, "conflicts"),
        timers=_choice(params, "timers", TIMER_FILTERS),
        outbox=_choice(params, "outbox", OUTBOX_FILTERS),
        active_from=_moment(params, "from"),
        active_to=_moment(params, "to"),
        sort=sort,
        descending=order == "desc",
        offset=((page_number or 1) - 1) * PAGE_SIZE,
    )


def _integer(params: Mapping[str, str], name: str, low: int, high: int) -> int | None:
    text = params.get(name) or ""
    if not text:
        return None
    try:
        value = int(text)
    except ValueError:
        raise BadQuery(f"{name}={text!r}: a whole number") from None
    if not low <= value <= high:
        raise BadQuery(f"{name}={text!r}: from {low} to {high}")
    return value


def _flag(params: Mapping[str, str], name: str) -> bool:
    text = params.get(name) or ""
    if text not in ("", "0", "1", "on"):
        raise BadQuery(f"{name}={text!r}: 1 (or leave it out)")
    return text in ("1", "on")


def _choice(params: Mapping[str, str], name: str, choices: tuple[str, ...]) -> str | None:
    text = params.get(name) or ""
    if text and text not in choices:
        raise BadQuery(f"{name}={text!r}: one of {', '.join(choices)}")
    return text or None


def _moment(params: Mapping[str, str], name: str) -> float | None:
    text = params.get(name) or ""
    if not text:
        return None
    try:
        moment = datetime.fromisoformat(text)
    except ValueError:
        raise BadQuery(f"{name}={text!r}: a date YYYY-MM-DD or YYYY-MM-DDTHH:MM (UTC)") from None
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    return moment.timestamp()


def routes(inspector: Inspector) -> list[BaseRoute]:
    """`GET /`."""

    def instance_list(request: Request) -> Response:
        params = request.query_params
        text = params.get("q") or ""
        if text:
            return _search_page(inspector, text)
        try:
            query = read_query(params)
        except BadQuery as exc:
            return error_page(400, "This list cannot be shown", str(exc))
        store = inspector.store()
        now = live.current(store)
        now_ms = math.floor(inspector.clock() * 1000)
        with store.read():
            listed = list_page(store, query, now_ms)
            counts = state_counts(store, query)
        kept = {name: params.get(name) for name in SHOWN_NAMES}
        body = join(
            (
                html("<h1>Instances</h1>{}", _filter_form(kept)),
                _counts(counts, query, kept),
                _table(listed, query, kept, now_ms),
            )
        )
        return page("Instances", body, section="instances", live=now)

    return [Route("/", instance_list, methods=["GET"])]


def _search_page(inspector: Inspector, typed: str) -> Response:
    """The text as typed is looked for first (an ID may begin or end with a space), then
    without its edge whitespace (pasted with a stray one)."""
    text = typed
    with inspector.store().read():
        hits = search(inspector.store(), typed)
        if not hits and typed.strip() not in (typed, ""):
            text = typed.strip()
            hits = search(inspector.store(), text)
    instances = {hit.instance_id for hit in hits}
    if len(instances) == 1:
        return RedirectResponse(instance_href(hits[0].instance_id), status_code=303)
    body = html(
        '<h1>Search</h1>{}<p class="muted">{} for <code>{}</code> (instance IDs, event IDs '
        "and idempotency keys are matched exactly)</p>{}",
        _filter_form({"q": text}),
        f"{len(hits)} hits" if hits else "Nothing found",
        text,
        _hits(hits) if hits else Markup(""),
    )
    return page(f"Search {plain_id(text)}", body, section="instances")


def _hits(hits: tuple[SearchHit, ...]) -> Markup:
    rows = join(
        html(
            '<tr><td><a href="{}">{}</a></td><td>{}</td><td>{}</td><td>{}</td></tr>',
            instance_href(hit.instance_id),
            shown_id(hit.instance_id),
            hit.kind,
            shown_id(hit.event_id) if hit.event_id else "",
            "" if hit.sequence is None else hit.sequence,
        )
        for hit in hits
    )
    return html(
        '<table id="hits"><thead><tr><th>Instance</th><th>Found as</th><th>Event</th>'
        "<th>Sequence</th></tr></thead><tbody>{}</tbody></table>",
        rows,
    )


def _filter_form(kept: Mapping[str, str | None]) -> Markup:
    def text(name: str, label: str, kind: str = "text") -> Markup:
        return html(
            '<label>{}<input type="{}" name="{}" value="{}"></label>',
            label,
            kind,
            name,
            kept.get(name) or "",
        )

    def choice(name: str, label: str, options: tuple[tuple[str, str], ...]) -> Markup:
        chosen = kept.get(name) or ""
        items = join(
            html(
                '<option value="{}"{}>{}</option>',
                value,
                Markup(" selected") if value == chosen else Markup(""),
                shown,
            )
            for value, shown in options
        )
        return html('<label>{}<select name="{}">{}</select></label>', label, name, items)

    def flag(name: str, label: str) -> Markup:
        checked = Markup(" checked") if kept.get(name) in ("1", "on") else Markup("")
        return html(
            '<label>{}<input type="checkbox" name="{}" value="1"{}></label>', label, name, checked
        )

    return html(
        '<form class="filters" method="get" action="/" id="filters">'
        '<label>Search<input type="search" name="q" value="{}" '
        'placeholder="instance ID, event ID or idempotency key"></label>'
        "{}{}{}{}{}{}{}{}{}"
        '<input type="hidden" name="sort" value="{}"><input type="hidden" name="order" value="{}">'
        '<button type="submit">Show</button> <a href="/">clear</a></form>',
        kept.get("q") or "",
        text("chart", "Chart"),
        text("version", "Chart version", "number"),
        text("state", "Active state"),
        flag("rejections", "Has rejections"),
        flag("conflicts", "Has conflicts"),
        choice("timers", "Timers", (("", "any"), ("armed", "armed"), ("overdue", "overdue"))),
        choice("outbox", "Outbox", (("", "any"), ("pending", "pending"), ("dead", "dead"))),
        text("from", "Active from (UTC)", "datetime-local"),
        text("to", "Active before (UTC)", "datetime-local"),
        kept.get("sort") or "",
        kept.get("order") or "",
    )


def _counts(counts: StateCounts, query: ListQuery, kept: Mapping[str, str | None]) -> Markup:
    items = join(
        html(
            '<li><a href="{}" data-state="{}">{} <span class="badge">{}</span></a></li>',
            query_url("/", {**kept, "state": state, "page": None}),
            state,
            state,
            count,
        )
        for state, count in counts.by_state
    )
    cut = " (the first configurations only)" if counts.configurations_cut else ""
    of = ""
    if query.chart is not None:
        of = f" of {query.chart}" + (
            "" if query.chart_version is None else f" v{query.chart_version}"
        )
    return html(
        '<section id="state-counts" data-live-region><h2>{} instances{} by state{}</h2>'
        '<ul class="counts">{}</ul></section>',
        counts.total,
        of,
        cut,
        items,
    )


def _table(
    listed: ListPage, query: ListQuery, kept: Mapping[str, str | None], now_ms: int
) -> Markup:
    page_number = query.offset // PAGE_SIZE + 1

    def header(sort: str, label: str) -> Markup:
        current = query.sort == sort
        order = (
            ("asc" if query.descending else "desc")
            if current
            else ("desc" if sort == "activity" else "asc")
        )
        arrow = ("▼" if query.descending else "▲") if current else ""
        return html(
            '<th><a href="{}" data-sort="{}">{}</a> {}</th>',
            query_url("/", {**kept, "sort": sort, "order": order, "page": None}),
            sort,
            label,
            arrow,
        )

    rows = join(_line(line, now_ms) for line in listed.lines)
    pager = join(
        (
            html(
                '<a href="{}" rel="prev">previous</a>',
                query_url("/", {**kept, "page": page_number - 1}),
            )
            if page_number > 1
            else Markup(""),
            html("<span>page {}</span>", page_number),
            html(
                '<a href="{}" rel="next">next</a>',
                query_url("/", {**kept, "page": page_number + 1}),
            )
            if listed.has_next and page_number < MAX_PAGE
            else Markup(""),
        )
    )
    empty = (
        html('<tr><td colspan="6" class="muted">No instance matches.</td></tr>')
        if not listed.lines
        else Markup("")
    )
    return html(
        '<section id="instance-list" data-live-region><table id="instances"><thead><tr>'
        "{}{}{}{}<th>Flags</th>{}</tr></thead><tbody>{}{}</tbody></table>"
        '<nav class="pager">{}</nav></section>',
        header("instance", "Instance"),
        header("chart", "Chart"),
        header("state", "State"),
        header("version", "Version"),
        header("activity", "Last activity (UTC)"),
        rows,
        empty,
        pager,
    )


def _line(line: InstanceLine, now_ms: int) -> Markup:
    flags: list[Markup] = []
    if line.rejections:
        flags.append(html('<span class="badge bad">{} rejected</span>', line.rejections))
    if line.conflicts:
        flags.append(html('<span class="badge bad">{} conflicts</span>', line.conflicts))
    if line.timers:
        overdue = line.next_due_ms is not None and line.next_due_ms <= now_ms
        flags.append(
            html(
                '<span class="badge{}">{} timer{}{}</span>',
                " bad" if overdue else "",
                line.timers,
                "s" if line.timers > 1 else "",
                " overdue" if overdue else "",
            )
        )
    if line.pending:
        flags.append(html('<span class="badge">{} pending</span>', line.pending))
    if line.dead:
        flags.append(html('<span class="badge bad">{} dead</span>', line.dead))
    return html(
        '<tr data-instance="{}"><td><a href="{}">{}</a></td><td><a href="{}">{} v{}</a></td>'
        "<td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
        line.instance_id,
        instance_href(line.instance_id),
        shown_id(line.instance_id),
        chart_href(line.chart_name, line.chart_version),
        line.chart_name,
        line.chart_version,
        join((html("<code>{}</code>", state) for state in line.configuration), " "),
        line.version,
        join(flags, " "),
        _moment_text(line.updated_at),
    )


def _moment_text(seconds: float) -> str:
    try:
        return datetime.fromtimestamp(seconds, UTC).strftime("%Y-%m-%d %H:%M:%S")
    except (OverflowError, OSError, ValueError):
        return str(seconds)
