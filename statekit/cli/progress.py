"""Helpers shared by the commands that explore charts (lint, explain, paths).

rich is imported only once a progress bar is actually shown: importing it costs
about 15 ms, which every `statekit lint` in CI would otherwise pay for nothing.
"""

from __future__ import annotations

import gc
import os
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING

import click

from statekit.analysis.explorer import DEFAULT_MAX_CONFIGURATIONS, DEFAULT_MAX_MEMORY
from statekit.analysis.explorer import Progress as ProgressCallback
from statekit.compiler.ir import CompiledChart

if TYPE_CHECKING:
    from rich.progress import Progress

PROGRESS_AFTER = 0.5
"""Seconds an exploration runs before the progress bar appears."""


@contextmanager
def terminal_progress(chart: CompiledChart) -> Iterator[ProgressCallback | None]:
    """A progress callback that shows a rich bar on an interactive terminal after
    `PROGRESS_AFTER` seconds; None (silent) in CI or when stderr is not a terminal."""
    if os.environ.get("CI") or not sys.stderr.isatty():
        yield None
        return
    began = time.monotonic()
    bar: Progress | None = None
    task = None

    def update(expanded: int, found: int) -> None:
        nonlocal bar, task
        if bar is None:
            if time.monotonic() - began < PROGRESS_AFTER:
                return
            # Imported here, on a terminal only (see the module docstring).
            from rich.console import Console
            from rich.progress import (
                BarColumn,
                MofNCompleteColumn,
                Progress,
                TextColumn,
                TimeElapsedColumn,
            )

            bar = Progress(
                TextColumn(f"exploring {chart.name}"),
                BarColumn(),
                MofNCompleteColumn(),
                TextColumn("configurations"),
                TimeElapsedColumn(),
                console=Console(stderr=True),
                transient=True,
            )
            bar.start()
            task = bar.add_task("explore", total=found)
        assert task is not None
        bar.update(task, completed=expanded, total=found)

    try:
        yield update
    finally:
        if bar is not None:
            bar.stop()


def skip_final_collection() -> None:
    """Called when a command is done: the explored state space (millions of objects in
    reference cycles, for large charts) is left to the operating system instead of
    being walked by the interpreter's last garbage collection at exit."""
    gc.freeze()


def max_configurations_option() -> click.Option:
    """`--max-configurations N`, shared by lint, explain and paths."""
    return click.Option(
        ["--max-configurations"],
        type=click.IntRange(min=1),
        default=DEFAULT_MAX_CONFIGURATIONS,
        show_default=True,
        help="Stop exploring after this many abstract states (configuration + history).",
    )


def max_memory_option() -> click.Option:
    """`--max-memory MiB`, shared by lint, explain, paths and races (the value is in MiB)."""
    return click.Option(
        ["--max-memory", "max_memory_mib"],
        type=click.IntRange(min=1),
        default=DEFAULT_MAX_MEMORY >> 20,
        show_default=True,
        help="Stop exploring once the exploration has grown memory by this many MiB.",
    )
