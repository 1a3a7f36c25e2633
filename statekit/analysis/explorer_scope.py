"""The explorer's working caches for a stretch of the search, and the runs they share.

The engine's per-configuration caches (selection inputs, memo verdicts,
microstep plans) and the explorer's own caches keyed by engine configurations
live in an `ExplorerScope` that the explorer drops and starts afresh every
`SCOPE_EXPANSIONS` expanded abstract states (`statekit.analysis.explorer`), so
they do not grow with the exploration; what the search answers does not depend
on it (every run is a function of the configuration, the history, the tracked context
values and the event).
A run of a macrostep is kept as a `PreparedRun`: what every abstract state
with the same configuration and tracked values (and history values it read) shares.
"""

from __future__ import annotations

from dataclasses import dataclass

from statekit.analysis.macrostep_branches import MacrostepBranch
from statekit.analysis.selection_reads import SelectionReads
from statekit.analysis.timers import ArmedTimers
from statekit.compiler.ir import CompiledChart
from statekit.engine.tables import Configuration, Tables


@dataclass(frozen=True, slots=True)
class PreparedRun:
    """A run reduced to what every abstract state with the same configuration (and the
    same values of the history states it read) shares: where it ends (an engine
    configuration of the current scope), its history records, and its branch: with
    `target` BEYOND when it fired (each state's own target is stored beside it), the
    branch itself when nothing fired (`target` None)."""

    branch: MacrostepBranch
    target: Configuration | None
    updates: tuple[tuple[int, tuple[int, ...]], ...]
    """The history records of its microsteps, in order."""
    valuation: int = 0
    """The tracked context values it ends with (`Exploration.valuation_number`)."""


class ExplorerScope:
    """The engine's working tables for a stretch of the search, and what the explorer
    caches per engine configuration of them (dropped together: see the module docstring)."""

    __slots__ = (
        "configs",
        "numbers",
        "selection",
        "shared",
        "stable",
        "tables",
        "timers",
        "variants",
    )

    def __init__(self, chart: CompiledChart, named: tuple[frozenset[str], ...]) -> None:
        self.tables = Tables(chart)
        self.selection = SelectionReads(chart, self.tables, named)
        self.configs: dict[int, Configuration] = {}
        """Configuration number (`Exploration.config_number`) → engine configuration."""
        self.numbers: dict[Configuration, int] = {}
        self.stable: dict[tuple[Configuration, int], dict[object, bool]] = {}
        """(configuration, valuation number) → its `stable_facts`."""
        self.shared: dict[tuple[Configuration, str, int], list[PreparedRun]] = {}
        """(configuration, event, valuation number) → runs that read no history."""
        self.variants: dict[
            tuple[Configuration, str, int],
            list[tuple[tuple[int, ...], tuple[object, ...], list[PreparedRun]]],
        ] = {}
        self.timers = ArmedTimers(chart)
