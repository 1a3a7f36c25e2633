"""`create_app(inspector)`: the inspector's Starlette application.

Routes come from the route modules (each `routes(inspector) -> list[BaseRoute]`):
`list_routes` (the instances list), `instance_routes` (one instance), `chart_routes`
(the charts), `live` (`/live`), and `/static/` (the one stylesheet and script). Every
request passes `security.InspectorGuard` (read-only methods, the token, the security
headers). A store that cannot be read answers a page saying so (503), never a
traceback; the thread's connection is then opened again on the next request.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from starlette.applications import Starlette
from starlette.exceptions import HTTPException
from starlette.middleware import Middleware
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Mount
from starlette.staticfiles import StaticFiles

from statekit.inspect import chart_routes, instance_routes, list_routes, live
from statekit.inspect.context import Inspector
from statekit.inspect.layout import STATIC_FOLDER, error_page
from statekit.inspect.security import InspectorGuard


def create_app(inspector: Inspector) -> Starlette:
    """The inspector over `inspector`'s store (module docstring)."""

    def unreadable(request: Request, exc: Exception) -> Response:
        inspector.forget_stores()  # a lost connection: the next request opens a new one
        return error_page(
            503,
            "The store cannot be read",
            f"The store at {inspector.display_url} could not be read: {exc}. The "
            "inspector opens it again on the next request.",
        )

    def not_found(request: Request, exc: Exception) -> Response:
        if isinstance(exc, HTTPException) and exc.status_code != 404:
            return error_page(exc.status_code, "This request cannot be answered", exc.detail)
        return error_page(
            404, "No such page", f"nothing at {request.url.path!r}: see the instances or charts"
        )

    @asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        yield
        inspector.close()

    return Starlette(
        routes=[
            *list_routes.routes(inspector),
            *instance_routes.routes(inspector),
            *chart_routes.routes(inspector),
            *live.routes(inspector),
            Mount("/static", StaticFiles(directory=STATIC_FOLDER), name="static"),
        ],
        middleware=[Middleware(InspectorGuard, token=inspector.token)],
        exception_handlers={Exception: unreadable, HTTPException: not_found},
        lifespan=lifespan,
    )
