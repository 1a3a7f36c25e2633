"""What every page of the HTML coverage report shares: the escaping of chart text, the
stamp (statekit version, time, command), the colour band of a percentage, the cell of
one metric, and the page frame around a body.
"""

from __future__ import annotations

import html
import json
import os
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, datetime

from statekit._version import __version__
from statekit.testing.coverage.html_assets import SCRIPT_FILE, STYLE_FILE
from statekit.testing.coverage.metrics import Metric

BANDS: tuple[tuple[float, str, str], ...] = (
    (100.0, "full", "100%"),
    (90.0, "high", "≥ 90%"),
    (75.0, "good", "≥ 75%"),
    (50.0, "fair", "≥ 50%"),
    (1e-9, "low", "> 0%"),
    (0.0, "none", "0%"),
)
"""The colour bands of a percentage (floor, name, legend), highest first: a cell takes
the first band whose floor it reaches (`full` only at 100%, `none` only at 0%); `empty`
is a metric with nothing to cover."""


def escape(text: str) -> str:
    """Text from a chart or a user for HTML text or a quoted attribute value: the one
    escaping function of the report's pages."""
    return html.escape(text, quote=True)


@dataclass(frozen=True, slots=True)
class Stamp:
    """What made the report: statekit's `version`, when (`created`, UTC) and the
    `command` that ran."""

    command: str
    created: datetime
    version: str = __version__

    @classmethod
    def now(cls, command: str, environment: Mapping[str, str] = os.environ) -> Stamp:
        """A stamp of this moment for `command`, or of the moment `SOURCE_DATE_EPOCH`
        names (seconds since 1970, the reproducible-builds convention) when it is set
        to a whole number: the same run then writes the same report."""
        epoch = environment.get("SOURCE_DATE_EPOCH", "").strip()
        if epoch.isdigit():
            return cls(command, datetime.fromtimestamp(int(epoch), UTC))
        return cls(command, datetime.now(UTC).replace(microsecond=0))

    def html(self) -> str:
        """The stamp as one line of the page."""
        moment = self.created.astimezone(UTC)
        shown = moment.strftime("%Y-%m-%d %H:%M:%S UTC")
        return (
            f'<p class="stamp">statekit {escape(self.version)}, created at '
            f'<time datetime="{moment.isoformat()}">{shown}</time> by '
            f"<code>{escape(self.command)}</code></p>"
        )


def band(metric: Metric) -> str:
    """The colour band of `metric` (`empty` when it has nothing to cover)."""
    if metric.total == 0:
        return "empty"
    return next(name for floor, name, _ in BANDS if metric.percent >= floor)


def metric_cell(name: str, metric: Metric) -> str:
    """A table cell with `covered/total` and the percentage, coloured by band, carrying
    its numbers for sorting and totals."""
    percent = "n/a" if metric.total == 0 else f"{metric.percent:.1f}%"
    missing = metric.total - metric.covered
    title = "nothing to cover" if metric.total == 0 else f"{missing} missing"
    return (
        f'<td class="band-{band(metric)}" data-metric="{name}" data-sort="{metric.percent:.4f}" '
        f'data-covered="{metric.covered}" data-total="{metric.total}" title="{title}">'
        f'<span class="count">{metric.covered}/{metric.total}</span> '
        f'<span class="percent">{percent}</span></td>'
    )


def scale() -> str:
    """The legend of the colour bands."""
    spans = "".join(f'<span class="band-{name}">{label}</span>' for _, name, label in BANDS)
    return f'<p class="scale">colour by percentage: {spans}</p>'


def page(title: str, body: str, stamp: Stamp, *, up: str = "") -> str:
    """A whole page: `title`, the stamp in the header and the footer, `body` in `<main>`,
    the style sheet and the script; `up` is the header's navigation, if any."""
    bands = escape(json.dumps([[floor, name] for floor, name, _ in BANDS]))
    return "\n".join(
        [
            "<!DOCTYPE html>",
            '<html lang="en"><head><meta charset="utf-8">',
            '<meta name="viewport" content="width=device-width, initial-scale=1">',
            f"<title>{escape(title)}</title>",
            f'<link rel="stylesheet" href="{STYLE_FILE}">',
            f'<script src="{SCRIPT_FILE}" defer></script>',
            f'</head><body data-bands="{bands}">',
            f"<header>{up}<h1>{escape(title)}</h1>{stamp.html()}</header>",
            f"<main>{body}</main>",
            f"<footer>{stamp.html()}</footer>",
            "</body></html>",
            "",
        ]
    )
