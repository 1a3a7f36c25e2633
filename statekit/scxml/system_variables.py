"""SCXML's system variables `_sessionid` and `_ioprocessors` in statekit's expressions.

`_sessionid` is the instance's ID: statekit's `instance.id` (each step is given the ID
of the instance it steps). `_name` is a constant (the `<scxml name>`, else the chart's
name) and is written as a literal by the translation. `_ioprocessors[<processor>]` is
the event I/O processor's entry; its `location` is the address another session sends
to: for the SCXML processor, `#_scxml_<sessionid>` (see `io_processors`).
"""

from __future__ import annotations

from typing import Final

SESSION_ID: Final = "instance.id"
"""`_sessionid` in statekit's expression language."""
SCXML_TARGET_PREFIX: Final = "#_scxml_"
"""A `<send target>` naming a session: `#_scxml_<sessionid>`."""
OWN_LOCATION: Final = f"('{SCXML_TARGET_PREFIX}' + {SESSION_ID})"
"""This session's address for the SCXML event I/O processor, as an expression."""
