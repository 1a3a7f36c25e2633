"""What the chart page says about a chart version: its static state x event classification,
and, from one bounded exploration, its invariants with their proofs and its races.

The classification table (`diagrams.classify`) is static and cheap. The
exploration is not: it is run once per chart digest, in a background thread,
under the inspector's bounds (`MAX_CONFIGURATIONS` abstract states and
`MAX_MEMORY` bytes of growth: past them the explorer stops and says which
bound it hit), and its answer is kept in memory. A page asks for it and waits
at most `WAIT_SECONDS`; until it is ready the page says the analysis is running
(and redraws when it is: the page reloads the region). So a page never hangs
on a large chart, and a chart is never explored twice.
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass

from statekit.analysis.explain import InvariantStatus, invariant_statuses
from statekit.analysis.exploration import Exploration
from statekit.analysis.options import ExplorationOptions, explore_with
from statekit.analysis.races import Race, races_of
from statekit.analysis.report import path_notes
from statekit.compiler.invariant_ir import StateInvariant
from statekit.compiler.ir import CompiledChart
from statekit.diagrams.classification_text import cell_words
from statekit.diagrams.classify import classify
from statekit.diagrams.model import extract
from statekit.engine.chart import Chart

MAX_CONFIGURATIONS = 5_000
"""The inspector's bound on abstract states (the CLI's default is 100,000). A page should
have its answer in seconds: 20,000 abstract states of a chart of 15 parallel regions took
30 s to explore and 77 s more to search for races on a loaded 2-core machine, 2,000 took
3 s; `statekit explain` and `statekit races` explore further."""
MAX_MEMORY = 256 << 20
"""The inspector's bound on the memory an exploration may grow the process by."""
WAIT_SECONDS = 3.0
"""How long a page waits for an exploration before saying it is still running."""
CACHED_ANALYSES = 32
"""How many charts' analyses are kept (the oldest started goes first)."""


@dataclass(frozen=True, slots=True)
class InvariantProof:
    """An invariant, its status (`proven`, `violated`, `runtime`, `not proven`), what
    the analysis established (`detail`), its description and, for a violated one, the
    shortest path to a configuration that breaks it (lines)."""

    status: InvariantStatus
    description: str | None
    path: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class Analysis:
    """One exploration's findings: `complete` False with `limits` (the bounds it hit:
    "analysis limit reached"), the invariants, the races (order-sensitive pairs) and the
    number of convergent pairs, searched only when the exploration is complete (the
    search costs a multiple of the exploration: past a bound, `statekit races` searches);
    `error` when the exploration failed."""

    complete: bool
    limits: tuple[str, ...]
    configurations: int
    invariants: tuple[InvariantProof, ...]
    races: tuple[Race, ...]
    convergent: int
    error: str | None = None


class _Job:
    def __init__(self) -> None:
        self.done = threading.Event()
        self.result: Analysis | None = None


_jobs: dict[str, _Job] = {}
_lock = threading.Lock()


def analysis(chart: Chart, wait: float = WAIT_SECONDS) -> Analysis | None:
    """The chart's analysis, started on the first call for its digest; None while it is
    still running after `wait` seconds."""
    with _lock:
        job = _jobs.get(chart.digest)
        if job is None:
            if len(_jobs) >= CACHED_ANALYSES:
                oldest = next((k for k, j in _jobs.items() if j.done.is_set()), None)
                if oldest is not None:
                    del _jobs[oldest]
            job = _jobs[chart.digest] = _Job()
            threading.Thread(
                target=_run, args=(job, chart.ir), name=f"analysis {chart.name}", daemon=True
            ).start()
    job.done.wait(wait)
    return job.result


def wait_for_analyses(timeout: float) -> bool:
    """Wait until every analysis started in this process has finished (at most `timeout`
    seconds in all); whether they all have. A server never needs it; a process that
    measures itself after serving pages does (the analyses run in threads of their own)."""
    with _lock:
        jobs = list(_jobs.values())
    deadline = time.monotonic() + timeout
    return all(job.done.wait(max(0.0, deadline - time.monotonic())) for job in jobs)


def _run(job: _Job, chart: CompiledChart) -> None:
    try:
        options = ExplorationOptions(max_configurations=MAX_CONFIGURATIONS, max_memory=MAX_MEMORY)
        job.result = analyse(explore_with(chart, options))
    except Exception as exc:
        job.result = Analysis(False, (), 0, (), (), 0, error=f"{type(exc).__name__}: {exc}")
    finally:
        job.done.set()


def analyse(exploration: Exploration) -> Analysis:
    """The findings of an exploration (see `Analysis`)."""
    chart = exploration.chart
    proofs: list[InvariantProof] = []
    for invariant, status in zip(chart.invariants, invariant_statuses(exploration), strict=True):
        path: tuple[str, ...] = ()
        if status.status == "violated":
            node = _first_breaking(exploration, invariant.name)
            if node is not None:
                path = path_notes(exploration, node)
        proofs.append(InvariantProof(status, invariant.description, path))
    races: tuple[Race, ...] = ()
    convergent = 0
    if exploration.complete:  # the race search costs a multiple of the exploration
        report = races_of(exploration)
        races, convergent = report.races, len(report.convergent)
    return Analysis(
        complete=exploration.complete,
        limits=tuple(limit.message for limit in exploration.limits),
        configurations=len(exploration.configurations()),
        invariants=tuple(proofs),
        races=races,
        convergent=convergent,
    )


def _first_breaking(exploration: Exploration, name: str) -> int | None:
    """The first node (breadth-first) breaking the state invariant `name`."""
    invariant = next(i for i in exploration.chart.invariants if i.name == name)
    if not isinstance(invariant, StateInvariant):
        return None
    for node in exploration.nodes:
        if name in exploration.tables.broken_state_invariants(node.config):
            return node.id
    return None


@dataclass(frozen=True, slots=True)
class ClassificationRow:
    """One leaf state of the table and its cell text per declared event."""

    state: str
    cells: tuple[str, ...]


def classification(chart: CompiledChart) -> tuple[tuple[str, ...], tuple[ClassificationRow, ...]]:
    """The declared events and, per leaf state, what each event does there, in the words
    of `diagrams.classification_text.cell_words` (the docs pages' words too)."""
    events = tuple(chart.events)
    drawn = extract(chart)
    rows: dict[int, list[str]] = {}
    for cell in classify(chart):
        rows.setdefault(cell.state, []).append(cell_words(drawn, cell))
    return events, tuple(
        ClassificationRow(chart.states[state].path, tuple(cells)) for state, cells in rows.items()
    )
