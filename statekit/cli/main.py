"""The `statekit` command line.

Exit codes: 0 clean (warnings allowed), 1 findings at error severity, 2 usage
or internal error. Each command lives in a module of this package; the group
(`statekit.cli.group`) imports a module only when one of its commands runs.
"""

from __future__ import annotations

import sys

import click

from statekit.cli.group import EXIT_USAGE, cli


def main() -> None:
    """Console entry point: usage errors and crashes exit 2, never with a bare traceback."""
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
    except Exception as exc:
        click.echo(f"statekit: internal error: {type(exc).__name__}: {exc}", err=True)
        sys.exit(EXIT_USAGE)


if __name__ == "__main__":
    main()
