"""The charts' pages: `GET /charts` (every chart version the store knows, and those given
with `--chart`) and `GET /charts/{name}[/{version}]` (one version, the newest when none
is named: `chart_page`).

A chart version is drawn and analysed from the chart given with `--chart` when it
has the digest the store recorded, else from the YAML source the store kept
(`chart_lookup`); a version with neither is listed, and its page says what to
pass.
"""

from __future__ import annotations

from collections.abc import Mapping

from starlette.requests import Request
from starlette.responses import HTMLResponse
from starlette.routing import BaseRoute, Route

from statekit.inspect import live
from statekit.inspect.chart_lookup import chart_versions
from statekit.inspect.chart_page import chart_body
from statekit.inspect.chart_summary import analysis
from statekit.inspect.context import Inspector
from statekit.inspect.distribution import distribution
from statekit.inspect.layout import chart_href, error_page, html, join, page
from statekit.runner.store.rows import ChartRow


def routes(inspector: Inspector) -> list[BaseRoute]:
    """`GET /charts`, `GET /charts/{name}`, `GET /charts/{name}/{version}`."""

    def chart_list(request: Request) -> HTMLResponse:
        stored = {(row.name, row.version): row for row in inspector.store().charts()}
        keys = sorted(set(stored) | set(inspector.charts))
        items = join(
            html(
                '<tr><td><a href="{}">{}</a></td><td>{}</td><td>{}</td></tr>',
                chart_href(name, version),
                name,
                version,
                _origin(inspector, stored, name, version),
            )
            for name, version in keys
        )
        body = html(
            '<h1>Charts</h1><table class="charts"><thead><tr><th>chart</th><th>version</th>'
            "<th>source</th></tr></thead><tbody>{}</tbody></table>",
            items,
        )
        return page("Charts", body, section="charts")

    def chart_page(request: Request) -> HTMLResponse:
        name = request.path_params["name"]
        asked = request.path_params.get("version")
        store = inspector.store()
        now = live.current(store)
        given = list(inspector.charts.values())
        usable = chart_versions(store, given, name)
        known = {row.version for row in store.charts() if row.name == name} | set(usable)
        if not known:
            return error_page(404, "No such chart", f"no chart {name!r} in the store or given")
        version = max(known) if asked is None else asked
        if version not in known:
            return error_page(
                404, "No such chart version", f"chart {name!r} has no version {version}"
            )
        chart = usable.get(version)
        if chart is None:
            return error_page(
                404,
                "Chart source not available",
                f"the store knows chart {name!r} version {version} but not its source: "
                "pass the chart with --chart",
            )
        source = "given" if any(c.digest == chart.digest for c in given) else "stored"
        versions = [(v, v in usable) for v in sorted(known)]
        body = chart_body(chart, source, versions, distribution(store, chart), analysis(chart))
        return page(f"Chart {name} v{version}", body, section="charts", live=now)

    return [
        Route("/charts", chart_list, methods=["GET"]),
        Route("/charts/{name}", chart_page, methods=["GET"]),
        Route("/charts/{name}/{version:int}", chart_page, methods=["GET"]),
    ]


def _origin(
    inspector: Inspector, stored: Mapping[tuple[str, int], ChartRow], name: str, version: int
) -> str:
    """Where the page of this chart version takes its chart from."""
    given = inspector.chart(name, version)
    row = stored.get((name, version))
    if row is None:
        return "given with --chart (no instance in the store yet)"
    if given is not None and given.digest == row.digest:
        return "given with --chart"
    if given is not None:
        return "given with --chart, but with another digest than the store's (not used)"
    return "source kept in the store" if row.source is not None else "source not in the store"
