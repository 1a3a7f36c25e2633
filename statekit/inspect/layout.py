"""The page shell every inspector page is drawn in, and its one escaping rule.

Pages are server-rendered HTML built with MarkupSafe (`html`, `escape`): a `Markup`
template's `format` escapes every argument that is not already `Markup`, so a value
from the store can only reach the page escaped, and a fragment built by `html` can be
passed on whole. MarkupSafe rather than Jinja2 templates: the pages are small functions
of the store's rows, the escaping is the same (Jinja2's autoescape *is* MarkupSafe),
and there are no template files to ship, look up or keep in step with the code. No
front-end dependency and no build step: one stylesheet and one script, served from
`/static/`, so that the Content-Security-Policy can forbid every inline script and
style (`script-src 'self'; style-src 'self'`) and no inline event handler is written.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from pathlib import Path
from urllib.parse import quote, urlencode

from markupsafe import Markup, escape
from starlette.responses import HTMLResponse

from statekit.inspect.live import POLL_INTERVAL_MS, Live

__all__ = [
    "STATIC_FOLDER",
    "Markup",
    "chart_href",
    "error_page",
    "escape",
    "html",
    "instance_href",
    "join",
    "page",
    "query_url",
]

STATIC_FOLDER = Path(__file__).with_name("static")
"""The stylesheet and script the pages load (`/static/inspect.css`, `/static/inspect.js`)."""

NAVIGATION = (("instances", "/", "Instances"), ("charts", "/charts", "Charts"))
"""The header's links: (section, path, label)."""


def html(template: str, *values: object, **named: object) -> Markup:
    """`template` (trusted markup written in the code) with `values` escaped into its
    `{}` fields; a value that is `Markup` (built by `html`) is kept as it is."""
    return Markup(template).format(*values, **named)


def join(parts: Iterable[Markup], separator: str = "") -> Markup:
    """The fragments `parts` one after another (each already safe)."""
    return Markup(separator).join(parts)


def query_url(path: str, params: Mapping[str, object]) -> str:
    """`path` with `params` (those not None or "") as its query string, for links and
    the live endpoint; escaped again where it lands in an attribute (`html`)."""
    kept = {k: str(v) for k, v in params.items() if v is not None and v != ""}
    return path + ("?" + urlencode(kept) if kept else "")


def page(
    title: str,
    body: Markup,
    *,
    section: str = "",
    live: Live | None = None,
    status_code: int = 200,
) -> HTMLResponse:
    """The whole page: `title` (escaped), the header's navigation with `section`
    ("instances" or "charts") marked current, and `body`. `live` (`live.current(...)`):
    the script polls `/live` with its scope and redraws the page's `data-live-region`
    elements when the cursor moves past the one the page was drawn at. None: the page
    does not update itself."""
    links = join(
        html(
            '<a href="{}"{}>{}</a>',
            path,
            Markup(' aria-current="page"') if name == section else Markup(""),
            label,
        )
        for name, path, label in NAVIGATION
    )
    live_attribute = (
        html(
            ' data-live="{}" data-live-cursor="{}" data-live-interval="{}"',
            query_url("/live", live.params),
            live.cursor,
            POLL_INTERVAL_MS,
        )
        if live is not None
        else Markup("")
    )
    document = html(
        "<!doctype html>\n"
        '<html lang="en"><head><meta charset="utf-8">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        "<title>{title} · statekit inspect</title>"
        '<link rel="icon" href="/static/favicon.svg" type="image/svg+xml">'
        '<link rel="stylesheet" href="/static/inspect.css">'
        '<script src="/static/inspect.js" defer></script>'
        "</head><body{live}>"
        '<header><a class="brand" href="/">statekit inspect</a><nav>{links}</nav>'
        '<span class="live-status" data-live-status></span></header>'
        "<main>{body}</main></body></html>\n",
        title=title,
        live=live_attribute,
        links=links,
        body=body,
    )
    return HTMLResponse(str(document), status_code=status_code)


def error_page(status_code: int, title: str, detail: str) -> HTMLResponse:
    """A page saying what could not be shown and why (`detail` escaped)."""
    body = html('<h1>{}</h1><p class="error">{}</p>', title, detail)
    return page(title, body, status_code=status_code)


def instance_href(instance_id: str) -> str:
    """The address of one instance's page (`instance_routes`)."""
    return "/instances/" + quote(instance_id, safe="")


def chart_href(name: str, version: int | None = None) -> str:
    """The address of one chart's page (`chart_routes`), at `version` or its newest."""
    return "/charts/" + quote(name, safe="") + ("" if version is None else f"/{version}")
