"""`statekit inspect`: serve the read-only web inspector over a store (`statekit.inspect`).

It binds to loopback unless told otherwise, and refuses (exit 2) any other address
without `--token`: the pages show every payload the store holds.
"""

from __future__ import annotations

import ipaddress
import re
import socket
import sys
import threading

import click

from statekit.cli.chart_paths import chart_files
from statekit.cli.runner_commands import compiled_chart, open_cli_reader
from statekit.runner.store.postgres_connect import safe_url

WAITING_NOTE_AFTER = 2.0
"""Seconds the store may take to open before the command says it is waiting."""
TOKEN_PATTERN = re.compile(r"[A-Za-z0-9._~-]{16,}")
"""What a token may be: 16 or more URL- and cookie-safe characters."""


def is_loopback(host: str) -> bool:
    """Whether `host` names only this machine (localhost, 127.0.0.0/8, ::1)."""
    if host.lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


@click.command("inspect")
@click.option("--db", "url", required=True, help="The store's URL (sqlite:///… or postgresql://…).")
@click.option(
    "--chart",
    "charts",
    multiple=True,
    type=click.Path(exists=True),
    help="A chart file or a folder of charts (repeatable): their diagrams and analyses.",
)
@click.option("--host", default="127.0.0.1", show_default=True, help="The address to bind.")
@click.option("--port", default=8400, show_default=True, type=click.IntRange(0, 65535))
@click.option(
    "--token",
    default=None,
    help="A secret every request must carry (required on a non-loopback --host); "
    "16 or more of A-Z a-z 0-9 . _ ~ -.",
)
def inspect_command(
    url: str, charts: tuple[str, ...], host: str, port: int, token: str | None
) -> None:
    """Serve a read-only web inspector of the store at --db (instances, their histories,
    charts), on http://127.0.0.1:8400/ by default, until interrupted."""
    if token is not None and not TOKEN_PATTERN.fullmatch(token):
        raise click.BadParameter(
            "16 or more of the characters A-Z a-z 0-9 . _ ~ -", param_hint="--token"
        )
    if token is None and not is_loopback(host):
        raise click.UsageError(
            f"--host {host} is not loopback: anyone who reaches it would read every "
            "payload in the store; give --token (e.g. --token $(openssl rand -hex 16)) "
            "or bind to 127.0.0.1"
        )
    try:
        import uvicorn

        from statekit.inspect.app import create_app
        from statekit.inspect.context import Inspector, charts_by_version
    except ImportError as exc:
        raise click.UsageError(
            f"statekit inspect needs the inspect extra ({exc.name} is missing): "
            "pip install 'statekit[inspect]'"
        ) from exc
    given = [compiled_chart(path) for path in chart_files(charts)]
    # a clear error now, not per page; a line while a slow or unreachable server is awaited
    waiting = threading.Timer(
        WAITING_NOTE_AFTER,
        lambda: click.echo(
            f"statekit inspect: waiting for the database at {safe_url(url)}…", err=True
        ),
    )
    waiting.start()
    try:
        open_cli_reader(url, check_integrity=False).close()
    finally:
        waiting.cancel()
    inspector = Inspector(url, charts_by_version(given), token=token)
    listening = _listening(host, port)
    bound_port = listening.getsockname()[1]
    wildcard = host.strip("[]") in ("0.0.0.0", "::")
    # a wildcard bind is reached by this machine's name, not by 0.0.0.0
    shown = socket.gethostname() if wildcard else host
    shown_host = f"[{shown}]" if ":" in shown else shown
    address = f"http://{shown_host}:{bound_port}/" + (f"?token={token}" if token else "")
    note = " (or any other name or address this machine is reached by)" if wildcard else ""
    # said once the socket listens: a client that reads this line can connect at once
    click.echo(f"statekit inspect: {inspector.display_url} on {address}{note}", err=True)
    sys.stderr.flush()
    server = uvicorn.Server(uvicorn.Config(create_app(inspector), log_level="warning"))
    server.run(sockets=[listening])


def _listening(host: str, port: int) -> socket.socket:
    """A socket bound to `host`:`port` and listening (port 0: one the system picks), or a
    usage error saying why it cannot be."""
    try:
        family = socket.AF_INET6 if ":" in host.strip("[]") else socket.AF_INET
        listening = socket.socket(family, socket.SOCK_STREAM)
        listening.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        listening.bind((host.strip("[]"), port))
        listening.listen(128)
    except OSError as exc:
        raise click.UsageError(f"cannot listen on {host}:{port}: {exc.strerror or exc}") from exc
    return listening
