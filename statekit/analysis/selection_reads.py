"""What a macrostep from one configuration can depend on, cached per configuration.

Two questions the explorer asks before running a macrostep: which events can
select anything at all in a configuration (`fireable_events`: every other
event is UNDEFINED_TRANSITION there, decided without a macrostep), and which
history states' values a selection may read (`history_reads`, `run_reads`:
runs are shared by every abstract state whose values of those agree). The
answers are cached by engine configuration, so a `SelectionReads` lives in the
explorer's scope and is dropped with it.
"""

from __future__ import annotations

from statekit.compiler.ir import CompiledChart, StateKind
from statekit.engine.abstract import AbstractMacrostep
from statekit.engine.tables import Configuration, Tables


def named_events(chart: CompiledChart) -> tuple[frozenset[str], ...]:
    """State id → the events its `already` and `reject` entries name (`*` included)."""
    return tuple(
        frozenset(entry.event for entry in (*state.already, *state.reject))
        for state in chart.states
    )


class SelectionReads:
    """Per-configuration answers for one scope of the explorer (see the module
    docstring); `named` is `named_events(chart)`."""

    __slots__ = ("chart", "fireable", "named", "reads", "tables")

    def __init__(
        self, chart: CompiledChart, tables: Tables, named: tuple[frozenset[str], ...]
    ) -> None:
        self.chart = chart
        self.tables = tables
        self.named = named
        self.fireable: dict[Configuration, frozenset[str]] = {}
        self.reads: dict[tuple[Configuration, str | None], frozenset[int]] = {}

    def fireable_events(self, config: Configuration) -> frozenset[str]:
        """The events some active state has a transition for, or that an `already` or
        `reject` entry of an active state (or the root) may classify: every other event is
        UNDEFINED_TRANSITION here (the chart not being final)."""
        fireable = self.fireable
        found = fireable.get(config)
        if found is None:
            candidates, named = self.chart.candidates, self.named
            out: set[str] = set(named[0])
            for state in config.atomic:
                out.update(candidates[state])
            for state in config.ordered:
                out.update(named[state])
            found = fireable[config] = frozenset(out)
        return found

    def history_reads(self, config: Configuration, event: str | None) -> frozenset[int]:
        """The history states whose values a selection for `event` (None: eventless) in
        `config` may read: those that candidate transitions target, and the history
        states in their defaults. Only through them can a macrostep depend on history."""
        key = (config, event)
        reads = self.reads
        found = reads.get(key)
        if found is None:
            out: set[int] = set()
            targeting = self.tables.history_targeting
            if targeting:
                table, eventless = self.chart.candidates, self.chart.eventless
                for state in config.atomic:
                    ids = eventless[state] if event is None else table[state].get(event, ())
                    for tid in targeting.intersection(ids):
                        for target in self.chart.transitions[tid].targets:
                            self._history_closure(target, out)
            found = reads[key] = frozenset(out)
        return found

    def _history_closure(self, state: int, out: set[int]) -> None:
        node = self.chart.states[state]
        if node.kind is StateKind.HISTORY and state not in out:
            out.add(state)
            for s in node.history_default:
                self._history_closure(s, out)

    def run_reads(self, config: Configuration, run: AbstractMacrostep) -> frozenset[int]:
        """The history states one run may have read (every selection that fired)."""
        if not self.tables.history_targeting:
            return frozenset()
        out: frozenset[int] = frozenset()
        source = config
        for event, plan in zip(run.selected_for, run.plans, strict=True):
            out |= self.history_reads(source, event)
            source = plan.target
        return out
