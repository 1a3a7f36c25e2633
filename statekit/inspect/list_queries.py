"""The instances list's read queries: one page of instances under a `ListQuery`, what each
shown instance has (rejections, conflicts, timers, outbox), the counts per state, and
the search by instance ID, event ID or idempotency key.

Every query is read-only SQL both dialects run (`?` placeholders, `store.execute`) and is
bounded: a page is `PAGE_SIZE` rows at an offset of at most `MAX_OFFSET`, the badges
are read for the page's instances only, the counts per state group the instance rows
(one row per instance, not per event) and keep `MAX_CONFIGURATIONS` groups, a search
keeps `MAX_HITS` hits. What each costs on both dialects is in docs/inspect.md.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from statekit.compiler.canonical import canonical_string
from statekit.runner.json_text import parse_json
from statekit.runner.store.base import Store

PAGE_SIZE = 50
"""Instances per page."""
MAX_OFFSET = 10_000
"""The deepest offset a page may start at (200 pages): beyond it a filter finds faster."""
MAX_CONFIGURATIONS = 200
"""The most distinct configurations the counts per state read."""
MAX_HITS = 50
"""The most search hits shown."""

SORTS: dict[str, str] = {
    "activity": "updated_at",
    "instance": "instance_id",
    "chart": "chart_name",
    "state": "configuration",
    "version": "version",
}
"""The sort keys a list may ask for → the column (instance ID breaks ties)."""
TIMER_FILTERS = ("armed", "overdue")
OUTBOX_FILTERS = ("pending", "dead")


@dataclass(frozen=True)
class ListQuery:
    """Which instances the list shows, in which order, from where (all optional)."""

    chart: str | None = None
    chart_version: int | None = None
    state: str | None = None
    rejections: bool = False
    conflicts: bool = False
    timers: str | None = None  # TIMER_FILTERS
    outbox: str | None = None  # OUTBOX_FILTERS
    active_from: float | None = None  # epoch seconds, inclusive
    active_to: float | None = None  # epoch seconds, exclusive
    sort: str = "activity"
    descending: bool = True
    offset: int = 0


@dataclass(frozen=True)
class InstanceLine:
    """One instance of a page, with what the list shows of it."""

    instance_id: str
    chart_name: str
    chart_version: int
    configuration: tuple[str, ...]
    version: int
    updated_at: float
    rejections: int = 0
    conflicts: int = 0
    timers: int = 0
    next_due_ms: int | None = None
    pending: int = 0
    dead: int = 0


@dataclass(frozen=True)
class ListPage:
    """One page of the list: its lines and whether a next page exists."""

    lines: tuple[InstanceLine, ...]
    has_next: bool


@dataclass(frozen=True)
class SearchHit:
    """An instance a search text names: as its ID, an event ID or an idempotency key."""

    instance_id: str
    kind: str  # "instance", "event", "rejected event", "idempotency key"
    event_id: str | None = None
    sequence: int | None = None


@dataclass(frozen=True)
class StateCounts:
    """How many instances of a chart (and version; all charts when none is chosen) each
    state is active in."""

    by_state: tuple[tuple[str, int], ...]
    total: int
    configurations_cut: bool = field(default=False)


def _like_literal(text: str) -> str:
    """`text` matched literally by LIKE … ESCAPE '\\'."""
    return text.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")


RARE = 1_000
"""Below this many rows behind a filter (rejections, timers, messages), the list starts
from those rows; from it on, it probes each instance in the list's order and stops at
the page's last row (figures: bench/inspect_pages.py, docs/inspect.md)."""


def _related(store: Store, table: str, condition: str, params: list[Any]) -> tuple[str, list[Any]]:
    """The clause "the instance has a row of `table` meeting `condition`" (over `x`), in the
    form that is cheap for how many such rows there are (`RARE`)."""
    where = f" WHERE {condition}" if condition else ""
    (few,) = store.execute(
        f"SELECT count(*) FROM (SELECT 1 FROM {table} x{where} LIMIT ?) AS counted",
        (*params, RARE),
    ).fetchone()
    if few < RARE:  # start from those rows
        return f"i.instance_id IN (SELECT x.instance_id FROM {table} x{where})", params
    linked = "x.instance_id = i.instance_id" + (f" AND {condition}" if condition else "")
    return f"EXISTS (SELECT 1 FROM {table} x WHERE {linked})", params


def _where(store: Store, query: ListQuery, now_ms: int) -> tuple[str, list[Any]]:
    """The WHERE clause (over `statekit_instances i`) and its parameters."""
    clauses: list[str] = []
    params: list[Any] = []
    if query.chart is not None:
        clauses.append("i.chart_name = ?")
        params.append(query.chart)
    if query.chart_version is not None:
        clauses.append("i.chart_version = ?")
        params.append(query.chart_version)
    if query.state is not None:
        clauses.append("i.configuration LIKE ? ESCAPE '\\'")
        params.append("%" + _like_literal(canonical_string(query.state)) + "%")
    related: list[tuple[str, str, list[Any]]] = []
    if query.rejections:
        related.append(("statekit_rejections", "", []))
    if query.conflicts:
        related.append(("statekit_rejections", "x.status = 'CONFLICT'", []))
    if query.timers == "armed":
        related.append(("statekit_timers", "", []))
    elif query.timers == "overdue":
        related.append(("statekit_timers", "x.due_ms <= ?", [now_ms]))
    if query.outbox is not None:
        related.append(("statekit_outbox", "x.status = ?", [query.outbox]))
    for table, condition, values in related:
        clause, values = _related(store, table, condition, values)
        clauses.append(clause)
        params += values
    if query.active_from is not None:
        clauses.append("i.updated_at >= ?")
        params.append(query.active_from)
    if query.active_to is not None:
        clauses.append("i.updated_at < ?")
        params.append(query.active_to)
    return (" WHERE " + " AND ".join(clauses) if clauses else ""), params


def list_page(store: Store, query: ListQuery, now_ms: int) -> ListPage:
    """The instances of `query`'s page (`PAGE_SIZE` of them, from its offset), with their
    badges."""
    where, params = _where(store, query, now_ms)
    direction = "DESC" if query.descending else "ASC"
    column = SORTS[query.sort]
    order = f"i.{column} {direction}, i.instance_id {direction}"
    if query.sort == "chart":
        order = f"i.chart_name {direction}, i.chart_version {direction}, i.instance_id {direction}"
    # the page's IDs first (an index holds the sort key and the ID), then their rows
    found = store.execute(
        f"SELECT i.instance_id FROM statekit_instances i{where} ORDER BY {order} LIMIT ? OFFSET ?",
        (*params, PAGE_SIZE + 1, min(max(query.offset, 0), MAX_OFFSET)),
    ).fetchall()
    ids = [row[0] for row in found[:PAGE_SIZE]]
    by_id = {row[0]: row for row in _instance_rows(store, ids)}
    rows = [by_id[instance_id] for instance_id in ids if instance_id in by_id]
    shown = rows
    badges = _badges(store, ids)
    lines = tuple(
        InstanceLine(
            instance_id=row[0],
            chart_name=row[1],
            chart_version=row[2],
            configuration=_configuration(row[3]),
            version=row[4],
            updated_at=row[5],
            **badges.get(row[0], {}),
        )
        for row in shown
    )
    return ListPage(lines, has_next=len(found) > PAGE_SIZE)


def _instance_rows(store: Store, ids: Sequence[str]) -> list[Any]:
    if not ids:
        return []
    marks = ", ".join("?" * len(ids))
    rows: list[Any] = store.execute(
        "SELECT instance_id, chart_name, chart_version, configuration, version, updated_at "
        f"FROM statekit_instances WHERE instance_id IN ({marks})",
        tuple(ids),
    ).fetchall()
    return rows


def _configuration(text: str) -> tuple[str, ...]:
    """The active states of a stored configuration (a damaged one: as its text)."""
    try:
        value = parse_json(text)
    except ValueError:
        return (text,)
    if isinstance(value, list) and all(isinstance(v, str) for v in value):
        return tuple(value)
    return (text,)


def _badges(store: Store, ids: Sequence[str]) -> dict[str, dict[str, Any]]:
    """For each of `ids`: its rejections, conflicts, armed timers (and the next due time),
    pending and dead outbox messages; four grouped queries over the page's IDs."""
    found: dict[str, dict[str, Any]] = {instance_id: {} for instance_id in ids}
    if not ids:
        return found
    marks = ", ".join("?" * len(ids))
    for instance_id, status, count in store.execute(
        f"SELECT instance_id, status, count(*) FROM statekit_rejections "
        f"WHERE instance_id IN ({marks}) GROUP BY instance_id, status",
        tuple(ids),
    ).fetchall():
        key = "conflicts" if status == "CONFLICT" else "rejections"
        found[instance_id][key] = found[instance_id].get(key, 0) + count
    for instance_id, count, due in store.execute(
        f"SELECT instance_id, count(*), min(due_ms) FROM statekit_timers "
        f"WHERE instance_id IN ({marks}) GROUP BY instance_id",
        tuple(ids),
    ).fetchall():
        found[instance_id].update(timers=count, next_due_ms=due)
    for instance_id, status, count in store.execute(
        f"SELECT instance_id, status, count(*) FROM statekit_outbox "
        f"WHERE instance_id IN ({marks}) AND status IN ('pending', 'dead') "
        "GROUP BY instance_id, status",
        tuple(ids),
    ).fetchall():
        found[instance_id][str(status)] = count
    return found


def state_counts(store: Store, query: ListQuery) -> StateCounts:
    """How many instances of `query`'s chart and chart version (all when it names none)
    each state is active in: the instances grouped by configuration, each
    configuration's states counted (a parallel configuration counts once for each of its
    states). The list's other filters narrow the list, not these counts: counting under
    them would read every matching instance, where this reads one index."""
    chosen = ListQuery(chart=query.chart, chart_version=query.chart_version)
    where, params = _where(store, chosen, 0)
    # grouped in the order of the index on (chart, version, configuration): read alone
    rows = store.execute(
        "SELECT i.configuration, count(*) FROM statekit_instances i"
        f"{where} GROUP BY i.chart_name, i.chart_version, i.configuration LIMIT ?",
        (*params, MAX_CONFIGURATIONS + 1),
    ).fetchall()
    counted: Counter[str] = Counter()
    total = 0
    for text, count in rows[:MAX_CONFIGURATIONS]:
        total += count
        for state in _configuration(text):
            counted[state] += count
    ordered = tuple(sorted(counted.items(), key=lambda item: (-item[1], item[0])))
    return StateCounts(ordered, total, configurations_cut=len(rows) > MAX_CONFIGURATIONS)


def search(store: Store, text: str) -> tuple[SearchHit, ...]:
    """The instances `text` names exactly: as an instance ID, an accepted or rejected
    event's ID, or an accepted event's idempotency key (at most `MAX_HITS`)."""
    hits: list[SearchHit] = [
        SearchHit(row[0], "instance")
        for row in store.execute(
            "SELECT instance_id FROM statekit_instances WHERE instance_id = ?", (text,)
        ).fetchall()
    ]
    hits += (
        SearchHit(row[0], "event", row[1], row[2])
        for row in store.execute(
            "SELECT instance_id, event_id, sequence FROM statekit_events WHERE event_id = ? "
            "ORDER BY instance_id LIMIT ?",
            (text, MAX_HITS),
        ).fetchall()
    )
    hits += (
        SearchHit(row[0], "idempotency key", row[1], row[2])
        for row in store.execute(
            "SELECT instance_id, event_id, sequence FROM statekit_events "
            "WHERE idempotency_key = ? ORDER BY instance_id LIMIT ?",
            (text, MAX_HITS),
        ).fetchall()
    )
    hits += (
        SearchHit(row[0], "rejected event", row[1])
        for row in store.execute(
            "SELECT DISTINCT instance_id, event_id FROM statekit_rejections WHERE event_id = ? "
            "ORDER BY instance_id LIMIT ?",
            (text, MAX_HITS),
        ).fetchall()
    )
    return tuple(hits[:MAX_HITS])
