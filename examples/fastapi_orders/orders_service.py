"""An order service on FastAPI: each request's own rows and the order's state machine
commit in ONE transaction, through statekit's async runner.

    uvicorn --factory orders_service:app_from_environment   # STATEKIT_DB=sqlite:///shop.db

- `POST /orders` `{"order_id": "o-1", "total": 2500}` inserts the shop's `orders` row and
  creates the order's instance of `order.yaml` with its `OrderPlaced` event;
- `POST /orders/{id}/events` `{"event_id": …, "type": …, "payload": {…}}` applies one
  event and updates the `orders` row's `state` and `version` to match;
- `GET /orders/{id}` is the `orders` row, `GET /orders/{id}/history` the accepted events.

Each write request opens its own transaction on its own async connection (a psycopg
`AsyncConnection` on PostgreSQL, aiosqlite on SQLite), writes the shop's row, and
writes statekit's rows in it with `AsyncRunner.in_transaction`: a failure anywhere
(a refused event, a crash before the commit) leaves neither. Read requests use the
runner (`history`) and a plain read of the shop's table.
"""

from __future__ import annotations

import os
import sqlite3
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import aiosqlite
import psycopg
from fastapi import FastAPI, HTTPException, Request
from fastapi.responses import JSONResponse
from pydantic import BaseModel

import statekit
from statekit.aio import AsyncRunner
from statekit.runner.errors import (
    StoreBusyError,
    StoreUnavailableError,
    TransactionAbortedError,
    UnknownInstanceError,
)
from statekit.runner.store import open_store
from statekit.runner.store.connection_policy import TransactionInterrupted, split_policy

UNAVAILABLE = (
    StoreUnavailableError,  # the server stayed away for the store URL's retry_for
    TransactionInterrupted,  # the connection was lost in the request's transaction
    TransactionAbortedError,  # the request's transaction cannot commit: run it again
    StoreBusyError,
    sqlite3.OperationalError,  # the shop's own connection
    psycopg.OperationalError,
)
"""What a request answers 503 to: nothing of it was committed, or (a lost COMMIT) the
event's ID tells on a retry; the client sends the same request again."""

CHART = Path(__file__).with_name("order.yaml")
ORDERS_TABLE = (
    "CREATE TABLE IF NOT EXISTS orders (order_id TEXT PRIMARY KEY, "
    "total INTEGER NOT NULL CHECK (total > 0), state TEXT NOT NULL, version INTEGER NOT NULL)"
)


class NewOrder(BaseModel):
    order_id: str
    total: int


class OrderEvent(BaseModel):
    event_id: str
    type: str
    payload: dict[str, Any] = {}
    expected_version: int | None = None


@dataclass
class Transaction:
    """The request's transaction: its async connection, and its statements (`?`
    placeholders) and reads on it."""

    conn: Any
    execute: Callable[[str, tuple[Any, ...]], Awaitable[None]]
    fetch_one: Callable[[str, tuple[Any, ...]], Awaitable[tuple[Any, ...] | None]]


def transactions(url: str) -> Callable[[], Any]:
    """A maker of the request's transaction on the shop's database at `url`: committed
    when its block ends, rolled back when it raises."""

    # statekit's own parameters (`?retry_for=`, `?connect_timeout=`) are not libpq's
    conninfo = split_policy(url)[1]

    @asynccontextmanager
    async def postgres() -> AsyncIterator[Transaction]:
        async with await psycopg.AsyncConnection.connect(conninfo, autocommit=True) as conn:

            async def execute(sql: str, params: tuple[Any, ...]) -> None:
                await conn.execute(sql.replace("?", "%s"), params)

            async def fetch_one(sql: str, params: tuple[Any, ...]) -> tuple[Any, ...] | None:
                cursor = await conn.execute(sql.replace("?", "%s"), params)
                return await cursor.fetchone()

            async with conn.transaction():  # statekit's rows join it
                yield Transaction(conn, execute, fetch_one)

    @asynccontextmanager
    async def sqlite() -> AsyncIterator[Transaction]:
        path = url.removeprefix("sqlite:///").partition("?")[0]
        # check_same_thread=False: the runner's thread writes on it while the request awaits
        async with aiosqlite.connect(path, isolation_level=None, check_same_thread=False) as conn:
            await conn.execute("PRAGMA busy_timeout = 10000")

            async def execute(sql: str, params: tuple[Any, ...]) -> None:
                await conn.execute(sql, params)

            async def fetch_one(sql: str, params: tuple[Any, ...]) -> tuple[Any, ...] | None:
                async with conn.execute(sql, params) as cursor:
                    row = await cursor.fetchone()
                return None if row is None else tuple(row)

            await conn.execute("BEGIN IMMEDIATE")  # the write lock first: SQLite's one writer
            try:
                yield Transaction(conn, execute, fetch_one)
            except BaseException:
                await conn.rollback()
                raise
            await conn.commit()

    return sqlite if url.startswith("sqlite") else postgres


def create_app(url: str, *, connections: int = 4) -> FastAPI:
    """The service over the database at `url` (statekit's tables and the shop's)."""
    chart = statekit.load(CHART)
    transaction = transactions(url)
    runners: dict[str, AsyncRunner] = {}

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        with open_store(url) as store, store.write():  # statekit's tables, then the shop's
            store.execute(ORDERS_TABLE)
        runners["orders"] = await AsyncRunner.open(chart, url, connections=connections)
        try:
            yield
        finally:
            await runners.pop("orders").close()

    app = FastAPI(title="orders", lifespan=lifespan)

    async def unavailable(request: Request, exc: Exception) -> JSONResponse:
        return JSONResponse({"detail": f"the database is unavailable: {exc}"}, status_code=503)

    for kind in UNAVAILABLE:
        app.add_exception_handler(kind, unavailable)

    @app.post("/orders", status_code=201)
    async def place(order: NewOrder) -> dict[str, Any]:
        runner = runners["orders"]
        async with transaction() as t:
            found = await t.fetch_one("SELECT 1 FROM orders WHERE order_id = ?", (order.order_id,))
            if found is not None:
                raise HTTPException(409, f"order {order.order_id!r} exists")
            async with runner.in_transaction(t.conn) as tx:
                await tx.create(order.order_id)
                outcome = await tx.apply(
                    order.order_id, f"{order.order_id}/placed", "OrderPlaced",
                    {"total": order.total},
                )  # fmt: skip
            if not outcome.applied:  # raising rolls the order row and the instance back
                raise HTTPException(422, outcome.message or outcome.reason or "refused")
            state = ",".join(outcome.state.leaves)
            try:
                await t.execute(
                    "INSERT INTO orders VALUES (?, ?, ?, ?)",
                    (order.order_id, order.total, state, outcome.version),
                )
            except (sqlite3.IntegrityError, psycopg.IntegrityError) as exc:
                # the shop's own rule (CHECK total > 0), after the runner wrote: raising
                # rolls back the instance and its event with the request's transaction
                raise HTTPException(
                    422, "the shop refuses an order whose total is not positive"
                ) from exc
        return {"order_id": order.order_id, "state": state, "version": outcome.version}

    @app.post("/orders/{order_id}/events")
    async def advance(order_id: str, event: OrderEvent) -> dict[str, Any]:
        runner = runners["orders"]
        async with transaction() as t:
            async with runner.in_transaction(t.conn) as tx:
                try:
                    outcome = await tx.apply(
                        order_id, event.event_id, event.type, event.payload,
                        event.expected_version,
                    )  # fmt: skip
                except UnknownInstanceError as exc:
                    raise HTTPException(404, str(exc)) from exc
                except ValueError as exc:  # an event the chart does not declare, a bad payload
                    raise HTTPException(422, str(exc)) from exc
            state = ",".join(outcome.state.leaves)
            if outcome.applied:
                await t.execute(
                    "UPDATE orders SET state = ?, version = ? WHERE order_id = ?",
                    (state, outcome.version, order_id),
                )
        # a refusal is committed too: its audit row (`statekit rejections`) is the record
        return {
            "status": outcome.status.value,
            "reason": outcome.reason,
            "state": state,
            "version": outcome.version,
        }

    @app.get("/orders/{order_id}")
    async def order(order_id: str) -> dict[str, Any]:
        async with transaction() as t:
            row = await t.fetch_one(
                "SELECT order_id, total, state, version FROM orders WHERE order_id = ?",
                (order_id,),
            )
        if row is None:
            raise HTTPException(404, f"no order {order_id!r}")
        return dict(zip(("order_id", "total", "state", "version"), row, strict=True))

    @app.get("/orders/{order_id}/history")
    async def history(order_id: str) -> list[Mapping[str, Any]]:
        try:
            events = await runners["orders"].history(order_id)
        except UnknownInstanceError as exc:
            raise HTTPException(404, str(exc)) from exc
        return [
            {"sequence": e.sequence, "event_id": e.event_id, "type": e.type,
             "payload": e.payload, "status": e.status}
            for e in events
        ]  # fmt: skip

    return app


def app_from_environment() -> FastAPI:
    """`create_app` over the URL in `STATEKIT_DB` (for `uvicorn --factory`)."""
    return create_app(os.environ.get("STATEKIT_DB", "sqlite:///shop.db"))
