"""A store whose every text is hostile, and the addresses of every page of the inspector
over it (`page_addresses`: every GET route of the app, each path parameter filled from
the store), for the hostile-input family.

The chart is `hostile_charts`' (state and event names as hostile as the schema lets
them be), its events given a free-text field. The instances' IDs, the event IDs and the
payload values are `HOSTILE_TEXTS` (an ID keeps to the stores' 512 bytes; a payload
also gets a 10 KB text); each instance takes one event (a state named after it) and
then one its new state rejects (a rejection whose message quotes the names), and an
event ID re-used with another payload (a conflict).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any
from urllib.parse import quote

import yaml
from hostile_charts import HOSTILE_NAMES, hostile_chart
from starlette.applications import Starlette
from starlette.routing import Route

from statekit.api import load
from statekit.engine.chart import Chart
from statekit.runner.runner import Runner
from statekit.runner.store import open_store

PWNED = "__pwned"
"""The window property an injected script would set (Chromium must never see it)."""

HOSTILE_TEXTS = (
    "<script>window['__pwned']=1;document.title='pwned'</script>",
    "\"'><img src=x onerror=\"window['__pwned']=1\">",
    "'><svg/onload=window['__pwned']=1>",
    "javascript:window['__pwned']=1",
    "</textarea></title></style><script>window['__pwned']=1</script>",
    "{{7*7}}${7*7}<%= 7*7 %>",
    "a/../../b?c=d#e&f=<g>",
    "right\u202eto-left\u2066isolate",
    "c0\x01\x07\x1b[31mc1\x9b",
    " leading and trailing ",
    "new\nline\rreturn\ttab",
    "\n",
    "%3Cscript%3E&lt;script&gt;",
)
"""Texts put in instance IDs, event IDs and payloads (no NUL: the stores refuse it)."""
LONG_TEXT = "<b>" + "x" * 10_240 + "</b>"


def hostile_chart_file(folder: Path) -> Path:
    """`hostile_charts`' chart with a `note` text field on every event, as YAML."""
    data: dict[str, Any] = hostile_chart()
    data["events"] = {name: {"note": {"type": "string"}} for name in HOSTILE_NAMES}
    path = folder / "hostile_payloads.yaml"
    path.write_text(
        yaml.safe_dump(data, allow_unicode=False, sort_keys=False, width=1000), encoding="utf-8"
    )
    return path


def fill_hostile_store(url: str, folder: Path) -> Chart:
    """Write the hostile instances (module docstring) to the store at `url`."""
    chart = load(str(hostile_chart_file(folder)))
    with open_store(url) as store:
        runner = Runner(chart, store)
        for n, text in enumerate(HOSTILE_TEXTS):
            event = HOSTILE_NAMES[n % len(HOSTILE_NAMES)]
            other = HOSTILE_NAMES[(n + 1) % len(HOSTILE_NAMES)]
            runner.create(text)
            runner.apply(text, text, event, {"note": text})
            runner.apply(text, text + "/rejected", other, {"note": LONG_TEXT})
            runner.apply(text, text, event, {"note": "another payload: " + text})
    return chart


def page_addresses(app: Starlette, chart: Chart) -> list[str]:
    """The address of every page the app's GET routes serve over the hostile store: each
    path parameter filled with every value it can take there, and the list's query
    parameters filled with the hostile texts. A route with a parameter this does not
    know fails the test that walks it (add the parameter here)."""
    samples: dict[str, tuple[str, ...]] = {
        "instance_id": tuple(quote(text, safe="") for text in HOSTILE_TEXTS),
        "name": (quote(chart.name, safe=""), quote(HOSTILE_TEXTS[0], safe="")),
        "version": (str(chart.version),),
    }
    addresses: list[str] = []
    for route in app.routes:
        if not isinstance(route, Route):
            continue  # /static: files of the package, no value from the store
        assert route.methods is not None and route.methods <= {"GET", "HEAD"}, route.path
        paths = [route.path]
        for name in route.param_convertors:
            assert name in samples, f"{route.path}: no hostile sample for {{{name}}}"
            paths = [
                path.replace(_placeholder(route.path, name), value)
                for path in paths
                for value in samples[name]
            ]
        addresses += paths
    for text in HOSTILE_TEXTS:
        quoted = quote(text, safe="")
        addresses += [
            f"/?q={quoted}",
            f"/?state={quoted}&chart={quoted}",
            f"/?sort={quoted}",
            f"/?from={quoted}",
            f"/live?instance={quoted}",
        ]
    addresses += [f"/?state={quote(name, safe='')}" for name in HOSTILE_NAMES]
    return addresses


def _placeholder(path: str, name: str) -> str:
    start = path.index("{" + name)
    return path[start : path.index("}", start) + 1]
