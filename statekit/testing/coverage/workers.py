"""Coverage of a run split over processes (pytest-xdist): each worker's recordings are
sent to the controller as JSON text (`recordings`) and merged into its recorder there
(`merge`), so that the report measures the whole run.

A chart's IR does not travel: the controller takes it from the charts it measures
(`--statekit-cov=PATH`), or compiles it again from the text the worker's `Chart`
was made from (`statekit.load` keeps it) or else from its file, and keeps it when
the digest is the one the worker recorded. A chart it cannot compile again (made
from an IR in memory, its file gone or changed) is named in a note and not measured.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from statekit.compiler.ir import CompiledChart
from statekit.compiler.pipeline import compile_file, compile_source
from statekit.testing.coverage.recorder import ChartRecord, Recorder

FORMAT = 1
"""The version of the recordings' JSON form."""


def _ids(ids: frozenset[int]) -> list[int]:
    return sorted(ids)


def recordings(recorder: Recorder) -> str:
    """Everything `recorder` saw, per chart digest, as JSON text."""
    charts: dict[str, Any] = {}
    for digest, record in recorder.charts.items():
        charts[digest] = {
            "file": record.chart.file,
            "source": record.source,
            "transitions": sorted(record.transitions),
            "pairs": sorted([_ids(ids), event] for ids, event in record.pairs),
            "reasons": sorted(record.reasons),
            "sequences": sorted([_ids(ids), a, b] for ids, a, b in record.sequences),
            "events": record.events,
        }
    return json.dumps({"version": FORMAT, "charts": charts}, sort_keys=True)


def _compiled_again(digest: str, file: str, source: str | None) -> CompiledChart | None:
    attempts = [compile_source(source, file)] if source is not None else []
    if Path(file).is_file():
        attempts.append(compile_file(file))
    for compiled in attempts:
        if compiled.chart is not None and compiled.chart.digest == digest:
            return compiled.chart
    return None


def merge(
    recorder: Recorder, text: str, known: Mapping[str, CompiledChart] | None = None
) -> list[str]:
    """Add the recordings of `text` (from `recordings`) to `recorder`, the IR of a chart
    it has no record of taken from `known` (by digest) or compiled again; return notes
    about charts that could not be compiled again (those are left out)."""
    data = json.loads(text)
    if data.get("version") != FORMAT:
        return [f"statekit coverage: a worker's recordings have format {data.get('version')!r}"]
    notes = []
    for digest, item in data["charts"].items():
        record = recorder.charts.get(digest)
        if record is None:
            chart = (known or {}).get(digest) or _compiled_again(
                digest, item["file"], item["source"]
            )
            if chart is None:
                notes.append(
                    f"{item['file']}: recorded by a worker but not measured: "
                    "it cannot be compiled again to the same chart"
                )
                continue
            record = recorder.charts[digest] = ChartRecord(chart, item["source"])
        _add(record, item)
    return notes


def _add(record: ChartRecord, item: dict[str, Any]) -> None:
    record.transitions.update(item["transitions"])
    record.pairs.update((frozenset(ids), event) for ids, event in item["pairs"])
    record.reasons.update(item["reasons"])
    record.sequences.update((frozenset(ids), a, b) for ids, a, b in item["sequences"])
    record.events += item["events"]
