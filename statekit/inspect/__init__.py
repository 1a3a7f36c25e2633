"""`statekit inspect`: a local, read-only web app over a durable store (needs the
`statekit[inspect]` extra: Starlette, uvicorn, MarkupSafe).

    from statekit.inspect.app import create_app
    from statekit.inspect.context import Inspector, charts_by_version
    app = create_app(Inspector("sqlite:///build/demo.db", charts_by_version(charts)))

The interface the page modules share:

- `context.Inspector` (frozen): `store()` gives this server thread's read-only `Store`
  (`open_read_only_store`; run SQL with `store.execute(sql, params)`, `?`
  placeholders, both dialects; `store.read()` for one snapshot over several
  queries); `chart(name, version)` the chart given with `--chart` or None;
  `charts` all of them by (name, version); `token`; `clock()` epoch seconds for
  "time left"; `display_url` the store's URL without a password.
- Route modules each expose `routes(inspector) -> list[BaseRoute]`, assembled by
  `app.create_app`: `list_routes` (`GET /`, the instances list), `instance_routes`
  (`GET /instances/{instance_id:path}`), `chart_routes` (`GET /charts`,
  `GET /charts/{name}`, `GET /charts/{name}/{version:int}`), `live` (`GET /live`).
  Only GET routes: `security.InspectorGuard` refuses every other method anyway.
  Endpoints are plain (sync) functions: Starlette runs them in its thread pool, where
  `inspector.store()` is per thread. An exception escaping an endpoint becomes a 503
  page saying the store could not be read (and the connections are opened again).
- `layout`: `page(title, body, section=, live=, status_code=)` the whole page;
  `html(template, *values)` a `Markup` with every value escaped (the only way values
  reach a page); `join(fragments)`; `query_url(path, params)`; `instance_href(id)`,
  `chart_href(name, version)` the pages' addresses; `error_page(status, title,
  detail)`. Static files: `static/inspect.css`, `static/inspect.js` (no inline script
  or style anywhere: the CSP forbids it; a page needing behaviour adds it to
  `inspect.js`, keyed on `data-` attributes).
- `live`: `current(store, instance_id=None)` read *before* a page's own queries, and
  passed as `page(..., live=...)`; each element with an `id` and `data-live-region`
  is then redrawn in place when the store changes (the script polls `GET /live`,
  `GET /live?instance=ID`, every 2 s while the tab is visible) and `document` gets a
  `statekit:redrawn` event.
- `security`: the headers (`CONTENT_SECURITY_POLICY`), the token (Bearer header, or
  `?token=` once, which sets an HttpOnly SameSite=Strict cookie).

Tests drive it in headless Chromium through `tests/inspect/browser.py`.
"""
