"""The names an exported SCXML document uses: state ids, event names, `<data>` ids.

python-statemachine (psm) builds a Python class from a document: top-level state
ids and event names become class attributes (an event wins over a state of the
same name), so a name such as `send` or `configuration` would replace the
machine's own method. Its datamodel resolves a bare name in an expression from
the event's keyword arguments (the payload) before the `<data>`, so a context
field named like a payload field would read the payload. Hence:

- a state keeps its name as its id when the name is unique in the chart and
  free (no event, no psm attribute, no leading `_`); else `<name>_2`, `_3`...;
- an event keeps its name; one psm reserves is `NotExportable`; a timer event
  whose name holds white space (an expression in it) loses the white space;
- a context field keeps its name unless it is a payload field of some event, a
  Python keyword, a name psm protects or reserves: then `ctx_<name>`, unique;
- XML 1.0 cannot hold most control characters: a name with one is `NotExportable`.
"""

from __future__ import annotations

import keyword
import re
from dataclasses import dataclass

from statekit.compiler.ir import CompiledChart
from statekit.scxml.export_expressions import NotExportable, check_xml_text

PSM_ATTRIBUTES = frozenset(
    [
        "TransitionNotAllowed",
        "activate_initial_state",
        "active_listeners",
        "add_listener",
        "allow_event_without_transition",
        "allowed_events",
        "atomic_configuration_update",
        "bind_events_to",
        "cancel_event",
        "catch_errors_as_events",
        "configuration",
        "configuration_values",
        "current_state",
        "current_state_value",
        "enable_self_transition_entries",
        "enabled_events",
        "events",
        "id",
        "is_terminated",
        "name",
        "prepare",
        "raise_",
        "send",
        "start_configuration_values",
        "states",
        "states_map",
        "model",
        "state_field",
        "history_values",
        "start_value",
        "listeners",
        "validate_disconnected_states",
        "validate_trap_states",
        "validate_final_reachability",
        "prepare_event",
    ]
)
"""Attributes of psm 3.2's `StateChart` (and the keyword arguments its SCXML reader passes
to the class it builds) that a state id or event name would replace."""

PSM_PROTECTED = frozenset(
    [
        "event_data",
        "machine",
        "event",
        "model",
        "transition",
        "state",
        "source",
        "target",
        "send_id",
        "In",
    ]
)
"""Names psm's datamodel never resolves from a `<data>` (engine objects) or passes itself."""


@dataclass(frozen=True)
class ExportNames:
    """State IR id → SCXML id, event name → SCXML event, context field → `<data>` id."""

    state_ids: tuple[str, ...]
    events: dict[str, str]
    data: dict[str, str]


def export_names(chart: CompiledChart, wrapper: bool) -> ExportNames:
    """The names of `chart`'s states, events and context fields in its SCXML document;
    `wrapper`: the root is written as a state of its own (its id is the chart's name)."""
    events = _event_names(chart)
    taken = set(events.values()) | PSM_ATTRIBUTES
    counts: dict[str, int] = {}
    for state in chart.states[1:]:
        counts[state.name] = counts.get(state.name, 0) + 1
    taken |= {name for name, count in counts.items() if count == 1 and not name.startswith("_")}
    state_ids: list[str] = []
    for state in chart.states:
        name = state.name if state.id else chart.name
        check_xml_text(name, f"the state name {name!r}")
        if not state.id and not wrapper:
            state_ids.append("")
        elif (
            state.id
            and counts[name] == 1
            and not name.startswith("_")
            and (name not in PSM_ATTRIBUTES and name not in events.values())
        ):
            state_ids.append(name)
        else:
            state_ids.append(_unique(name, taken))
    payload_fields = {f.name for e in chart.events.values() for f in e.fields}
    for event in chart.events.values():
        for item in event.fields:
            if item.name.startswith("_") or keyword.iskeyword(item.name) or item.name == "get":
                raise NotExportable(
                    f"the payload field {item.name!r} of {event.name!r}: "
                    "psm reads a payload as _event.data.<field>, which this name cannot be"
                )
    data: dict[str, str] = {}
    data_taken = set(payload_fields) | PSM_PROTECTED | {"true", "false", "null"}
    data_taken |= set(chart.context)
    for name in chart.context:
        clash = name in payload_fields or name in PSM_PROTECTED or keyword.iskeyword(name)
        clash = clash or name.startswith("_") or name in ("true", "false", "null")
        data[name] = _unique(f"ctx_{name.lstrip('_')}", data_taken) if clash else name
    return ExportNames(tuple(state_ids), events, data)


def _event_names(chart: CompiledChart) -> dict[str, str]:
    names = [*chart.events, *(t.name for t in chart.timers)]
    out: dict[str, str] = {}
    taken: set[str] = set()
    for name in names:
        check_xml_text(name, f"the event name {name!r}")
        if name in PSM_ATTRIBUTES or name.startswith("_"):
            raise NotExportable(
                f"the event name {name!r}: python-statemachine reserves it "
                "(an event becomes an attribute of the machine's class)"
            )
        wanted = re.sub(r"\s+", "", name)
        out[name] = wanted if wanted == name else _unique(wanted, taken | set(names))
        taken.add(out[name])
    return out


def _unique(wanted: str, taken: set[str]) -> str:
    candidate, number = wanted, 1
    while candidate in taken:
        number += 1
        candidate = f"{wanted}_{number}"
    taken.add(candidate)
    return candidate
