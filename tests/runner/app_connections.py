"""An application's connection of each kind `Runner.in_transaction` takes, with the
application's own table (`orders`), for the in-transaction tests and their child process.

KINDS: `sqlite3` (SQLite, `BEGIN IMMEDIATE` on an autocommit connection), `sqlite3-legacy`
(SQLite, Python's implicit transactions), `psycopg` (PostgreSQL, psycopg's implicit
transaction), `psycopg-block` (PostgreSQL, `conn.transaction()` on an autocommit
connection), `core` and `orm` (SQLAlchemy `Connection` / `Session`, on either store).
"""

from __future__ import annotations

import contextlib
import sqlite3
from typing import Any

import psycopg
from sqlalchemy import Column, Engine, Integer, String, create_engine, text
from sqlalchemy.orm import DeclarativeBase, Session

SQLITE_KINDS = ("sqlite3", "sqlite3-legacy", "core", "orm")
POSTGRES_KINDS = ("psycopg", "psycopg-block", "core", "orm")


class Base(DeclarativeBase):
    """The application's ORM models."""


class Order(Base):
    """The application's own row, written in the same transaction as the event."""

    __tablename__ = "orders"
    id = Column(String, primary_key=True)
    total = Column(Integer, nullable=False)


def sqlalchemy_url(url: str) -> str:
    """The store URL as SQLAlchemy takes it (psycopg 3 for PostgreSQL)."""
    if url.startswith("postgresql://"):
        return "postgresql+psycopg://" + url[len("postgresql://") :]
    return url


class App:
    """One application connection: `conn` is what `in_transaction` is given."""

    def __init__(self, kind: str, url: str) -> None:
        self.kind, self.url = kind, url
        self.engine: Engine | None = None
        self._block: Any = None
        if kind in ("core", "orm"):
            self.engine = create_engine(sqlalchemy_url(url))
            Base.metadata.create_all(self.engine)
            self.conn: Any = Session(self.engine) if kind == "orm" else self.engine.connect()
            return
        if kind.startswith("sqlite3"):
            path = url[len("sqlite:///") :]
            self.conn = sqlite3.connect(path, timeout=30)  # legacy: implicit transactions
            if kind == "sqlite3":
                self.conn.isolation_level = None  # autocommit: BEGIN IMMEDIATE by hand
        else:
            self.conn = psycopg.connect(url, autocommit=kind == "psycopg-block")
        self.execute("CREATE TABLE IF NOT EXISTS orders (id TEXT PRIMARY KEY, total INTEGER)")
        if kind == "psycopg":  # (sqlite3 runs a CREATE outside any transaction)
            self.conn.commit()

    def execute(self, sql: str, params: tuple[Any, ...] = ()) -> Any:
        """One statement of the application (`?` placeholders)."""
        if isinstance(self.conn, sqlite3.Connection):
            return self.conn.execute(sql, params)
        return self.conn.execute(sql.replace("?", "%s"), params)

    def begin(self) -> None:
        """Begin the application's transaction."""
        if self.kind == "sqlite3":
            self.execute("BEGIN IMMEDIATE")
        elif self.kind == "psycopg-block":
            self._block = self.conn.transaction()
            self._block.__enter__()
        elif self.kind == "core":
            self.conn.begin()
        # sqlite3-legacy, psycopg, orm: begun by their first statement

    def insert_order(self, order_id: str, total: int = 100) -> None:
        """The application's own write."""
        if self.kind == "orm":
            self.conn.add(Order(id=order_id, total=total))
            self.conn.flush()
        elif self.kind == "core":
            self.conn.execute(
                text("INSERT INTO orders (id, total) VALUES (:id, :total)"),
                {"id": order_id, "total": total},
            )
        else:
            self.execute("INSERT INTO orders (id, total) VALUES (?, ?)", (order_id, total))

    def commit(self) -> None:
        """Commit the application's transaction."""
        if self.kind == "sqlite3":
            self.execute("COMMIT")
        elif self.kind == "psycopg-block":
            self._block.__exit__(None, None, None)
        else:
            self.conn.commit()

    def rollback(self) -> None:
        """Roll the application's transaction back."""
        if self.kind == "sqlite3":
            if self.conn.in_transaction:
                self.execute("ROLLBACK")
        elif self.kind == "psycopg-block":
            with contextlib.suppress(psycopg.Rollback):
                self._block.__exit__(psycopg.Rollback, psycopg.Rollback(), None)
        else:
            self.conn.rollback()

    def close(self) -> None:
        """Close the connection (and the engine)."""
        self.conn.close()
        if self.engine is not None:
            self.engine.dispose()


def orders(url: str) -> set[str]:
    """The order IDs committed, read on a connection of its own."""
    if url.startswith("sqlite:///"):
        with contextlib.closing(sqlite3.connect(url[len("sqlite:///") :])) as conn:
            return {r[0] for r in conn.execute("SELECT id FROM orders")}
    with psycopg.connect(url) as conn:
        return {r[0] for r in conn.execute("SELECT id FROM orders")}
