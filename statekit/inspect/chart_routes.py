"""The charts' pages, `GET /charts` and `GET /charts/{name}[/{version}]` (placeholders
until their own pages are built: the charts the store knows and those given with
`--chart`)."""

from __future__ import annotations

from starlette.requests import Request
from starlette.responses import HTMLResponse
from starlette.routing import BaseRoute, Route

from statekit.inspect.context import Inspector
from statekit.inspect.layout import chart_href, error_page, html, join, page


def routes(inspector: Inspector) -> list[BaseRoute]:
    """`GET /charts`, `GET /charts/{name}`, `GET /charts/{name}/{version}`."""

    def chart_list(request: Request) -> HTMLResponse:
        rows = (
            inspector.store()
            .execute(
                "SELECT name, version, digest FROM statekit_charts ORDER BY name, version LIMIT 500"
            )
            .fetchall()
        )
        items = join(
            html('<li><a href="{}">{} v{}</a></li>', chart_href(name, version), name, version)
            for name, version, _ in rows
        )
        return page("Charts", html("<h1>Charts</h1><ul>{}</ul>", items), section="charts")

    def chart_page(request: Request) -> HTMLResponse:
        name = request.path_params["name"]
        version = request.path_params.get("version")
        rows = (
            inspector.store()
            .execute(
                "SELECT version, digest FROM statekit_charts WHERE name = ? ORDER BY version",
                (name,),
            )
            .fetchall()
        )
        shown = [row for row in rows if version is None or row[0] == version]
        if not shown:
            return error_page(404, "No such chart", f"no chart {name!r} in the store")
        given = inspector.chart(name, shown[-1][0])
        body = html(
            "<h1>Chart <code>{}</code> v{}</h1><p>digest <code>{}</code></p><p>{}</p>",
            name,
            shown[-1][0],
            shown[-1][1],
            "given with --chart" if given is not None else "not given with --chart",
        )
        return page(f"Chart {name}", body, section="charts")

    return [
        Route("/charts", chart_list, methods=["GET"]),
        Route("/charts/{name}", chart_page, methods=["GET"]),
        Route("/charts/{name}/{version:int}", chart_page, methods=["GET"]),
    ]
