"""How an exploration is run: its bound and its progress display, as one frozen record.

The caller (the lint runner, `statekit explain`, `statekit paths`) decides
the options and passes them explicitly:

    facts = chart_facts(chart, ExplorationOptions(max_configurations=10_000))
"""

from __future__ import annotations

from collections.abc import Callable
from contextlib import AbstractContextManager, nullcontext
from dataclasses import dataclass

from statekit.analysis.components import RegionComponents
from statekit.analysis.exploration import Exploration
from statekit.analysis.explorer import (
    DEFAULT_MAX_CONFIGURATIONS,
    DEFAULT_MAX_MEMORY,
    Progress,
    explore,
)
from statekit.compiler.ir import CompiledChart

COMPOSE_ABOVE = 10_000
"""Above this many configurations of the regions' product (`configurations_bound`), the
lint facts explore independent regions apart: below it the product costs about a second
at most, and its notes count every configuration of the chart."""

ProgressFactory = Callable[[CompiledChart], AbstractContextManager[Progress | None]]
"""Makes the progress callback of one exploration (e.g. a progress bar on a terminal)."""


@dataclass(frozen=True, slots=True)
class ExplorationOptions:
    """The bounds on abstract states and on the memory the exploration may grow the
    process by (bytes), what makes the progress display (None: none), and above how many
    configurations the regions' product may have before the lint facts explore
    independent regions apart (`compose_above`, see `statekit.analysis.compositional`:
    0 always, `sys.maxsize` never)."""

    max_configurations: int = DEFAULT_MAX_CONFIGURATIONS
    progress: ProgressFactory | None = None
    max_memory: int = DEFAULT_MAX_MEMORY
    compose_above: int = COMPOSE_ABOVE


def explore_with(
    chart: CompiledChart,
    options: ExplorationOptions,
    components: RegionComponents | None = None,
) -> Exploration:
    """Explore `chart` with these options (the progress display around the exploration),
    its regions apart when `components` are given (`statekit.analysis.explorer.explore`)."""
    factory = options.progress
    with factory(chart) if factory is not None else nullcontext() as progress:
        return explore(
            chart,
            max_configurations=options.max_configurations,
            max_memory=options.max_memory,
            progress=progress,
            components=components,
        )
