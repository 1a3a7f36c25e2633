"""The `statekit` command line.

Exit codes: 0 clean (warnings allowed), 1 findings at error severity, 2 usage
or internal error. Each command lives in a module of this package; the group
(`statekit.cli.group`) imports a module only when one of its commands runs.
"""

from __future__ import annotations

import errno
import gc
import os
import sys
from pathlib import Path

import click

from statekit.cli.group import EXIT_USAGE, cli

YOUNG_COLLECTION_THRESHOLD = 100_000
"""Allocations between two youngest-generation collections in a command's process."""


def main() -> None:
    """Console entry point: usage errors and crashes exit 2, never with a bare traceback."""
    # A command builds many objects (its modules' classes, a chart, an exploration) and
    # frees few: the default threshold (700 allocations) runs the cyclic collector
    # thousands of times over objects that all survive. A larger one (mypy's entry point
    # does the same) saves about 4% of `statekit lint machines/`; cycles still go.
    gc.set_threshold(YOUNG_COLLECTION_THRESHOLD, *gc.get_threshold()[1:])
    try:
        cli.main(standalone_mode=False, prog_name="statekit")
    except click.exceptions.Exit as exc:
        sys.exit(exc.exit_code)
    except click.ClickException as exc:
        exc.show()
        sys.exit(EXIT_USAGE)
    except click.Abort:
        click.echo("aborted", err=True)
        sys.exit(EXIT_USAGE)
    except SystemExit:
        raise
    except BrokenPipeError:
        sys.exit(EXIT_USAGE)
    except OSError as exc:  # a path given cannot be written or read: the user's to fix
        click.echo(f"Error: {os_error_message(exc)}", err=True)
        sys.exit(EXIT_USAGE)
    except Exception as exc:
        click.echo(f"statekit: internal error: {type(exc).__name__}: {exc}", err=True)
        sys.exit(EXIT_USAGE)


def os_error_message(exc: OSError) -> str:
    """An OSError in words that say what is wrong with the path (for every command that
    reads or writes a path it was given, such as `-o/--output`)."""
    name = exc.filename
    if name is None:
        return f"{exc.strerror or exc}"
    path = Path(os.fsdecode(name))
    if isinstance(exc, NotADirectoryError):
        for part in [path, *path.parents]:
            if part.is_file():
                return f"{path}: {part} is a file, not a folder"
    if exc.errno == errno.ENOSPC:
        return f"{path}: disk full"
    return f"{path}: {exc.strerror or exc}"


if __name__ == "__main__":
    main()
