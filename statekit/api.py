"""The public Python entry points."""

from __future__ import annotations

from pathlib import Path

from statekit.compiler.diagnostics import CompileError
from statekit.compiler.ir import CompiledChart
from statekit.compiler.pipeline import compile_file


def load(path: str | Path) -> CompiledChart:
    """Compile the chart at `path`; raise `CompileError` (with `.diagnostics`) if it has errors.

    Analysis findings (unused events, unreachable states...) are `statekit lint`'s
    business and never stop a load.
    """
    result = compile_file(path)
    if result.chart is None:
        raise CompileError(result.errors or result.diagnostics)
    return result.chart
