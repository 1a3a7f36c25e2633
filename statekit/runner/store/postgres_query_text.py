"""Statements and their parameters as the text of one simple-protocol query, for
`store.postgres` (moved here from it): parameters bound on the client as literals of
their types (`bound_text`, `_literal`), and the instance update whose version check is
an error inside the database (`checked_move`). Why one query of several statements
rather than psycopg's pipeline mode: the `store.postgres` module docstring."""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any

# The instance update of `write_decided` (either of the store's two, as
# `statements.move_values` gives it: `SET version = ?, … WHERE instance_id = ? AND <guard>`)
# with its guard moved into the new version, `CASE WHEN <guard> THEN ? ELSE
# statekit_moved(0) END`: a row no longer as read raises STALE_VERSION (`statekit_moved`),
# so that a query of several statements cannot commit a stale write. Measured on
# loopback, this costs the server about what the plain UPDATE costs, and 15% less per
# event than the update in a CTE with its moved rows counted.
_MOVE_HEAD = "UPDATE statekit_instances SET version = ?, "
_MOVE_KEY = " WHERE instance_id = ? AND "
_CHECKED_MOVE = (
    "UPDATE statekit_instances SET version = CASE WHEN {guard} THEN %s "
    "ELSE statekit_moved(0) END, {assignments} WHERE instance_id = %s"
)


def checked_move(
    known_moves: dict[str, tuple[str, int]],
    convert: Callable[[str], str],
    update: str,
    params: Sequence[Any],
) -> tuple[str, Sequence[Any]]:
    """An instance update and its parameters as `_CHECKED_MOVE` (`convert`: `?` to `%s`),
    the update's form made once per distinct update and kept in `known_moves`."""
    known = known_moves.get(update)
    if known is None:
        head, _, guard = update.partition(_MOVE_KEY)
        if not head.startswith(_MOVE_HEAD) or not guard:
            raise RuntimeError(f"not an instance move: {update!r}")
        assignments = convert(head[len(_MOVE_HEAD) :])
        checked = _CHECKED_MOVE.format(guard=convert(guard), assignments=assignments)
        known = known_moves[update] = (checked, head.count("?"))
    checked, at = known  # `at`: the instance ID's parameter; the guard's follow it
    return checked, (*params[at + 1 :], params[0], *params[1:at], params[at])


def bound_text(
    templates: dict[str, tuple[int, str]], client: Any, sql: str, params: Sequence[Any]
) -> str:
    """`sql` (`%s` placeholders) with `params` bound as literals: text here, inline (the
    most frequent value: one call fewer each), the other types by `_literal` (a value
    of a type it does not know as psycopg's `ClientCursor.mogrify` of `client` binds it).
    `templates` keeps each statement's `%` format and number of parameters.

    The forms read the same whatever the server's `standard_conforming_strings`: text
    as an escape string with quotes and backslashes doubled (text with a NUL goes to
    `_literal`, which leaves it to psycopg's error). The hostile-text tests of the
    store read back what the server made of each."""
    template = templates.get(sql)
    if template is None:
        pieces = sql.split("%s")
        # the statement as a `%` format (its own `%` doubled): one C call fills it in
        filled = "%s".join(piece.replace("%", "%%") for piece in pieces)
        template = templates[sql] = (len(pieces) - 1, filled)
    count, filled = template
    if count != len(params):
        return str(client.mogrify(sql, params))  # psycopg's error
    # exactly `str` (`type(…) is`): a subclass may print itself otherwise
    return filled % tuple(
        [
            "E'" + value.replace("\\", "\\\\").replace("'", "''") + "'"
            if type(value) is str and "\x00" not in value
            else _literal(value) or client.mogrify("%s", (value,))
            for value in params
        ]
    )


def _literal(value: object) -> str | None:
    """`value` as a PostgreSQL literal, for the types the store writes besides text (which
    `bound_text` quotes itself): 64-bit integers, finite floats, bytes, NULL;
    None for any other value (text with a NUL included).

    Our own rather than psycopg's `ClientCursor.mogrify`, which binds every value through
    its adapter lookup: for the 30 values of one event that was about 40 µs of client CPU,
    as much as the rest of the query's sending. The forms are the ones that read the same
    whatever the server's `standard_conforming_strings`: bytes in bytea's hex form (an
    escape string), a float typed as one, a negative number after a space (a `-` before
    it never makes `--`, a comment)."""
    # exactly these types (`type(…) is`): a subclass may print itself otherwise
    if type(value) is int:
        return repr(value) if value >= 0 else f" {value!r}"
    if value is None:
        return "NULL"
    if type(value) is float and math.isfinite(value):
        return f" {value!r}::float8"  # typed: exactly this double (-0.0 included)
    if type(value) is bytes:
        return "E'\\\\x" + value.hex() + "'::bytea"
    return None
