"""Live updates: pages redraw themselves when the store changes, by polling `/live`.

`GET /live` answers `{"cursor": "..."}`, a short text that changes whenever something the
page shows may have changed: for the whole store (no parameter) the newest instance
update and the newest rejection; for one instance (`?instance=ID`) its version, its last
update and its newest rejection. Two cheap queries, each answered by an index.

A page opts in with `layout.page(..., live=current(store, ...))`: the body then carries
`data-live` (the `/live` address with the page's scope) and `data-live-cursor` (the
cursor read *before* the page's own queries, so a change in between redraws it once
more rather than being missed). The static script polls every `POLL_INTERVAL_MS`
(`data-live-interval`) while the tab is visible and not at all while it is hidden;
when the cursor differs it fetches the page's own address again and replaces each
element marked `data-live-region` (and an `id`) with its new version, then dispatches
`statekit:redrawn` on `document`. Polling rather than server-sent events: nothing is
held open per tab (no connection limit to enforce, nothing left behind by a closed tab),
and a poll costs two indexed queries.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import BaseRoute, Route

from statekit.inspect.context import Inspector
from statekit.runner.store.base import Store

POLL_INTERVAL_MS = 2000
"""How often a visible page asks `/live` whether the store changed."""


@dataclass(frozen=True)
class Live:
    """A page's live scope (the `/live` parameters) and the cursor it was drawn at."""

    cursor: str
    params: Mapping[str, str] = field(default_factory=dict)


def cursor(store: Store, instance_id: str | None = None) -> str:
    """The live cursor of the whole store (`instance_id` None) or of one instance."""
    if instance_id is None:
        updated = store.execute("SELECT max(updated_at) FROM statekit_instances").fetchone()
        rejected = store.execute("SELECT max(id) FROM statekit_rejections").fetchone()
        return f"{updated[0]}:{rejected[0]}"
    row = store.execute(
        "SELECT version, updated_at FROM statekit_instances WHERE instance_id = ?",
        (instance_id,),
    ).fetchone()
    rejected = store.execute(
        "SELECT max(id) FROM statekit_rejections WHERE instance_id = ?", (instance_id,)
    ).fetchone()
    return f"{row[0] if row else None}:{row[1] if row else None}:{rejected[0]}"


def current(store: Store, instance_id: str | None = None) -> Live:
    """The `Live` a page passes to `layout.page`: its scope and the cursor now."""
    params = {} if instance_id is None else {"instance": instance_id}
    return Live(cursor(store, instance_id), params)


def routes(inspector: Inspector) -> list[BaseRoute]:
    """`GET /live[?instance=ID]`."""

    def live(request: Request) -> JSONResponse:
        instance_id = request.query_params.get("instance")
        return JSONResponse({"cursor": cursor(inspector.store(), instance_id)})

    return [Route("/live", live, methods=["GET"])]
