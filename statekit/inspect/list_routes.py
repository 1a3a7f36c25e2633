"""The instances list, `GET /` (the newest instances first)."""

from __future__ import annotations

from starlette.requests import Request
from starlette.responses import HTMLResponse
from starlette.routing import BaseRoute, Route

from statekit.inspect import live
from statekit.inspect.context import Inspector
from statekit.inspect.layout import chart_href, html, instance_href, join, page

PAGE_SIZE = 50


def routes(inspector: Inspector) -> list[BaseRoute]:
    """`GET /`."""

    def instance_list(request: Request) -> HTMLResponse:
        store = inspector.store()
        now = live.current(store)
        rows = store.execute(
            "SELECT instance_id, chart_name, chart_version, configuration, version, updated_at "
            "FROM statekit_instances ORDER BY updated_at DESC, instance_id LIMIT ?",
            (PAGE_SIZE,),
        ).fetchall()
        lines = join(
            html(
                '<tr><td><a href="{}">{}</a></td><td><a href="{}">{} v{}</a></td>'
                "<td><code>{}</code></td><td>{}</td></tr>",
                instance_href(instance_id),
                instance_id,
                chart_href(name, version),
                name,
                version,
                configuration,
                sequence,
            )
            for instance_id, name, version, configuration, sequence, _ in rows
        )
        body = html(
            '<h1>Instances</h1><table id="instances" data-live-region><thead><tr>'
            "<th>Instance</th><th>Chart</th><th>State</th><th>Version</th></tr></thead>"
            "<tbody>{}</tbody></table>",
            lines,
        )
        return page("Instances", body, section="instances", live=now)

    return [Route("/", instance_list, methods=["GET"])]
