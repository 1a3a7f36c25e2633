"""The public Python entry points."""

from __future__ import annotations

from pathlib import Path

from statekit.compiler.diagnostics import CompileError
from statekit.compiler.ir import CompiledChart
from statekit.compiler.pipeline import compile_file
from statekit.engine.chart import Chart


def compile_chart(path: str | Path) -> CompiledChart:
    """Compile the chart at `path` into its IR; raise `CompileError` (with `.diagnostics`).

    Public as `statekit.compile_chart` and, for short, `statekit.compile`.

    Analysis findings (unused events, unreachable states...) are `statekit lint`'s
    business and never stop a compile.
    """
    chart, _source = _compiled(path)
    return chart


def _compiled(path: str | Path) -> tuple[CompiledChart, str | None]:
    """The chart compiled from the file at `path` and the text it was compiled from;
    `CompileError` when the file has errors."""
    result = compile_file(path)
    if result.chart is None:
        raise CompileError(result.errors or result.diagnostics)
    return result.chart, result.source


def load(path: str | Path, *, max_microsteps: int | None = None) -> Chart:
    """Compile the chart at `path` and wrap it for running: `start`, `send`, `replay`.

    Raises `CompileError` (with `.diagnostics`) when the chart has errors.
    `max_microsteps` bounds each macrostep (default 1000; beyond it: LIVELOCK).
    """
    ir, source = _compiled(path)
    if max_microsteps is None:
        return Chart(ir, source=source)
    return Chart(ir, max_microsteps=max_microsteps, source=source)
