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
    from statekit.api import compile_chart, load
    from statekit.api import compile_chart as compile
    from statekit.compiler.diagnostics import CompileError, Diagnostic, Severity, SourceSpan
    from statekit.compiler.ir import CompiledChart
    from statekit.engine.chart import Chart, StartError
    from statekit.engine.replay import Event, ReplayError, ReplayResult, replay
    from statekit.engine.result import EmittedMessage, Microstep, Result, Status
    from statekit.engine.state import State, StateFormatError
    from statekit.engine.step import ChartMismatchError
    from statekit.runner.outbox import Dispatcher, Inbox
    from statekit.runner.outcome import Outcome, OutcomeStatus
    from statekit.runner.runner import Runner
    from statekit.runner.store import open_store

_ALIASES = {"compile": "compile_chart"}
"""Public names that are another name for a function (`compile` shadows the builtin)."""

_LAZY = {
    "load": "statekit.api",
    "compile": "statekit.api",
    "compile_chart": "statekit.api",
    "CompileError": "statekit.compiler.diagnostics",
    "Diagnostic": "statekit.compiler.diagnostics",
    "Severity": "statekit.compiler.diagnostics",
    "SourceSpan": "statekit.compiler.diagnostics",
    "CompiledChart": "statekit.compiler.ir",
    "Chart": "statekit.engine.chart",
    "StartError": "statekit.engine.chart",
    "State": "statekit.engine.state",
    "StateFormatError": "statekit.engine.state",
    "Result": "statekit.engine.result",
    "Status": "statekit.engine.result",
    "Microstep": "statekit.engine.result",
    "EmittedMessage": "statekit.engine.result",
    "Event": "statekit.engine.replay",
    "ReplayResult": "statekit.engine.replay",
    "ReplayError": "statekit.engine.replay",
    "replay": "statekit.engine.replay",
    "ChartMismatchError": "statekit.engine.step",
    "open_store": "statekit.runner.store",
    "Runner": "statekit.runner.runner",
    "Dispatcher": "statekit.runner.outbox",
    "Inbox": "statekit.runner.outbox",
    "Outcome": "statekit.runner.outcome",
    "OutcomeStatus": "statekit.runner.outcome",
}

__all__ = [
    "Chart",
    "ChartMismatchError",
    "CompileError",
    "CompiledChart",
    "Diagnostic",
    "Dispatcher",
    "EmittedMessage",
    "Event",
    "Inbox",
    "Microstep",
    "Outcome",
    "OutcomeStatus",
    "ReplayError",
    "ReplayResult",
    "Result",
    "Runner",
    "Severity",
    "SourceSpan",
    "StartError",
    "State",
    "StateFormatError",
    "Status",
    "compile",
    "compile_chart",
    "load",
    "open_store",
    "replay",
]


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'statekit' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), _ALIASES.get(name, name))
    globals()[name] = value
    return value
