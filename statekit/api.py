"""The public Python entry points."""

from __future__ import annotations

from pathlib import Path

from statekit.compiler.diagnostics import CompileError
from statekit.compiler.ir import CompiledChart
from statekit.compiler.pipeline import compile_file
from statekit.compiler.source.limits import DEFAULT_LIMITS, Limits
from statekit.engine.chart import Chart


def compile_chart(path: str | Path, *, limits: Limits = DEFAULT_LIMITS) -> CompiledChart:
    """Compile the chart at `path` into its IR; raise `CompileError` (with `.diagnostics`).

    Public as `statekit.compile_chart` and, for short, `statekit.compile`.

    Analysis findings (unused events, unreachable states...) are `statekit lint`'s
    business and never stop a compile. `limits` bounds what the loader reads (size,
    nesting, aliases, nodes; `statekit.compiler.source.limits.Limits`).
    """
    chart, _source = _compiled(path, limits)
    return chart


def _compiled(path: str | Path, limits: Limits) -> tuple[CompiledChart, str | None]:
    """The chart compiled from the file at `path` and the text it was compiled from;
    `CompileError` when the file has errors."""
    result = compile_file(path, limits)
    if result.chart is None:
        raise CompileError(result.errors or result.diagnostics)
    return result.chart, result.source


def load(
    path: str | Path,
    *,
    max_microsteps: int | None = None,
    limits: Limits = DEFAULT_LIMITS,
    memo: bool = True,
) -> Chart:
    """Compile the chart at `path` and wrap it for running: `start`, `send`, `replay`.

    Raises `CompileError` (with `.diagnostics`) when the chart has errors.
    `max_microsteps` bounds each macrostep (default 1000; beyond it: LIVELOCK);
    `limits` what the loader reads (`statekit.compiler.source.limits.Limits`);
    `memo=False` runs every event on the engine's general path (see `Chart`).
    """
    ir, source = _compiled(path, limits)
    if max_microsteps is None:
        return Chart(ir, source=source, memo=memo)
    return Chart(ir, max_microsteps=max_microsteps, source=source, memo=memo)
