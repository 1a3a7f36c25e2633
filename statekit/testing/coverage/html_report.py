"""The HTML coverage report: a folder with `index.html` (one row per chart, totals),
one page per chart, `style.css` and `report.js`. It opens from `file://`: no network,
no build step."""

from __future__ import annotations

import re
from collections.abc import Mapping
from pathlib import Path

from statekit.testing.coverage.html_assets import SCRIPT, SCRIPT_FILE, STYLE, STYLE_FILE
from statekit.testing.coverage.html_chart import chart_page
from statekit.testing.coverage.html_frame import Stamp
from statekit.testing.coverage.html_index import index_page
from statekit.testing.coverage.metrics import ChartCoverage

INDEX_FILE = "index.html"
_UNSAFE = re.compile(r"[^A-Za-z0-9_-]+")


def page_names(keys: list[str]) -> dict[str, str]:
    """A file name per chart key: its letters, digits, `_` and `-` (other runs of
    characters become `_`), unique without regard to case, never `index.html`."""
    names: dict[str, str] = {}
    taken = {INDEX_FILE}
    for key in keys:
        stem = _UNSAFE.sub("_", key).strip("_") or "chart"
        name, n = f"{stem}.html", 2
        while name.lower() in taken:
            name, n = f"{stem}-{n}.html", n + 1
        taken.add(name.lower())
        names[key] = name
    return names


def html_pages(charts: Mapping[str, ChartCoverage], stamp: Stamp) -> dict[str, str]:
    """Every file of the report by name: the pages, the style sheet and the script."""
    keys = list(charts)
    names = page_names(keys)
    files = {INDEX_FILE: index_page(charts, names, stamp), STYLE_FILE: STYLE, SCRIPT_FILE: SCRIPT}
    for i, key in enumerate(keys):
        before = names[keys[i - 1]] if i > 0 else None
        after = names[keys[i + 1]] if i + 1 < len(keys) else None
        files[names[key]] = chart_page(key, charts[key], stamp, (before, after))
    return files


def write_html(charts: Mapping[str, ChartCoverage], directory: str | Path, stamp: Stamp) -> Path:
    """Write the report into `directory` (created); return the path of its index page."""
    out = Path(directory)
    out.mkdir(parents=True, exist_ok=True)
    for name, text in html_pages(charts, stamp).items():
        (out / name).write_text(text, encoding="utf-8")
    return out / INDEX_FILE
