"""Benchmarks, and the rows they report (bench/README.md is rendered from them).

Every benchmark module in this folder has a `main()` that runs it (`python -m bench.NAME`),
prints what it measured, and hands the same figures to `record` as `Row` values:

    from bench import TIMES, Row, Spread, record

    def main() -> None:
        ours = Spread.of(statekit_rates)      # events/s of each run
        limit = Spread.of(reducer_rates)
        ratio = Spread.of([r / s for r, s in zip(reducer_rates, statekit_rates)])
        rows = [
            Row(
                what="flat chart, general path",
                statekit=ours.text("ev/s"),
                limit="hand reducer " + limit.text("ev/s"),
                ratio=ratio.text(TIMES, digits=2) + " slower",
                aim="at most 3" + TIMES,
                met=ratio.median <= 3,
                headline=True,
            )
        ]
        record("engine_core", rows)

`record` writes build/bench/NAME.json (NAME is the module's name, so `bench/report.py`
can put the table under that module's section of the README). A module that runs in
several modes (`explore_scaling memory`) passes the mode as `table=`: each table is
rendered at its own marker. `headline=True` also lists the row in the README's first
table and in the repository README. A module that has not been converted to rows yet is
listed in `run_all.PRINTED_ONLY`: its printed output is quoted in the README instead.
"""

from __future__ import annotations

import json
import os
import statistics
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
TIMES = "\u00d7"  # the multiplication sign of ratios: 2.47x reads as 2.47\u00d7
EN_DASH = "\u2013"  # between the ends of a range
OUT_DIR = Path(os.environ.get("STATEKIT_BENCH_OUT", ROOT / "build" / "bench"))


@dataclass(frozen=True)
class Spread:
    """A median with the lowest and highest of the runs it was taken from."""

    median: float
    low: float
    high: float

    @classmethod
    def of(cls, samples: Sequence[float]) -> Spread:
        """The median and range of `samples` (at least one)."""
        return cls(statistics.median(samples), min(samples), max(samples))

    def text(self, unit: str = "", digits: int | None = None) -> str:
        """`median unit (low-high)`, an en dash between the ends; figures get a k/M
        suffix unless `digits` fixes the decimals."""
        middle = number_text(self.median, digits)
        spread = f"{number_text(self.low, digits)}{EN_DASH}{number_text(self.high, digits)}"
        joined = f"{middle}{unit}" if unit in (TIMES, "%") else f"{middle} {unit}".rstrip()
        return f"{joined} ({spread})"


def number_text(value: float, digits: int | None = None) -> str:
    """A figure as a reader takes it in: 1.71 M, 689 k, 4,096, 12.3, or `digits` decimals."""
    if digits is not None:
        return f"{value:,.{digits}f}"
    size = abs(value)
    if size >= 10_000_000:
        return f"{value / 1e6:,.1f} M"
    if size >= 1_000_000:
        return f"{value / 1e6:.2f} M"
    if size >= 100_000:
        return f"{value / 1e3:,.0f} k"
    if size >= 100:
        return f"{value:,.0f}"
    if size >= 10:
        return f"{value:.1f}"
    return f"{value:.2f}"


@dataclass(frozen=True)
class Row:
    """One line of a table in bench/README.md: a figure, the limit it is measured against
    in the same run, their ratio with its range, and the aim it is held to.

    Figures are already formatted (`Spread.text`); `met` is None when there is no aim."""

    what: str
    statekit: str
    limit: str = ""
    ratio: str = ""
    aim: str = ""
    met: bool | None = None
    table: str = ""
    headline: bool = False

    def __post_init__(self) -> None:
        if self.met is not None and not self.aim:
            raise ValueError(f"row {self.what!r}: met is given without an aim")


def rows_path(name: str, out_dir: Path | None = None) -> Path:
    """Where `record` writes the rows of bench module `name`."""
    return (out_dir or OUT_DIR) / f"{name}.json"


def record(name: str, rows: Sequence[Row], out_dir: Path | None = None) -> Path:
    """Write `rows` as build/bench/NAME.json, replacing the tables of `name` this run
    gave; tables of other modes (`table=`) measured earlier are kept. Returns the path."""
    path = rows_path(name, out_dir)
    path.parent.mkdir(parents=True, exist_ok=True)
    tables = {row.table for row in rows}
    kept = [row for row in load_rows(path) if row.table not in tables]
    document = {"name": name, "rows": [asdict(row) for row in [*kept, *rows]]}
    path.write_text(json.dumps(document, ensure_ascii=False, indent=1) + "\n", encoding="utf-8")
    return path


def load_rows(path: Path) -> list[Row]:
    """The rows a `record` call wrote to `path` (none when there is no such file)."""
    if not path.exists():
        return []
    document = json.loads(path.read_text(encoding="utf-8"))
    return [Row(**fields) for fields in document["rows"]]
