"""What a command given to the runner must be: an instance ID, an event ID that is not the
runner's own, stored integers in range; `make_command` builds the `Command` `Runner.apply`
runs (ValueError when the arguments cannot be one)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from statekit.runner.identifier_bounds import too_long
from statekit.runner.outcome import Conflict
from statekit.runner.store.rows import positional, stored_int_problem
from statekit.runner.transaction import Command

RESERVED_PREFIX = "statekit."
"""Event IDs starting with this are the runner's own (`statekit.start` at creation)."""


def check_instance_id(value: object) -> None:
    """ValueError unless `value` can be an instance ID (a non-empty string without NUL, at
    most `identifier_bounds.MAX_ID_BYTES` UTF-8 bytes)."""
    _check_id(value, "instance ID")


def check_stored_int(value: int, what: str) -> None:
    """ValueError unless `value` fits the stores' signed 64-bit integers."""
    problem = stored_int_problem(value, what)
    if problem is not None:
        raise ValueError(problem)


def _check_id(value: object, what: str) -> None:
    if not isinstance(value, str) or not value:
        raise ValueError(f"an {what} is a non-empty string, not {value!r}")
    if "\x00" in value:
        # PostgreSQL text cannot hold NUL; refuse it on every store alike.
        raise ValueError(f"an {what} cannot contain a NUL character: {value!r}")
    problem = too_long(value, f"an {what}")
    if problem is not None:
        raise ValueError(problem)
    if what == "event ID" and value.startswith(RESERVED_PREFIX):
        raise ValueError(f"{what} {value!r}: IDs starting with {RESERVED_PREFIX!r} are reserved")


def make_command(
    event_id: str,
    type: str,
    payload: Mapping[str, Any] | None,
    expected_version: int | None = None,
    sequence: int | None = None,
    after_conflict: Conflict | None = None,
) -> Command:
    """The `Command` `apply` runs, or ValueError when the arguments cannot be one (an
    empty, reserved or too long event ID, a type that is not a string, a sequence below 1)."""
    _check_id(event_id, "event ID")
    if not isinstance(type, str) or "\x00" in type:
        raise ValueError(f"an event type is a string without NUL characters, not {type!r}")
    problem = too_long(type, "an event type")
    if problem is not None:
        raise ValueError(problem)
    if sequence is not None and sequence < 1:
        raise ValueError(f"sequence must be at least 1, not {sequence}")
    if sequence is not None:
        check_stored_int(sequence, "sequence")
    if expected_version is not None:
        check_stored_int(expected_version, "expected_version")
    body = dict(payload) if payload is not None else {}
    # built positionally (`rows.positional`): one per event
    return _command(event_id, type, body, expected_version, sequence, after_conflict)


_command = positional(
    Command, "event_id", "type", "payload", "expected_version", "sequence", "after_conflict"
)
