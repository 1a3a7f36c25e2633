"""Render bench/README.md from bench/README.template.md and the rows of the last run.

Run: `python -m bench.report` (`make bench` runs it after the benchmarks). The template's
prose is kept by hand; its markers are replaced by what build/bench/ holds:

- `<!-- bench:machine -->`: the machine, date, revision and load average of the run;
- `<!-- bench:headline -->`: every row recorded with `headline=True`;
- `<!-- bench:table NAME -->` / `<!-- bench:table NAME MODE -->`: the rows module NAME
  recorded (with `table="MODE"`), or what it printed when it records none, followed by
  the load average before and after it ran.

In the README each marker is kept, followed by what it stands for and `<!-- /bench -->`,
so `template_of` gives the template back (a test checks that nothing outside them was
edited by hand). The repository README quotes the headline rows between
`<!-- bench:headline:begin -->` and `<!-- bench:headline:end -->`, rewritten by the same
render.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from bench import OUT_DIR, ROOT, Row, load_rows
from statekit.compiler.markdown_text import markdown_text

TEMPLATE = ROOT / "bench" / "README.template.md"
BENCH_README = ROOT / "bench" / "README.md"
ROOT_README = ROOT / "README.md"

MARKER = re.compile(r"^<!-- bench:(machine|headline|table(?: [\w-]+){1,2}) -->$", re.MULTILINE)
END = "<!-- /bench -->"
GENERATED = re.compile(
    r"^(<!-- bench:(?:machine|headline|table(?: [\w-]+){1,2}) -->)\n.*?^<!-- /bench -->$",
    re.MULTILINE | re.DOTALL,
)
QUOTE_BEGIN = "<!-- bench:headline:begin -->"
QUOTE_END = "<!-- bench:headline:end -->"
GENERATED_NOTE = (
    "<!-- Written by bench/report.py from bench/README.template.md and the rows of the"
    " last `make bench`; edit the template, not this file. -->"
)
COLUMNS = ("what", "statekit", "limit, same run", "ratio", "aim", "met")


@dataclass(frozen=True)
class Run:
    """How one script's run went: its mode (the table its rows go to), its arguments,
    load average before and after, wall time, exit status and what it printed (written
    by `run_all`)."""

    name: str
    mode: str = ""
    arguments: tuple[str, ...] = ()
    load_before: tuple[float, ...] = ()
    load_after: tuple[float, ...] = ()
    wall_s: float = 0.0
    returncode: int = 0
    printed: str = ""
    date: str = ""


@dataclass(frozen=True)
class Results:
    """Everything a render reads: the machine, each module's rows and each script run."""

    machine: Mapping[str, object] = field(default_factory=dict)
    rows: Mapping[str, Sequence[Row]] = field(default_factory=dict)
    runs: Mapping[tuple[str, str], Run] = field(default_factory=dict)


def load_results(out_dir: Path = OUT_DIR) -> Results:
    """Read build/bench/: machine.json, NAME.json (rows), run/*.json (script runs)."""
    machine_path = out_dir / "machine.json"
    machine = json.loads(machine_path.read_text()) if machine_path.exists() else {}
    rows = {
        path.stem: load_rows(path)
        for path in sorted(out_dir.glob("*.json"))
        if path.stem != "machine"
    }
    runs: dict[tuple[str, str], Run] = {}
    for path in sorted((out_dir / "run").glob("*.json")):
        fields = json.loads(path.read_text(encoding="utf-8"))
        run = Run(
            name=fields["name"],
            mode=fields.get("mode", ""),
            arguments=tuple(fields.get("arguments", ())),
            load_before=tuple(fields.get("load_before", ())),
            load_after=tuple(fields.get("load_after", ())),
            wall_s=fields.get("wall_s", 0.0),
            returncode=fields.get("returncode", 0),
            printed=fields.get("printed", ""),
            date=fields.get("date", ""),
        )
        runs[(run.name, run.mode)] = run
    return Results(machine, rows, runs)


def render(template: str, results: Results) -> str:
    """The README: `template` with each marker replaced by the tables of `results`."""

    def replace(match: re.Match[str]) -> str:
        kind = match.group(1)
        if kind == "machine":
            return machine_text(results.machine)
        if kind == "headline":
            return headline_table(results.rows)
        name, _, mode = kind.removeprefix("table ").partition(" ")
        return module_section(name, mode, results)

    def generated(match: re.Match[str]) -> str:
        return f"{match.group(0)}\n{replace(match)}\n{END}"

    return f"{GENERATED_NOTE}\n{MARKER.sub(generated, template)}"


def template_of(readme: str) -> str:
    """The template a rendered README came from: the README without its generated parts.
    A README edited by hand outside the markers no longer gives its template back."""
    readme = readme.removeprefix(f"{GENERATED_NOTE}\n")
    return GENERATED.sub(lambda match: match.group(1), readme)


def machine_text(machine: Mapping[str, object]) -> str:
    """One paragraph: when, at which revision and on what the figures were taken."""
    if not machine:
        return "*No run recorded: run `make bench`.*"
    load = machine.get("load") or []
    parts = [
        f"Figures from `make bench` on {machine.get('date', '?')} at revision"
        f" {markdown_code_text(str(machine.get('revision', '?')))}",
        f"{machine.get('cpu', '?')}, {machine.get('cores', '?')} cores",
        f"Python {machine.get('python', '?')}",
        f"SQLite {machine.get('sqlite', '?')}",
        f"{machine.get('postgresql', '?')}",
        f"a durable SQLite commit (`synchronous=FULL`) in {machine.get('disk_commit_ms', '?')} ms",
    ]
    if isinstance(load, list) and load:
        parts.append(f"load average at the start {load_text(load)}")
    return markdown_text("; ".join(parts) + ".") + (
        " Under each table: the load average before → after that script (1, 5, 15"
        " minutes), and its wall time."
    )


def markdown_code_text(value: str) -> str:
    """`value` as inline code inside text that `markdown_text` escapes afterwards."""
    return f"`{value}`"


def load_text(load: Sequence[float]) -> str:
    """`1.20 / 0.80 / 0.50`."""
    return " / ".join(f"{value:.2f}" for value in load)


def headline_table(rows: Mapping[str, Sequence[Row]]) -> str:
    """Every headline row of every module, in module order, with its module named."""
    chosen = [(name, row) for name, found in rows.items() for row in found if row.headline]
    if not chosen:
        return "*No headline rows recorded in this run.*"
    lines = [table_head((*COLUMNS, "from"))]
    for name, row in chosen:
        source = f"`{name}{' ' + row.table if row.table else ''}`"
        lines.append(table_line((*row_cells(row), source)))
    return "\n".join(lines)


def module_section(name: str, mode: str, results: Results) -> str:
    """The module's table for `mode`, or what it printed, then how its run went."""
    rows = [row for row in results.rows.get(name, ()) if row.table == mode]
    run = results.runs.get((name, mode))
    label = " ".join(["python -m bench." + name, mode]).strip()
    if rows:
        body = "\n".join([table_head(COLUMNS), *(table_line(row_cells(row)) for row in rows)])
    elif run is not None and run.printed.strip():
        body = f"What `{label}` printed in this run:\n\n{fenced(run.printed)}"
    else:
        return f"*`{label}` was not measured in this run.*"
    return f"{body}\n\n{run_note(run)}" if run is not None else body


def run_note(run: Run) -> str:
    """*`python -m bench.NAME ARGS`; date; load average 1.20 / … → 2.10 / …; 35 s wall.*
    (and a failure, if it failed)."""
    parts = [f"`{' '.join(['python -m bench.' + run.name, *run.arguments])}`"]
    if run.date:
        parts.append(run.date)
    if run.load_before and run.load_after:
        parts.append(f"load average {load_text(run.load_before)} → {load_text(run.load_after)}")
    parts.append(f"{run.wall_s:g} s wall")
    if run.returncode:
        parts.append(f"**exited with status {run.returncode}**")
    return f"*{markdown_text('; '.join(parts))}.*"


def row_cells(row: Row) -> tuple[str, ...]:
    """The cells of a row, in COLUMNS order."""
    met = "" if row.met is None else ("yes" if row.met else "**no**")
    cells = tuple(
        markdown_text(value) for value in (row.what, row.statekit, row.limit, row.ratio, row.aim)
    )
    return (*cells, met)


def table_head(columns: Sequence[str]) -> str:
    """A Markdown table's header and rule."""
    return f"| {' | '.join(columns)} |\n|{'---|' * len(columns)}"


def table_line(cells: Sequence[str]) -> str:
    """A Markdown table line of already escaped cells."""
    return f"| {' | '.join(cells)} |"


def fenced(text: str) -> str:
    """`text` as a fenced text block, with a fence longer than any backtick run in it."""
    longest = max((len(run) for run in re.findall(r"`+", text)), default=0)
    fence = "`" * max(3, longest + 1)
    return f"{fence}text\n{text.rstrip()}\n{fence}"


def quote_headline(readme: str, results: Results) -> str:
    """The repository README with its quoted headline rows replaced by this run's."""
    begin, end = readme.find(QUOTE_BEGIN), readme.find(QUOTE_END)
    if begin < 0 or end < begin:
        return readme
    quoted = f"{QUOTE_BEGIN}\n{headline_table(results.rows)}\n{QUOTE_END}"
    return readme[:begin] + quoted + readme[end + len(QUOTE_END) :]


def render_files(
    out_dir: Path = OUT_DIR,
    template: Path = TEMPLATE,
    bench_readme: Path = BENCH_README,
    root_readme: Path = ROOT_README,
) -> None:
    """Write bench/README.md and the repository README's quote from `out_dir`."""
    results = load_results(out_dir)
    bench_readme.write_text(render(template.read_text(encoding="utf-8"), results), "utf-8")
    readme = root_readme.read_text(encoding="utf-8")
    root_readme.write_text(quote_headline(readme, results), encoding="utf-8")


if __name__ == "__main__":
    render_files()
