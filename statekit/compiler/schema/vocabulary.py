"""DSL vocabulary the compiler needs beyond validation, read from the JSON Schema.

The vocabulary is defined once, in `statekit/schema/statechart.schema.json`;
the compiler's own checks take their key lists from there.
"""

from __future__ import annotations

from statekit.compiler.schema.document import schema

HISTORY_STATE_KEYS: frozenset[str] = frozenset(schema()["definitions"]["historyStateKeys"]["enum"])
"""The only keys a history pseudo-state may have (`historyStateKeys` in the schema)."""
