"""statekit: declarative statecharts in YAML, compiled, checked, rendered and run.

Importing `statekit` is cheap: the compiler (and with it PyYAML and
jsonschema) is imported on first use of a public name, so that a CLI call or
an application that only needs one part does not pay for all of them.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

__version__ = "0.1.0"

if TYPE_CHECKING:
    from statekit.api import load
    from statekit.compiler.diagnostics import CompileError, Diagnostic, Severity, SourceSpan
    from statekit.compiler.ir import CompiledChart

_LAZY = {
    "load": "statekit.api",
    "CompileError": "statekit.compiler.diagnostics",
    "Diagnostic": "statekit.compiler.diagnostics",
    "Severity": "statekit.compiler.diagnostics",
    "SourceSpan": "statekit.compiler.diagnostics",
    "CompiledChart": "statekit.compiler.ir",
}

__all__ = ["CompileError", "CompiledChart", "Diagnostic", "Severity", "SourceSpan", "load"]


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'statekit' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value
