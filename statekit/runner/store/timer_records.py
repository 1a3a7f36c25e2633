"""Schema version 9: the timer rows become an instance's armed timers.

Before it, an instance row's `timers` column held every armed timer and the
arming counter as one canonical JSON text, rewritten whole by every event that
armed or cancelled one (its cost grew with the number armed), and
`statekit_timers` held a row per timer for the worker. From version 9 each
timer row also holds the armed timer itself (`record`: `ArmedTimer.to_data()`
as canonical JSON) and the instance row's `timers` holds only the arming
counter (`{"timer_generation":N}`): an event writes the rows of the timers it
armed and deletes those it cancelled, nothing else.

The migration copies each timer's entry of the instance text into its row and
cuts the instance text down to the counter. A text that is not JSON of that
shape (a damaged row) is kept as it was, and a row whose instance text has no
such timer keeps no record: reading the instance then fails with a
`CorruptRowError` and `statekit verify` reports it, nothing is dropped.
"""

from __future__ import annotations

import json
from functools import lru_cache

from statekit.compiler.canonical import canonical_json

ADD_RECORD = "ALTER TABLE statekit_timers ADD COLUMN record TEXT"


def counter_text(generation: int) -> str:
    """The instance row's `timers` column for an arming counter (`generation` > 0)."""
    return f'{{"timer_generation":{generation}}}'


@lru_cache(maxsize=8)
def _entries(timers: str) -> dict[str, str] | None:
    """Timer ID → canonical JSON of its entry in an instance's old `timers` text (None: not
    such a text). Cached: the migration asks once per timer row of the instance."""
    try:
        data = json.loads(timers)
    except ValueError:
        return None
    if not isinstance(data, dict) or not isinstance(data.get("timers"), list):
        return None
    return {
        entry["id"]: canonical_json(entry)
        for entry in data["timers"]
        if isinstance(entry, dict) and isinstance(entry.get("id"), str)
    }


def timer_record(timers: str | None, timer_id: str | None) -> str | None:
    """SQLite's `statekit_timer_record`: the record of `timer_id` in an instance's old
    `timers` text (None: the text has no such timer or is not such a text)."""
    if not isinstance(timers, str) or not isinstance(timer_id, str):
        return None
    entries = _entries(timers)
    return None if entries is None else entries.get(timer_id)


def timer_counter(timers: str | None) -> str | None:
    """SQLite's `statekit_timer_counter`: an instance's old `timers` text cut down to its
    arming counter (the text unchanged when it is not such a text)."""
    if not isinstance(timers, str):
        return timers
    try:
        data = json.loads(timers)
    except ValueError:
        return timers
    generation = data.get("timer_generation") if isinstance(data, dict) else None
    if type(generation) is not int or generation < 1 or not isinstance(data.get("timers"), list):
        return timers
    return counter_text(generation)


_FILL = (
    "UPDATE statekit_timers SET record = statekit_timer_record((SELECT i.timers FROM "
    "statekit_instances i WHERE i.instance_id = statekit_timers.instance_id), timer_id)"
)
_CUT = (
    "UPDATE statekit_instances SET timers = statekit_timer_counter(timers) WHERE timers IS NOT NULL"
)

RECORDS_SQLITE = (ADD_RECORD, _FILL, _CUT)
"""Migration 9 on SQLite (the two functions are registered by `SqliteStore`)."""

# PostgreSQL: the same two functions in PL/pgSQL, created for the migration and dropped
# after it. A `json` value keeps its input text, so an element of the canonical array is
# its canonical text; a text that is not JSON is left alone (the exception handlers).
_RECORD_POSTGRESQL = """CREATE FUNCTION statekit_timer_record(timers TEXT, timer_id TEXT)
RETURNS TEXT LANGUAGE plpgsql AS $$
DECLARE found TEXT;
BEGIN
    SELECT e::text INTO found FROM json_array_elements(timers::json -> 'timers') e
        WHERE json_typeof(e) = 'object' AND e ->> 'id' = timer_id LIMIT 1;
    RETURN found;
EXCEPTION WHEN others THEN RETURN NULL;
END $$"""
_COUNTER_POSTGRESQL = """CREATE FUNCTION statekit_timer_counter(timers TEXT)
RETURNS TEXT LANGUAGE plpgsql AS $$
DECLARE generation BIGINT;
BEGIN
    IF json_typeof(timers::json) IS DISTINCT FROM 'object'
        OR json_typeof(timers::json -> 'timers') IS DISTINCT FROM 'array'
        OR json_typeof(timers::json -> 'timer_generation') IS DISTINCT FROM 'number' THEN
        RETURN timers;
    END IF;
    generation := (timers::json ->> 'timer_generation')::bigint;
    IF generation < 1 OR (timers::json ->> 'timer_generation') <> generation::text THEN
        RETURN timers;
    END IF;
    RETURN '{"timer_generation":' || generation::text || '}';
EXCEPTION WHEN others THEN RETURN timers;
END $$"""

RECORDS_POSTGRESQL = (
    ADD_RECORD,
    _RECORD_POSTGRESQL,
    _COUNTER_POSTGRESQL,
    _FILL,
    _CUT,
    "DROP FUNCTION statekit_timer_record(TEXT, TEXT)",
    "DROP FUNCTION statekit_timer_counter(TEXT)",
)
"""Migration 9 on PostgreSQL."""
