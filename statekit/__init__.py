"""statekit: declarative statecharts in YAML, compiled, checked, rendered and run.

Importing `statekit` is cheap: the compiler (and with it PyYAML and
jsonschema) is imported on first use of a public name, so that a CLI call or
an application that only needs one part does not pay for all of them.
`dir(statekit)` and `help(statekit)` list every public name all the same.

Compile and check: `load`, `compile_chart` (also `compile`), `CompileError`,
`Diagnostic`, `Severity`, `SourceSpan`, `CompiledChart`. Run in memory: `Chart`,
`State`, `Result`, `Status`, `Microstep`, `ArmedTimer`, `SentEvent`,
`EmittedMessage`, `replay`, `Event`, `ReplayResult`, `ReplayError`, `StartError`,
`StateFormatError`, `ChartMismatchError`. Run durably: `open_store`, `Runner`,
`ShardedRunner`, `Dispatcher`, `Inbox`, `Outcome`, `OutcomeStatus`, `prune`,
`RetentionPolicy`, `PruneReport`.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from statekit._version import __version__

# The one list of the public names: each name and the module it is imported from on first
# use; `__all__` is built from it. The TYPE_CHECKING re-exports below repeat it for type
# checkers only (tests/test_package.py keeps the two equal and resolves every name).
_LAZY = {
    "load": "statekit.api",
    "compile_chart": "statekit.api",
    "compile": "statekit.api",
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
    "ArmedTimer": "statekit.engine.timers",
    "SentEvent": "statekit.engine.timers",
    "EmittedMessage": "statekit.engine.result",
    "Event": "statekit.engine.replay",
    "ReplayResult": "statekit.engine.replay",
    "ReplayError": "statekit.engine.replay",
    "replay": "statekit.engine.replay",
    "ChartMismatchError": "statekit.engine.step",
    "open_store": "statekit.runner.store",
    "Runner": "statekit.runner.runner",
    "ShardedRunner": "statekit.runner.sharding",
    "Dispatcher": "statekit.runner.outbox",
    "Inbox": "statekit.runner.outbox",
    "Outcome": "statekit.runner.outcome",
    "OutcomeStatus": "statekit.runner.outcome",
    "prune": "statekit.runner.retention",
    "RetentionPolicy": "statekit.runner.retention",
    "PruneReport": "statekit.runner.retention",
}

_ALIASES = {"compile": "compile_chart"}
"""Public names that are another name for an object of their module (`compile`: a builtin)."""

__all__ = ["__version__", *_LAZY]

if TYPE_CHECKING:
    from statekit.api import compile_chart as compile_chart
    from statekit.api import load as load
    from statekit.compiler.diagnostics import CompileError as CompileError
    from statekit.compiler.diagnostics import Diagnostic as Diagnostic
    from statekit.compiler.diagnostics import Severity as Severity
    from statekit.compiler.diagnostics import SourceSpan as SourceSpan
    from statekit.compiler.ir import CompiledChart as CompiledChart
    from statekit.engine.chart import Chart as Chart
    from statekit.engine.chart import StartError as StartError
    from statekit.engine.replay import Event as Event
    from statekit.engine.replay import ReplayError as ReplayError
    from statekit.engine.replay import ReplayResult as ReplayResult
    from statekit.engine.replay import replay as replay
    from statekit.engine.result import EmittedMessage as EmittedMessage
    from statekit.engine.result import Microstep as Microstep
    from statekit.engine.result import Result as Result
    from statekit.engine.result import Status as Status
    from statekit.engine.state import State as State
    from statekit.engine.state import StateFormatError as StateFormatError
    from statekit.engine.step import ChartMismatchError as ChartMismatchError
    from statekit.engine.timers import ArmedTimer as ArmedTimer
    from statekit.engine.timers import SentEvent as SentEvent
    from statekit.runner.outbox import Dispatcher as Dispatcher
    from statekit.runner.outbox import Inbox as Inbox
    from statekit.runner.outcome import Outcome as Outcome
    from statekit.runner.outcome import OutcomeStatus as OutcomeStatus
    from statekit.runner.retention import PruneReport as PruneReport
    from statekit.runner.retention import RetentionPolicy as RetentionPolicy
    from statekit.runner.retention import prune as prune
    from statekit.runner.runner import Runner as Runner
    from statekit.runner.sharding import ShardedRunner as ShardedRunner
    from statekit.runner.store import open_store as open_store

    compile = compile_chart  # the alias of _ALIASES, as type checkers see it


_HOOKS = frozenset({"__dir__", "__getattr__"})


def __dir__() -> list[str]:
    """The public names, imported or not yet, and the module's dunders (`dir(statekit)`, and
    through it `help(statekit)`, list the whole public API and none of its machinery)."""
    dunders = {n for n in globals() if n.startswith("__") and n.endswith("__")}
    return sorted({*__all__, *dunders} - _HOOKS)


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'statekit' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), _ALIASES.get(name, name))
    globals()[name] = value
    return value
