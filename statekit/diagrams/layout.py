"""Running Graphviz's `dot` on DOT text, under a timeout: the one module that imports graphviz.

The `graphviz` package names the executable and reports its version; the
layout runs as a subprocess with a hard timeout because `graphviz.pipe` has
none, and `dot` 2.43 can run for minutes (or abort) on large clustered charts.
Every failure is a `LayoutError` whose message says what to do.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from collections.abc import Callable

import graphviz

if sys.platform != "win32":
    import resource

FORMATS = ("svg", "png")
DEFAULT_TIMEOUT = 60.0
INSTALL_HINT = (
    "Graphviz's `dot` program was not found on PATH; it is needed for SVG and PNG "
    "(DOT and Mermaid output work without it). Install Graphviz: "
    "`apt-get install graphviz` (Debian, Ubuntu), `brew install graphviz` (macOS), "
    "or see https://graphviz.org/download/"
)


class LayoutError(Exception):
    """`dot` is missing, timed out or failed; the message is meant for the user."""


class GraphvizMissing(LayoutError):
    """The `dot` executable is not installed."""

    def __init__(self) -> None:
        super().__init__(INSTALL_HINT)


def dot_executable() -> str | None:
    """The path of `dot`, or None when Graphviz is not installed."""
    return shutil.which(str(graphviz.DOT_BINARY))


def graphviz_version() -> str:
    """The version of the installed `dot`, such as `2.43.0` (GraphvizMissing if none)."""
    if dot_executable() is None:
        raise GraphvizMissing()
    try:
        return ".".join(str(part) for part in graphviz.version())
    except graphviz.ExecutableNotFound as exc:
        raise GraphvizMissing() from exc


def _no_core_dumps() -> Callable[[], None] | None:
    """A child-process hook that turns core dumps off (dot 2.43 aborts on some charts)."""
    if sys.platform == "win32":  # pragma: no cover
        return None

    def limit() -> None:
        resource.setrlimit(resource.RLIMIT_CORE, (0, 0))

    return limit


def render(dot_source: str, fmt: str, *, timeout: float = DEFAULT_TIMEOUT, what: str = "") -> bytes:
    """Lay out `dot_source` and return the SVG or PNG bytes.

    `what` names the drawing in error messages. Raises `GraphvizMissing`, or
    `LayoutError` when `dot` runs past `timeout` seconds (it is killed) or fails.
    """
    if fmt not in FORMATS:
        raise ValueError(f"unknown image format {fmt!r} (expected one of {', '.join(FORMATS)})")
    executable = dot_executable()
    if executable is None:
        raise GraphvizMissing()
    name = what or "the chart"
    try:
        done = subprocess.run(
            [executable, f"-T{fmt}"],
            input=dot_source.encode("utf-8"),
            capture_output=True,
            timeout=timeout,
            check=False,
            preexec_fn=_no_core_dumps(),
        )
    except FileNotFoundError as exc:
        raise GraphvizMissing() from exc
    except subprocess.TimeoutExpired as exc:
        raise LayoutError(
            f"Graphviz dot did not finish laying out {name} within {timeout:g} s and was stopped; "
            "dot is slow on large clustered charts: draw an overview plus one diagram per "
            "composite state (--split always) or allow more time (--timeout)"
        ) from exc
    if done.returncode != 0:
        detail = done.stderr.decode("utf-8", "replace").strip().splitlines()
        cause = f"exit status {done.returncode}" if done.returncode > 0 else "crashed"
        raise LayoutError(
            f"Graphviz dot failed on {name} ({cause}"
            + (f": {detail[-1]}" if detail else "")
            + "); dot 2.43 is known to fail on large clustered charts with labelled edges: "
            "try --split always"
        )
    return done.stdout
