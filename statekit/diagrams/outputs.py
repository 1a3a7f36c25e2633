"""Which drawings a chart gets and what their files are called (no I/O).

A small chart is one drawing, `<stem>`; a large one an overview, `<stem>`,
plus one drawing per composite state, `<stem>.<state path>`. A path with
characters outside `[A-Za-z0-9_-]` is spelt safely with a short hash, so
file names stay portable, unique and stable when other states change.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass

from statekit.diagrams.dot import WRAP, to_dot
from statekit.diagrams.mermaid import to_mermaid
from statekit.diagrams.model import Diagram, EffectDetail
from statekit.diagrams.views import Split, View, plan_views

_SAFE = re.compile(r"[A-Za-z0-9_-]+")


@dataclass(frozen=True, slots=True)
class Drawing:
    """One view of a chart with its file stem and its DOT and Mermaid text."""

    view: View
    stem: str
    dot: str
    mermaid: str


def safe_part(text: str) -> str:
    """`text` when it is a portable file-name part, else a sanitised form plus a short hash."""
    if _SAFE.fullmatch(text):
        return text
    cleaned = re.sub(r"[^A-Za-z0-9_-]+", "_", text).strip("_")[:40]
    digest = hashlib.sha256(text.encode("utf-8")).hexdigest()[:8]
    return f"{cleaned}-{digest}" if cleaned else digest


def view_stem(stem: str, view: View) -> str:
    """The file stem of a view: the chart's stem, plus the focus path for a composite's view."""
    if not view.key:
        return stem
    return f"{stem}." + ".".join(safe_part(part) for part in view.key.split("."))


def drawings(
    d: Diagram,
    stem: str,
    *,
    split: Split = Split.AUTO,
    wrap: int = WRAP,
    classifications: bool = True,
    effects: EffectDetail = EffectDetail.SHORT,
) -> tuple[Drawing, ...]:
    """Every drawing of a chart, the whole chart or overview first, its labels showing
    `effects` (the Mermaid text shows none)."""
    return tuple(
        Drawing(
            view,
            view_stem(stem, view),
            to_dot(view, wrap=wrap, classifications=classifications),
            to_mermaid(view),
        )
        for view in plan_views(d, split, effects, wrap)
    )
