"""The HTML coverage report opens in headless Chromium: each chart's diagram renders, the
untested transitions and the states with unexercised pairs are marked (colour, and a dash
pattern and a label for readers without colour), and the missing items are listed."""

from __future__ import annotations

import html
import json
import re
import shutil
import subprocess
import textwrap
from pathlib import Path
from typing import Any

import pytest
from chart_helpers import dot_program
from coverage_charts import DOOR

# In-process inner runs share the outer statekit modules (see test_coverage_plugin.py).
import statekit.api
import statekit.testing.coverage.report

assert statekit.api and statekit.testing.coverage.report
__all__ = ["dot_program"]

FULL = """
statechart: full
events: {GO: {}}
initial: a
states:
  a:
    on: {GO: b}
  b:
    final: true
"""

SUITE = """
import statekit

def test_door():
    door = statekit.load("charts/door.yaml")
    opened = door.send(door.start(), "OPEN")
    assert door.send(opened.state, "CLOSE").applied

def test_full():
    full = statekit.load("charts/full.yaml")
    done = full.send(full.start(), "GO").state
    assert full.send(done, "GO").reason == "TERMINAL_STATE"
    assert full.send(done, "NOPE").reason == "UNKNOWN_EVENT"
    assert full.send(done, "GO", {"x": 1}).reason == "INVALID_PAYLOAD"
"""


@pytest.fixture
def chromium() -> str:
    """Headless Chromium; fails (never skips) without it: `make test` installs it."""
    found = shutil.which("chromium") or shutil.which("chromium-browser")
    if found is None:
        pytest.fail("Chromium is not installed: run `make test` (it installs it)")
    return found


@pytest.fixture
def report(pytester: pytest.Pytester, dot_program: str) -> Path:
    assert dot_program
    pytester.makefile(".yaml", **{"charts/door": textwrap.dedent(DOOR)})
    pytester.makefile(".yaml", **{"charts/full": textwrap.dedent(FULL)})
    pytester.makepyfile(test_plugin_suite=SUITE)
    result = pytester.runpytest("--statekit-cov=charts", "--statekit-cov-report=html:cov")
    assert result.ret == 0, result.stdout.str()
    return pytester.path / "cov" / "index.html"


def _rendered(chromium: str, page: Path) -> dict[str, dict[str, Any]]:
    dom = subprocess.run(
        [chromium, "--headless", "--no-sandbox", "--disable-gpu", "--dump-dom", page.as_uri()],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    found = re.search(r'data-rendered="([^"]*)"', dom)
    assert found, dom[:2000]
    return {c["chart"]: c for c in json.loads(html.unescape(found.group(1)))}


def test_the_report_renders_in_chromium_with_the_missing_items_marked(
    chromium: str, report: Path
) -> None:
    charts = _rendered(chromium, report)
    door, full = charts["door"], charts["full"]
    assert door["width"] > 100 and door["height"] > 100  # the diagram was laid out
    assert full["width"] > 50 and full["height"] > 50
    # LOCK from closed: drawn as two edges through its label node, both marked
    assert door["untested"] == 1 and full["untested"] == 0
    assert door["untested_stroke"] == "rgb(198, 40, 40)"
    # every door configuration has an event never sent there; full's are all exercised
    assert door["unexercised"] == 3 and full["unexercised"] == 0
    assert door["unexercised_dash"] not in (None, "none")


def test_marks_are_readable_without_colour(report: Path) -> None:
    page = report.read_text(encoding="utf-8")
    door = page[page.index('<section class="chart" id="door">') :]
    door = door[: door.index("</section>")]
    untested = re.findall(r'<g id="edge\d+" class="edge untested">.*?</g>', door, re.S)
    assert untested and all("stroke-dasharray" in g for g in untested)
    svg = door[door.index("<svg") : door.index("</svg>")]
    assert svg.count("✗ untested") == 1  # the edge's label says it
    assert "legend" in door and "untested transition" in door
    missing = [
        (kind, html.unescape(text))
        for kind, text in re.findall(r'<li class="missing-(\w+)">✗ (.*?)</li>', door)
    ]
    assert (
        "transition",
        "'closed' --LOCK--> 'locked' (line 6) — path: <code>LOCK</code>",
    ) in missing
    assert (
        "rejection",
        "<code>LOCKED</code> — path: <code>LOCK</code> → <code>OPEN</code>",
    ) in missing
    assert {kind for kind, _ in missing} == {"transition", "classification", "rejection", "race"}
    assert (
        "race",
        "<code>OPEN</code> / <code>LOCK</code> in {closed}, never tried: OPEN then LOCK;"
        " LOCK then OPEN — from the initial state",
    ) in missing
    full = page[page.index('<section class="chart" id="full">') :]
    assert full.count("✓ nothing missing") == 4
