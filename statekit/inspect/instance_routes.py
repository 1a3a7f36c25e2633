"""One instance's page, `GET /instances/{instance_id}` (a placeholder until its own page
is built: the instance's chart, state and version)."""

from __future__ import annotations

from starlette.requests import Request
from starlette.responses import HTMLResponse
from starlette.routing import BaseRoute, Route

from statekit.inspect import live
from statekit.inspect.context import Inspector
from statekit.inspect.layout import chart_href, error_page, html, page


def routes(inspector: Inspector) -> list[BaseRoute]:
    """`GET /instances/{instance_id}`."""

    def instance_page(request: Request) -> HTMLResponse:
        instance_id = request.path_params["instance_id"]
        store = inspector.store()
        now = live.current(store, instance_id)
        row = store.execute(
            "SELECT chart_name, chart_version, configuration, version FROM statekit_instances "
            "WHERE instance_id = ?",
            (instance_id,),
        ).fetchone()
        if row is None:
            return error_page(404, "No such instance", f"no instance {instance_id!r} in the store")
        name, version, configuration, sequence = row
        body = html(
            '<h1>Instance <code>{}</code></h1><section id="instance-summary" data-live-region>'
            '<p>Chart <a href="{}">{} v{}</a>, version <span class="mono" data-version>{}</span>'
            "</p><p>State <code data-configuration>{}</code></p></section>",
            instance_id,
            chart_href(name, version),
            name,
            version,
            sequence,
            configuration,
        )
        return page(f"Instance {instance_id}", body, section="instances", live=now)

    return [Route("/instances/{instance_id:path}", instance_page, methods=["GET"])]
