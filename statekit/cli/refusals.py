"""How a command refuses what the runner refused: a usage error (exit 2) with its message.

One place, so that a changed chart of a stored version is told what changed
(`statekit diff`'s one-line summary) wherever a command opens a store with a chart:
the runner names the version and both digests but runs no analysis (it sits below
it), the CLI sits above both.
"""

from __future__ import annotations

import click

from statekit.runner.errors import ChangedVersionError, RunnerError


def runner_refusal(exc: RunnerError) -> click.UsageError:
    """The usage error for `exc`; for a changed chart of a stored version, with what
    changed, or that the store kept no source to compare with."""
    if not isinstance(exc, ChangedVersionError):
        return click.UsageError(str(exc))
    # Imported here, where a changed chart is refused, not with this module: the analysis
    # was over a third of `statekit worker`'s start-up as a process (measured with
    # `python -X importtime`: 120 ms of 300 ms of imports; bench/worker_startup.py).
    from statekit.analysis.diff import diff_charts

    what = (
        "the store did not keep its source"
        if exc.stored is None
        else diff_charts(exc.stored, exc.changed).summary()
    )
    return click.UsageError(f"{exc}. What changed: {what}")
