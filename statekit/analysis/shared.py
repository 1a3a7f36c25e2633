"""One exploration per chart, shared by every analysis rule of a lint run.

The lint rules are pure `check(chart)` functions; they call `exploration(chart)`,
which explores the chart once and keeps the result for the other rules (a
small cache keyed by the chart object). Options such as the bound on
configurations and a progress display are set by the caller around the run:

    with exploration_options(max_configurations=10_000):
        findings = [d for rule in rules for d in rule.check(chart)]
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager, nullcontext
from contextvars import ContextVar
from dataclasses import dataclass, replace

from statekit.analysis.explorer import DEFAULT_MAX_CONFIGURATIONS, Exploration, Progress, explore
from statekit.compiler.ir import CompiledChart

ProgressFactory = Callable[[CompiledChart], AbstractContextManager[Progress | None]]
"""Makes the progress callback of one exploration (e.g. a progress bar on a terminal)."""


@dataclass(frozen=True, slots=True)
class ExplorationOptions:
    """How explorations started by the analysis rules are run."""

    max_configurations: int = DEFAULT_MAX_CONFIGURATIONS
    progress: ProgressFactory | None = None


_DEFAULTS = ExplorationOptions()
_OPTIONS: ContextVar[ExplorationOptions | None] = ContextVar(
    "statekit_exploration_options", default=None
)
_CACHE: OrderedDict[int, tuple[CompiledChart, int, Exploration]] = OrderedDict()
_CACHE_SIZE = 4


@contextmanager
def exploration_options(
    *, max_configurations: int | None = None, progress: ProgressFactory | None = None
) -> Iterator[ExplorationOptions]:
    """Run the enclosed explorations with these options (unset ones keep their value)."""
    current = _OPTIONS.get() or _DEFAULTS
    if max_configurations is not None:
        current = replace(current, max_configurations=max_configurations)
    if progress is not None:
        current = replace(current, progress=progress)
    token = _OPTIONS.set(current)
    try:
        yield current
    finally:
        _OPTIONS.reset(token)


def exploration(chart: CompiledChart) -> Exploration:
    """The exploration of `chart` under the current options (explored once, then cached)."""
    options = _OPTIONS.get() or _DEFAULTS
    key = id(chart)
    cached = _CACHE.get(key)
    if cached is not None and cached[0] is chart and cached[1] == options.max_configurations:
        _CACHE.move_to_end(key)
        return cached[2]
    factory = options.progress
    with factory(chart) if factory is not None else nullcontext() as progress:
        result = explore(chart, max_configurations=options.max_configurations, progress=progress)
    _CACHE[key] = (chart, options.max_configurations, result)
    while len(_CACHE) > _CACHE_SIZE:
        _CACHE.popitem(last=False)
    return result


def clear() -> None:
    """Forget every cached exploration (for benchmarks and long-lived processes)."""
    _CACHE.clear()
