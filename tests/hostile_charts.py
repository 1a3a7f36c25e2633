"""A chart whose names and descriptions are as hostile as the schema lets them be.

State and event names may hold any character but `.`, white space and a leading
`*` (docs/dsl.md): HTML, Markdown links and code spans, table pipes, Mermaid's
and DOT's own characters, rich markup, an escape sequence, a bidirectional
override, a C1 control, a noncharacter. Descriptions are free text, lines
included. Reason codes and guard, invariant and chart names are identifiers:
nothing hostile fits in them.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

HOSTILE_NAMES = (
    "<script>alert(1)</script>",
    "<img/src=x/onerror=alert(1)>",
    "[link](javascript:alert(1))",
    "![image](javascript:alert(1))",
    "``code`span`",
    "a|b|c",
    "&amp;&#60;",
    "#27;%%{init}%%",
    '"quoted"\\n',
    "{brace}:;",
    "[link=https://evil]click[/link]",
    "\x1b[31mred\x1b]8;;https://evil\x07",
    "right\u202eto-left",
    "c1\x9bcontrol",
    "non\ufffecharacter",
    "-->end",
)
"""Names a state or an event may have (each is used for both)."""

HOSTILE_DESCRIPTION = (
    "<script>alert(1)</script> <img src=x onerror=alert(1)>\n"
    "[a link](https://evil.example) ![an image](https://evil.example/x.png) "
    "https://evil.example www.evil.example mail@evil.example\n"
    "# not a heading | not | a cell ``not code *not emphasis* _nor this_ "
    "<!-- not a comment --> &lt;not an entity&gt; \x1b[2J\u202e"
)
"""A description: free text, where the schema lets anything in. (A code span written in
a description stays one: `docs` keeps it, so this one holds unbalanced backticks.)"""


def hostile_chart() -> dict[str, Any]:
    """The chart as data: one state per hostile name, one event per hostile name, each
    state left by its own event and rejecting every other."""
    states: dict[str, Any] = {
        "start": {
            "description": HOSTILE_DESCRIPTION,
            "on": {
                name: {"to": name, "description": HOSTILE_DESCRIPTION} for name in HOSTILE_NAMES
            },
        }
    }
    for name in HOSTILE_NAMES:
        states[name] = {
            "description": HOSTILE_DESCRIPTION,
            "on": {name: "start"},
            "reject": {"*": "NOT_HERE"},
        }
    return {
        "statechart": "hostile",
        "description": HOSTILE_DESCRIPTION,
        "events": {name: {} for name in HOSTILE_NAMES},
        "initial": "start",
        "states": states,
    }


def write_hostile_chart(folder: Path) -> Path:
    """The chart written as YAML (every non-printable character as a YAML escape)."""
    path = folder / "hostile.yaml"
    path.write_text(
        yaml.safe_dump(hostile_chart(), allow_unicode=False, sort_keys=False, width=1000),
        encoding="utf-8",
    )
    return path
