"""The lazy command group: every command resolves, and lint imports only what it needs."""

from __future__ import annotations

import subprocess
import sys

import click

from statekit.cli.group import COMMANDS, cli


def test_every_listed_command_resolves_to_a_click_command() -> None:
    context = click.Context(cli)
    for name in COMMANDS:
        command = cli.get_command(context, name)
        assert isinstance(command, click.Command)
        assert command.name == name


def test_lint_does_not_import_renderers_runner_or_rich() -> None:
    code = (
        "import sys\n"
        "from statekit.cli.main import main\n"
        "sys.argv = ['statekit', 'lint', 'machines/payment.yaml']\n"
        "try:\n    main()\nexcept SystemExit:\n    pass\n"
        "loaded = [m for m in ('statekit.diagrams.dot', 'statekit.runner.runner', 'rich.console')"
        " if m in sys.modules]\n"
        "print(','.join(loaded))\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == ""
