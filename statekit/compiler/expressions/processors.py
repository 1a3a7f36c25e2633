"""`instance.processors`: the event I/O processors a step's instance is reached through,
and each one's location (SCXML's `_ioprocessors`), as a read-only record.

statekit has one processor every instance is reached by, SCXML's event I/O processor:
its `location` is `#_scxml_<instance ID>`, the address another member of the family
sends to (`send: {to: {address: ...}}`, `statekit.engine.addresses`). So the value is
`{scxml: {location: '#_scxml_' + instance.id}}`, typed as that record. (The Basic HTTP
processor's location is the HTTP intake's URL, which the engine's step does not know;
it is not a field.) It is read like `instance.id` (the step's instance ID, given by every
driver); nothing can assign it.
"""

from __future__ import annotations

from typing import Final

from statekit.compiler.record_values import Record
from statekit.compiler.value_types import STRING, BaseType, ValueType

PROCESSORS_FIELD: Final = "processors"
"""`instance.processors` in the expression language."""
SCXML_PROCESSOR: Final = "scxml"
LOCATION: Final = "location"
SESSION_PREFIX: Final = "#_scxml_"
"""A location of the SCXML event processor: `#_scxml_<instance ID>`."""

_ENTRY = ValueType(BaseType.RECORD, fields=((LOCATION, STRING),))
PROCESSORS_TYPE: Final = ValueType(BaseType.RECORD, fields=((SCXML_PROCESSOR, _ENTRY),))
"""The type of `instance.processors`: `record {scxml: record {location: string}}`."""


def processors_value(instance_id: str) -> Record:
    """`instance.processors` of the instance `instance_id` (a frozen record)."""
    return Record({SCXML_PROCESSOR: Record({LOCATION: SESSION_PREFIX + instance_id})})
