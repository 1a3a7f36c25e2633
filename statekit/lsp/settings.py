"""The language server's settings: how it schedules its stages and bounds its explorations.

Kept apart from `server` (which needs pygls) so that `statekit lsp --help` shows
the defaults without the `lsp` extra installed.
"""

from __future__ import annotations

from dataclasses import dataclass

from statekit.analysis.explorer import DEFAULT_MAX_CONFIGURATIONS

DEFAULT_COMPILE_DELAY_S = 0.05
"""Seconds of quiet after a change before the compile stage runs (a burst compiles once)."""
DEFAULT_ANALYSIS_DELAY_S = 1.0
"""Seconds the text must be still before the analysis rules run (a save runs them at once)."""
DEFAULT_MAX_MESSAGE_BYTES = 64 * 1024 * 1024
"""The largest message body the server reads; a longer one is answered with an error and
skipped (a chart of tens of megabytes still fits)."""


@dataclass(frozen=True, slots=True)
class ServerSettings:
    """How the server schedules its stages and bounds its explorations."""

    compile_delay_s: float = DEFAULT_COMPILE_DELAY_S
    analysis_delay_s: float = DEFAULT_ANALYSIS_DELAY_S
    max_configurations: int = DEFAULT_MAX_CONFIGURATIONS
    max_message_bytes: int = DEFAULT_MAX_MESSAGE_BYTES
