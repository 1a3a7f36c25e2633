"""`SqlAccess`: what the query groups of a `Store` need of it, for the type checker.

The `Store`'s queries live in one module per group of tables (`schema_queries`,
`instance_queries`, `event_queries`, `timer_queries`, `message_queries`), each a
mixin class that `Store` (`base`) inherits; they run their statements through the
store's connection mechanics, which stay in `base` (`execute`, `write`, …) and in
each dialect's subclass. This class declares those for the type checker only: at
run time it adds nothing, so a query method costs no more than it did as a method
written in `Store` itself.
"""

from __future__ import annotations

from collections.abc import Sequence
from contextlib import AbstractContextManager
from typing import TYPE_CHECKING, Any


class SqlAccess:
    """The connection mechanics a query group uses (defined by `Store` and its dialects)."""

    __slots__ = ()

    dialect: str
    lock_clause: str
    claim_lock_clause: str
    timer_lock_clause: str
    message_lock_clause: str
    url: str

    if TYPE_CHECKING:

        def execute(self, sql: str, params: Sequence[Any] = ()) -> Any:
            """Run one statement (`Store.execute`)."""

        def executemany(self, sql: str, rows: Sequence[Sequence[Any]]) -> None:
            """Run one statement for each parameter row (`Store.executemany`)."""

        def write(self) -> AbstractContextManager[None]:
            """A write transaction (`Store.write`)."""

        def read(self) -> AbstractContextManager[None]:
            """A read-only snapshot (`Store.read`)."""

        def _lock_schema(self) -> None:
            """Serialise concurrent migrators (`Store._lock_schema`)."""

        def _has_table(self, name: str) -> bool:
            """Whether the database has a table called `name` (`Store._has_table`)."""

        def _display_url(self) -> str:
            """The URL as messages show it (`Store._display_url`)."""
