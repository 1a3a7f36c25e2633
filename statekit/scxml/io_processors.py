"""`_ioprocessors[<processor>].location`: SCXML's table of event I/O processors, read
one entry's `location` at a time.

The location is the address other sessions send to through that processor; it is
written as a statekit expression. `LOCATIONS` maps each processor name the SCXML
specification gives (its short name and its URI) to that expression; the SCXML event
I/O processor's is `#_scxml_<sessionid>` (`system_variables.OWN_LOCATION`). The table
as a whole is statekit's `instance.processors`, a read-only record of the same
locations (`<data expr="_ioprocessors">`, compared whole); any other entry, and member
access on it, are refused by name.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Final

from statekit.scxml.system_variables import OWN_LOCATION

IO_PROCESSORS: Final = "_ioprocessors"
SCXML_PROCESSOR: Final = "http://www.w3.org/TR/scxml/#SCXMLEventProcessor"
LOCATIONS: Final[Mapping[str, str]] = {
    "scxml": OWN_LOCATION,
    SCXML_PROCESSOR: OWN_LOCATION,
}
"""Processor name → the expression of its `location` for this session."""
WHOLE: Final = "instance.processors"
"""The table as a whole: statekit's record of its processors (`{scxml: {location}}`,
`statekit.compiler.expressions.processors`)."""


_ONE_READ = re.compile(
    r"^\s*_ioprocessors\s*\[[^\]]*\]\s*(\.\s*location|\.\s*get\s*\([^)]*\)|\[[^\]]*\])\s*$"
)


def is_location_read(text: str) -> bool:
    """Whether `text` is one `_ioprocessors` entry's location and nothing else (a
    condition of one string value: SCXML's truthiness, written `!= ''`)."""
    return _ONE_READ.match(text) is not None


class NoProcessorEntry(ValueError):
    """An `_ioprocessors` read other than one known entry's `location`; names it."""


def location_read(tokens: list[tuple[str, str]], index: int) -> tuple[str, int]:
    """The expression for `_ioprocessors[<name>]` + `.location`, `.get('location')` or
    `['location']` starting at `tokens[index]`, and the index after it."""
    words = [value for _, value in tokens[index + 1 : index + 10]]
    kinds = [kind for kind, _ in tokens[index + 1 : index + 10]]
    if words[:1] not in (["["], ["."]):  # the table as a whole: a read-only record
        return WHOLE, index + 1
    if words[:1] != ["["] or kinds[1:2] != ["string"] or words[2:3] != ["]"]:
        raise NoProcessorEntry("the system variable _ioprocessors's members")
    name = words[1][1:-1]
    location = LOCATIONS.get(name)
    if location is None:
        raise NoProcessorEntry(
            f"the event I/O processor {words[1]} (statekit has only the SCXML one)"
        )
    field = words[3:]
    if field[:2] == [".", "location"]:
        return location, index + 6
    if field[:3] == [".", "get", "("] and field[3:5] in (["'location'", ")"], ['"location"', ")"]):
        return location, index + 9
    if field[:1] == ["["] and field[1:3] in (["'location'", "]"], ['"location"', "]"]):
        return location, index + 7
    raise NoProcessorEntry(f"the system variable _ioprocessors[{words[1]}]'s other fields")
