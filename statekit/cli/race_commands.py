"""`statekit races PATH...`: every pair of events whose order of arrival matters, by class.

For each chart: each pair of events of different producers (or of no declared
one) that is order-sensitive somewhere, with its class (`race`: the orders end
in different states; `info`: they end alike but answer an event differently),
shown at the configuration where its orders differ most, with both orders'
outcomes, a replay of each with payloads, the data-guard outcomes assumed,
how many other configurations it occurs in, and whether `races:` decides it
(`statekit.analysis.races`). `--all` lists the convergent pairs too (their
orders end alike with the same answers everywhere) and every configuration
of each pair. A folder names the charts in it, as for `statekit
lint` (`statekit.lint.lint_files.collect_files`); an invocation's events come
from a producer of its own, `invoke.<id>`, which also sends the events its
child (when among the charts named) sends to the parent. Exit codes as
`statekit lint`: 0 when every race is decided, 1 when one is not (or a chart
does not compile, or an exploration hit its bound, so a race may be missing),
2 for usage errors.
"""

from __future__ import annotations

import sys
from collections.abc import Mapping

import click

from statekit.analysis.options import ExplorationOptions
from statekit.analysis.race_witness import race_replays
from statekit.analysis.races import (
    CONVERGENT,
    RACE,
    OrderOutcome,
    Race,
    RaceReport,
    find_races,
)
from statekit.analysis.witness import PathReplays
from statekit.cli.group import EXIT_CLEAN, EXIT_FINDINGS
from statekit.cli.output import echo_json
from statekit.cli.progress import (
    max_configurations_option,
    max_memory_option,
    skip_final_collection,
    terminal_progress,
)
from statekit.compiler.chart_set import ChartSet, arrival_states
from statekit.compiler.ir import CompiledChart
from statekit.compiler.pipeline import compile_file
from statekit.compiler.terminal_text import terminal_text
from statekit.lint.formats import format_diagnostics
from statekit.lint.lint_files import UsageError, collect_files
from statekit.lint.registry import rule_infos


@click.command("races")
@click.argument("paths", nargs=-1, required=True, type=click.Path(exists=True))
@click.option(
    "--format",
    "output_format",
    type=click.Choice(["text", "json"]),
    default="text",
    show_default=True,
    help="text: each race with both orders' outcomes; json: a list with one object per "
    "pair of events (`class`, `configurations`, `elsewhere` added to each).",
)
@click.option(
    "--all",
    "show_all",
    is_flag=True,
    help="Also list the convergent pairs, and every configuration of each pair.",
)
def races_command(
    paths: tuple[str, ...],
    output_format: str,
    show_all: bool,
    max_configurations: int,
    max_memory_mib: int,
) -> None:
    """Every race: pairs of events whose order of arrival changes the answer, where, both
    orders' outcomes, and whether `races:` decides it. PATHS are chart files or folders
    (their charts, found as `statekit lint` finds them)."""
    try:
        files = collect_files(paths)
    except UsageError as exc:
        raise click.UsageError(str(exc)) from exc
    options = ExplorationOptions(
        max_configurations=max_configurations,
        progress=terminal_progress,
        max_memory=max_memory_mib << 20,
    )
    reports: list[RaceReport] = []
    failed = False
    compiled = [(file, compile_file(file)) for file in files]
    # the charts named together: an invoked child's sends to its parent are its producer's
    chart_set = ChartSet(tuple(r.chart for _, r in compiled if r.chart is not None))
    for file, result in compiled:
        if result.chart is None:
            click.echo(
                format_diagnostics("text", result.diagnostics, rule_infos()), nl=False, err=True
            )
            failed = True
            continue
        report = find_races(result.chart, options, chart_set)
        for limit in report.limits[:1]:
            click.echo(f"statekit: {file}: {limit.message}; races past it are not listed", err=True)
            failed = True
        reports.append(report)
    if output_format == "json":
        data = []
        for report in reports:
            races = report.races + report.convergent if show_all else report.races
            shared = PathReplays(report.exploration)
            for race, item in zip(races, report.to_json(convergent=show_all), strict=True):
                replays = race_replays(report.exploration, race, shared)
                for order, replay in zip(item["orders"], replays, strict=True):
                    order["replay"] = [
                        {"event": event, "payload": payload}
                        for event, payload in zip(replay.events, replay.payloads, strict=True)
                    ]
                    if replay.start:
                        order["start_context"] = dict(replay.start)
                data.append(item)
        echo_json(data, indent=2)
    else:
        lines = (ln for report in reports for ln in _text(report, show_all, chart_set))
        click.echo("\n".join(terminal_text(ln) for ln in lines))
    # an undecided `info` pair (the same end state, another answer) is listed, as lint
    # reports it at severity info, but does not fail the command
    undecided = any(race.race_class == RACE for report in reports for race in report.undecided)
    skip_final_collection()
    sys.exit(EXIT_FINDINGS if failed or undecided else EXIT_CLEAN)


def _text(report: RaceReport, show_all: bool, chart_set: ChartSet) -> list[str]:
    chart = report.chart
    arrivals = arrival_states(chart, chart_set)
    shared = PathReplays(report.exploration)
    out = [f"{chart.file}: {chart.name}"]
    races = report.races + report.convergent if show_all else report.races
    for race in races:
        a, b = race.events
        timers = frozenset(t.name for t in chart.timers)
        pa, pb = (
            p or ("the clock" if event in timers else "no producer")
            for event, p in zip(race.events, race.producers, strict=True)
        )
        if race.race_class == CONVERGENT:
            verdict = "convergent (no decision needed)"
        elif race.decision is not None:
            verdict = f"{race.race_class}, decided by '{race.decision.name}'"
        else:
            verdict = f"{race.race_class}, UNDECIDED"
        where = "{" + ", ".join(race.configuration) + "}"
        out.append(f"  {a} ({pa}) and {b} ({pb}) in {where}: {verdict}")
        if race.difference is not None:
            out.append(f"    the orders differ in {race.difference}")
        first, second = race.orders
        replays = race_replays(report.exploration, race, shared)
        out.append(f"    {a} then {b}: {first.text()}")
        out.extend(_cancelled_child(chart, first, arrivals))
        out.append(f"      replay: {replays[0].text()}")
        out.append(f"    {b} then {a}: {second.text()}")
        out.extend(_cancelled_child(chart, second, arrivals))
        out.append(f"      replay: {replays[1].text()}")
        out.extend(f"      assuming {x.describe(chart)}" for x in race.assumptions)
        out.append("    path: " + (", ".join(race.path) if race.path else "(the start)"))
        if race.elsewhere:
            out.append(f"    also in {len(race.elsewhere)} other configuration(s)")
            if show_all:
                out.extend(_elsewhere(race))
    classes = ", ".join(
        f"{len(group)} {name}"
        for name, group in (("race", report.divergent), ("info", report.info))
    )
    out.append(
        f"  {len(report.races)} pair(s) of events order-sensitive ({classes}), "
        f"{len(report.undecided)} undecided, {len(report.convergent)} convergent"
        + ("" if report.complete else " (incomplete: the exploration hit a bound)")
    )
    return out


def _cancelled_child(
    chart: CompiledChart, order: OrderOutcome, arrivals: Mapping[str, frozenset[int]]
) -> list[str]:
    """A note when the second event of an order comes from an invocation (its done or
    error, or its child's send) and the first left the invoking state: the child was
    cancelled then, so it never sends it (the answer shown is what the parent would
    have said)."""
    states = arrivals.get(order.second.event)
    if not states or order.second.status != "REJECTED":
        return []
    paths = [chart.states[state].path for state in sorted(states)]
    for path in paths:
        if any(c == path or c.startswith(path + ".") for c in order.configuration):
            return []
    left = "', '".join(paths)
    return [
        f"      ({order.second.event} does not arrive then: leaving '{left}' cancelled its child)"
    ]


def _elsewhere(race: Race) -> list[str]:
    out = []
    for other in race.elsewhere:
        where = "{" + ", ".join(other.configuration) + "}"
        decided = f", decided by '{other.decision.name}'" if other.decision is not None else ""
        path = ", ".join(other.path) if other.path else "(the start)"
        out.append(f"      {where}: {other.race_class}{decided}; path: {path}")
    return out


races_command.params.append(max_configurations_option())
races_command.params.append(max_memory_option())
