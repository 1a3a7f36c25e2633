"""`statekit lsp`: the language server, over standard input and output."""

from __future__ import annotations

import click

from statekit.analysis.explorer import DEFAULT_MAX_CONFIGURATIONS
from statekit.cli.group import EXIT_USAGE
from statekit.lsp.settings import (
    DEFAULT_ANALYSIS_DELAY_S,
    DEFAULT_COMPILE_DELAY_S,
    DEFAULT_MAX_MESSAGE_BYTES,
    ServerSettings,
)

LSP_REQUIREMENT = "pygls>=2.0,<3"
"""What the `lsp` extra installs (pyproject.toml); statekit is on no package index, so the
message names this requirement, not the extra."""


@click.command("lsp")
@click.option(
    "--max-configurations",
    type=click.IntRange(min=1),
    default=DEFAULT_MAX_CONFIGURATIONS,
    show_default=True,
    help="Bound on the abstract states the analysis rules explore per chart.",
)
@click.option(
    "--compile-delay",
    type=click.FloatRange(min=0),
    default=DEFAULT_COMPILE_DELAY_S * 1000,
    show_default=True,
    help="Milliseconds of quiet after an edit before the chart is compiled.",
)
@click.option(
    "--analysis-delay",
    type=click.FloatRange(min=0),
    default=DEFAULT_ANALYSIS_DELAY_S * 1000,
    show_default=True,
    help="Milliseconds the text must be still before the analysis rules run (a save runs them).",
)
@click.option(
    "--max-message-bytes",
    type=click.IntRange(min=1),
    default=DEFAULT_MAX_MESSAGE_BYTES,
    show_default=True,
    help="Largest message body read; a longer one is answered with an error and skipped.",
)
def lsp_command(
    max_configurations: int, compile_delay: float, analysis_delay: float, max_message_bytes: int
) -> None:
    """Run the statekit language server on stdin/stdout (for editors).

    Charts get compile findings as you type and the analysis rules' findings on
    save or when the text is still, plus completion, hover, definitions,
    references, outline, rename and quick fixes. Needs the `lsp` extra
    (pygls): pip install 'pygls>=2.0,<3'.
    """
    try:
        from statekit.lsp.features import make_server
    except ImportError as exc:
        if (exc.name or "").split(".")[0] not in {"pygls", "lsprotocol"}:
            raise
        click.echo(
            "statekit lsp needs the language server library pygls (statekit's `lsp` extra): "
            f"pip install {LSP_REQUIREMENT!r}",
            err=True,
        )
        raise SystemExit(EXIT_USAGE) from None
    settings = ServerSettings(
        compile_delay_s=compile_delay / 1000,
        analysis_delay_s=analysis_delay / 1000,
        max_configurations=max_configurations,
        max_message_bytes=max_message_bytes,
    )
    make_server(settings).start_io()
