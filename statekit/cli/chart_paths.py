"""Chart files named on the command line, a folder standing for the charts in it (found as
`statekit lint` finds them), for the commands that take several charts (`worker --chart`,
`timers --chart`)."""

from __future__ import annotations

import os
from collections.abc import Iterable

import click


def chart_files(paths: Iterable[str]) -> list[str]:
    """`paths` with each folder replaced by the chart files in it; a usage error (exit 2)
    for a folder without charts. The lint package that walks folders is imported
    only when a folder is given (`statekit worker`'s start-up stays small)."""
    files: list[str] = []
    for path in paths:
        if not os.path.isdir(path):
            files.append(path)
            continue
        from statekit.lint.lint_files import UsageError, collect_files

        try:
            files.extend(str(f) for f in collect_files([path]))
        except UsageError as exc:
            raise click.UsageError(str(exc)) from exc
    return files
