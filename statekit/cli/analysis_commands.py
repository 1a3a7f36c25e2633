"""`statekit explain` (the classification table, invariants, counts) and `statekit paths`
(event sequences that cover every transition and rejection class).

Both explore the chart's reachable configurations (`statekit.analysis`); on a
terminal a progress bar appears when an exploration takes a while (never
in CI or when standard error is not a terminal).
"""

from __future__ import annotations

import sys

import click
from rich.console import Console
from rich.table import Table
from rich.text import Text

from statekit.analysis.answer_groups import answer_groups
from statekit.analysis.explain import Explanation, explain
from statekit.analysis.explain_payloads import (
    answer_payload_text,
    explanation_json,
    path_text,
    replayed_answers,
    replayed_path,
    row_node,
)
from statekit.analysis.exploration import Exploration
from statekit.analysis.options import ExplorationOptions, explore_with
from statekit.analysis.paths import PathSuite, covering_paths
from statekit.analysis.report import transition_label
from statekit.analysis.tracked_context import shown_value
from statekit.analysis.witness import PathReplays
from statekit.cli.explain_text import TIMERS_HEADING, counts_line, explanation_lines, timer_lines
from statekit.cli.group import EXIT_FINDINGS
from statekit.cli.output import echo_json, json_text
from statekit.cli.progress import (
    max_configurations_option,
    max_memory_option,
    skip_final_collection,
    terminal_progress,
)
from statekit.compiler.diagnostics import Diagnostic
from statekit.compiler.ir import CompiledChart
from statekit.compiler.model.state_index import StateIndex
from statekit.compiler.pipeline import compile_file
from statekit.compiler.terminal_text import terminal_text
from statekit.lint.formats import format_diagnostics
from statekit.lint.registry import rule_infos
from statekit.lint.rules import analysis_limit


def _explore(file: str, max_configurations: int, max_memory_mib: int) -> Exploration:
    """Compile FILE (exit 1 with its diagnostics if it cannot be) and explore it."""
    result = compile_file(file)
    if result.chart is None:
        click.echo(format_diagnostics("text", result.diagnostics, rule_infos()), nl=False, err=True)
        sys.exit(EXIT_FINDINGS)
    explored = explore_with(
        result.chart,
        ExplorationOptions(
            max_configurations=max_configurations,
            max_memory=max_memory_mib << 20,
            progress=terminal_progress,
        ),
    )
    return explored


def _out_of_memory(explored: Exploration) -> bool:
    """Whether the exploration stopped at its memory bound: then nothing more is built
    from it (a table of every configuration would need more memory still), and the
    command ends with the `analysis-limit` finding alone."""
    if not any(limit.kind == "memory" for limit in explored.limits):
        return False
    _finish(explored)
    return True


def _finish(explored: Exploration) -> None:
    """Exit 1 with the `analysis-limit` finding (on standard error) when the exploration
    hit a bound: what was printed is then incomplete."""
    skip_final_collection()
    undecided = explored.reasoning[1]
    if undecided:
        click.echo(
            f"note: {undecided} feasibility question(s) went past the solver's budget: "
            "their runs are kept and their guard outcomes only assumed",
            err=True,
        )
    found = analysis_limit.finding(explored.chart, explored)
    if found is not None:
        click.echo(format_diagnostics("text", (found,), rule_infos()), nl=False, err=True)
        sys.exit(EXIT_FINDINGS)


def _resolve_state(chart: CompiledChart, ref: str) -> int:
    """A state by full dotted path, else as the compiler resolves references, or a usage error."""
    if ref in chart.path_index:
        return chart.path_index[ref]
    found = StateIndex((s.id, s.path) for s in chart.states).resolve(ref, chart.span)
    if isinstance(found, Diagnostic):
        raise click.BadParameter("; ".join((found.message, *found.notes)), param_hint="--state")
    return found


@click.command("explain")
@click.argument("file", type=click.Path(exists=True, dir_okay=False))
@click.option("--state", "state_ref", help="Only configurations in which this state is active.")
@click.option("--event", help="Only this event.")
@click.option(
    "--format",
    "output_format",
    type=click.Choice(["text", "table", "json"]),
    default="text",
    show_default=True,
    help="text: every configuration and event; table: a Markdown table per event of the "
    "groups of configurations that answer it the same way; json: everything, for tools.",
)
@click.option(
    "--table",
    "as_table",
    is_flag=True,
    help="Short for --format table.",
)
def explain_command(
    file: str,
    state_ref: str | None,
    event: str | None,
    output_format: str,
    as_table: bool,
    max_configurations: int,
    max_memory_mib: int,
) -> None:
    """What every reachable configuration does with every event, and the invariants."""
    if as_table:
        if output_format not in ("text", "table"):
            raise click.BadParameter(
                f"--table and --format {output_format} exclude each other", param_hint="--table"
            )
        output_format = "table"
    explored = _explore(file, max_configurations, max_memory_mib)
    if _out_of_memory(explored):
        return
    chart = explored.chart
    if event is not None and event not in chart.events and chart.timer(event) is None:
        timers = "".join(f", {t.name}" for t in chart.timers)
        raise click.BadParameter(
            f"event '{event}' is not declared (events: {', '.join(chart.events)}{timers})",
            param_hint="--event",
        )
    state = _resolve_state(chart, state_ref) if state_ref is not None else None
    explanation = explain(explored, state=state, event=event)
    if output_format == "json":
        echo_json(explanation_json(explanation, PathReplays(explored)), indent=2)
    elif output_format == "table":
        click.echo("\n".join(map(terminal_text, _table_lines(explanation, explored))))
    elif len(explanation.rows) > TEXT_TABLE_LIMIT:
        click.echo(_too_many_rows(len(explanation.rows)))
        click.echo("\n".join(map(terminal_text, _table_lines(explanation, explored))))
    elif not sys.stdout.isatty():  # a pipe or a file: plain lines, no name wrapped or cut
        click.echo("\n".join(map(terminal_text, explanation_lines(explanation, explored))))
    else:
        _print_explanation(explanation, explored)
    _finish(explored)


TEXT_TABLE_LIMIT = 2_000
"""The most configurations the text format lays out one by one. Past it the table has
more lines than anyone reads (a row per configuration and event), and laying it out
costs far more time and memory than the exploration that found them (rich lays out
a whole table in memory before printing it: 16,384 configurations of 14 events
took minutes and a gigabyte), so the grouped answers of `--table` are printed
instead, after a line that says so."""


def _too_many_rows(rows: int) -> str:
    return (
        f"{rows:,} configurations are more than the text format lists one by one "
        f"({TEXT_TABLE_LIMIT:,}): the answers grouped by event follow, as `--table` "
        "prints them; `--format json` lists every configuration, and `--state` and "
        "`--event` narrow the table.\n"
    )


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def _table_lines(explanation: Explanation, explored: Exploration) -> list[str]:
    """Markdown: per event, the groups of configurations with the same answers; then the
    invariants and the counts."""
    out = [
        f"# {explanation.chart}: how each event is answered",
        "",
        "`→` the leaves a transition enters; *where*: the states active in every "
        "configuration of the group (*configurations*: how many, of those with them active).",
        "",
        "| event | answer | configurations | where | for example |",
        "|---|---|---|---|---|",
    ]
    for group in answer_groups(explanation):
        out.append("| " + " | ".join(_cell(text) for text in group.cells()) + " |")
    if explanation.timers:
        out += ["", "| timer | state | due | transitions |", "|---|---|---|---|"]
        for timer in explanation.timers:
            cells = (timer.name, timer.state or "(root)", timer.due, "; ".join(timer.transitions))
            out.append("| " + " | ".join(_cell(text) for text in cells) + " |")
    if explanation.invariants:
        out += ["", "| invariant | form | status | detail |", "|---|---|---|---|"]
        for inv in explanation.invariants:
            shown = "enforced at runtime" if inv.status == "runtime" else inv.status
            out.append(f"| {inv.name} | {inv.form} | {shown} | {_cell(inv.detail)} |")
    out += ["", counts_line(explanation, explored)]
    return out


def _shown(value: str) -> Text:
    """A chart's text as a rich cell: no markup read in it, no control character written."""
    return Text(terminal_text(value))


def _print_explanation(explanation: Explanation, explored: Exploration) -> None:
    console = Console(soft_wrap=False, width=max(Console().width, 100))
    table = Table(
        title=f"{explanation.chart}: what each reachable configuration does with each event",
        show_lines=False,
    )
    table.add_column("configuration", overflow="fold")
    table.add_column("event")
    table.add_column("outcome", overflow="fold")
    table.add_column("payload", overflow="fold")
    table.add_column("assuming", overflow="fold", style="dim")
    replays = PathReplays(explored)
    for row in explanation.rows:
        first = True
        label = ", ".join(row.states)
        if row.histories > 1:
            label += f" ({row.histories} variants of history or tracked context)"
        if row.sends:
            label += f" (send timers that may be armed: {', '.join(row.sends)})"
        cell = _shown(label)
        via = replayed_path(replays, row_node(replays, row))
        if via.events or via.start:
            cell += Text("\n") + _shown(f"via {path_text(via)}")
        items = list(row.verdicts.items())
        answers = iter(replayed_answers(replays, row))
        for i, (event, verdicts) in enumerate(items):
            for j, verdict in enumerate(verdicts):
                table.add_row(
                    cell if first else Text(""),
                    _shown(event if j == 0 else ""),
                    _shown(verdict.text()),
                    _shown(answer_payload_text(next(answers))),
                    _shown("; ".join(verdict.assuming)),
                    end_section=i == len(items) - 1 and j == len(verdicts) - 1,
                )
                first = False
    console.print(table)
    if explanation.timers:
        timers = Table(title=TIMERS_HEADING)
        for column in ("timer", "state", "due", "transitions"):
            timers.add_column(column, overflow="fold")
        for timer in explanation.timers:
            timers.add_row(
                _shown(timer.name),
                _shown(timer.state or "(root)"),
                _shown(timer.due),
                Text("\n").join(_shown(t) for t in timer_lines(timer)),
            )
        console.print(timers)
    invariants = Table(title="invariants")
    invariants.add_column("invariant", overflow="fold")
    invariants.add_column("form")
    invariants.add_column("status")
    invariants.add_column("detail", overflow="fold")
    for inv in explanation.invariants:
        style = {"violated": "red", "proven": "green", "not proven": "yellow"}.get(inv.status, "")
        shown = "enforced at runtime" if inv.status == "runtime" else inv.status
        invariants.add_row(
            _shown(inv.name), _shown(inv.form), Text(shown, style=style), _shown(inv.detail)
        )
    if explanation.invariants:
        console.print(invariants)
    c = explanation.counts
    console.print(
        f"{c['configurations']:,} reachable configuration(s) "
        f"({c['abstract_states']:,} abstract states with history values), "
        f"{c['transitions_selectable']} of {c['transitions']} transition(s) selectable, "
        f"{c['checks']:,} (configuration, event) checks in {explored.seconds * 1000:.0f} ms"
        + ("" if explanation.complete else " [yellow](incomplete: a bound was hit)[/]"),
        highlight=False,
    )


@click.command("paths")
@click.argument("file", type=click.Path(exists=True, dir_okay=False))
@click.option(
    "--format",
    "output_format",
    type=click.Choice(["text", "json"]),
    default="text",
    show_default=True,
)
def paths_command(
    file: str, output_format: str, max_configurations: int, max_memory_mib: int
) -> None:
    """Shortest event sequences that together fire every transition and reach every
    rejection class (model-based test generation)."""
    explored = _explore(file, max_configurations, max_memory_mib)
    if _out_of_memory(explored):
        return
    suite = covering_paths(explored)
    if output_format == "json":
        echo_json(suite.to_json(explored), indent=2)
    else:
        _print_paths(suite, explored)
    _finish(explored)


def _tracked_text(values: tuple[tuple[str, object], ...]) -> str:
    """` with ctx.flag = true` for a step's distinguishing tracked values (or nothing)."""
    if not values:
        return ""
    return " with " + ", ".join(f"ctx.{k} = {shown_value(v)}" for k, v in values)


def _print_paths(suite: PathSuite, explored: Exploration) -> None:
    chart = explored.chart
    out: list[str] = []
    for number, path in enumerate(suite.paths, 1):
        events = sum(1 for s in path.steps if s.event is not None)
        out.append(f"path {number} ({events} event(s)):")
        for step in path.steps:
            where = step.configuration + _tracked_text(step.tracked)
            if step.event is None:
                head = f"  start → {where}"
            elif step.status == "APPLIED":
                head = f"  {step.event} → {where}"
            else:
                head = f"  {step.event}: {step.status}" + (f" {step.reason}" if step.reason else "")
            out.append(head)
            if step.event is not None and step.payload is None:
                out.append("      payload: none found by replay (the outcomes below are assumed)")
            elif step.payload:
                label = "payload" if step.event is not None else "start context"
                out.append(f"      {label} {json_text(step.payload_fields)}")
            out.extend(f"      assuming {a}" for a in step.assuming)
    out.append("")
    out.append(
        f"{len(suite.paths)} path(s): {len(suite.transitions)} of {len(chart.transitions)} "
        f"transition(s) fired, {len(suite.rejections)} rejection class(es) reached"
    )
    out.extend(f"never selected: {transition_label(chart, t)}" for t in suite.never_selected)
    if not suite.complete:
        out.append("incomplete: the exploration hit a bound (see statekit lint: analysis-limit)")
    click.echo("\n".join(map(terminal_text, out)))


for _command in (explain_command, paths_command):
    _command.params.append(max_configurations_option())
    _command.params.append(max_memory_option())
