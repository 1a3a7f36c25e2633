"""examples/fastapi_orders under an ASGI client, on SQLite and on PostgreSQL: orders placed
and advanced, each request's rows and the order's state machine committed together."""

from __future__ import annotations

import asyncio
import importlib.util
import sys
from collections.abc import Awaitable, Callable
from pathlib import Path
from types import ModuleType
from typing import Any

import httpx

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "fastapi_orders"


def service() -> ModuleType:
    """The example's module, loaded from its file as `uvicorn` would import it."""
    spec = importlib.util.spec_from_file_location("orders_service", EXAMPLE / "orders_service.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules.setdefault("orders_service", module)
    spec.loader.exec_module(module)
    return module


Client = httpx.AsyncClient


def run(url: str, scenario: Callable[[Client], Awaitable[Any]]) -> Any:
    """`scenario(client)` against the app over `url`, with its lifespan (the runner opened
    and closed around it)."""
    app = service().create_app(url)

    async def main() -> Any:
        async with app.router.lifespan_context(app):
            transport = httpx.ASGITransport(app=app, raise_app_exceptions=False)
            async with httpx.AsyncClient(transport=transport, base_url="http://shop") as client:
                return await scenario(client)

    return asyncio.run(main())


def test_an_order_from_placing_to_delivery(store_url: str) -> None:
    async def scenario(client: Client) -> None:
        placed = await client.post("/orders", json={"order_id": "o-1", "total": 2500})
        assert placed.status_code == 201, placed.text
        assert placed.json() == {"order_id": "o-1", "state": "placed", "version": 1}
        again = await client.post("/orders", json={"order_id": "o-1", "total": 2500})
        assert again.status_code == 409

        wrong = await client.post(
            "/orders/o-1/events",
            json={"event_id": "pay-1", "type": "PaymentReceived", "payload": {"amount": 100}},
        )
        assert wrong.json()["status"] == "REJECTED" and wrong.json()["reason"] == "WRONG_AMOUNT"
        for event_id, kind, payload in [
            ("pay-2", "PaymentReceived", {"amount": 2500}),
            ("ship-1", "OrderShipped", {"carrier": "post"}),
        ]:
            done = await client.post(
                "/orders/o-1/events",
                json={"event_id": event_id, "type": kind, "payload": payload},
            )
            assert done.json()["status"] == "APPLIED", done.text
        redelivered = await client.post(
            "/orders/o-1/events",
            json={"event_id": "ship-1", "type": "OrderShipped", "payload": {"carrier": "post"}},
        )
        assert redelivered.json() == {  # a redelivery is recognised, and changes nothing
            "status": "ALREADY_APPLIED", "reason": None, "state": "shipped", "version": 3,
        }  # fmt: skip

        row = (await client.get("/orders/o-1")).json()
        assert row == {"order_id": "o-1", "total": 2500, "state": "shipped", "version": 3}
        history = (await client.get("/orders/o-1/history")).json()
        assert [(e["sequence"], e["event_id"], e["type"]) for e in history] == [
            (1, "o-1/placed", "OrderPlaced"),
            (2, "pay-2", "PaymentReceived"),
            (3, "ship-1", "OrderShipped"),
        ]
        assert (await client.get("/orders/nobody/history")).status_code == 404
        unknown = await client.post(
            "/orders/nobody/events", json={"event_id": "e", "type": "OrderDelivered"}
        )
        assert unknown.status_code == 404

    run(store_url, scenario)


def test_a_request_that_fails_after_the_runner_wrote_leaves_neither(store_url: str) -> None:
    """The chart accepts a total of 0, the shop's table refuses it (CHECK total > 0) after
    the instance and its event were written in the request's transaction: the request
    is refused (422) and neither the order row nor the instance is stored."""

    async def scenario(client: Client) -> list[int]:
        failed = await client.post("/orders", json={"order_id": "o-0", "total": 0})
        assert "not positive" in failed.text
        gone = [(await client.get(f"/orders/o-0{path}")).status_code for path in ("", "/history")]
        placed = await client.post("/orders", json={"order_id": "o-0", "total": 10})
        return [failed.status_code, *gone, placed.status_code]

    assert run(store_url, scenario) == [422, 404, 404, 201]  # o-0 placed afresh


def test_orders_placed_and_advanced_at_once(store_url: str) -> None:
    async def scenario(client: Client) -> list[tuple[str, int]]:
        async def one(n: int) -> tuple[str, int]:
            placed = await client.post("/orders", json={"order_id": f"o-{n}", "total": n + 1})
            assert placed.status_code == 201, placed.text
            paid = await client.post(
                f"/orders/o-{n}/events",
                json={"event_id": f"pay-{n}", "type": "PaymentReceived",
                      "payload": {"amount": n + 1}},
            )  # fmt: skip
            assert paid.json()["status"] == "APPLIED", paid.text
            row = (await client.get(f"/orders/o-{n}")).json()
            return row["state"], len((await client.get(f"/orders/o-{n}/history")).json())

        return list(await asyncio.gather(*(one(n) for n in range(20))))

    assert run(store_url, scenario) == [("paid", 2)] * 20
