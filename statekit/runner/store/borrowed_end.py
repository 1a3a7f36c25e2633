"""What a store over the application's connection holds once its block has ended
(`Runner.in_transaction`): a connection that refuses every use, with the reason."""

from __future__ import annotations

from typing import Any, NoReturn

from statekit.runner.errors import NotInTransactionError


class _EndedConnection:
    """Any attribute raises `NotInTransactionError` (the block is over)."""

    __slots__ = ()

    def __getattr__(self, name: str) -> NoReturn:
        raise NotInTransactionError(
            "this runner wrote in the application's transaction (`Runner.in_transaction`), "
            "and its block has ended: use the runner itself, or open another block"
        )


def ended_connection() -> Any:
    """The connection of a store whose `in_transaction` block has ended."""
    return _EndedConnection()
