"""The canonical JSON encoders on statekit's own records: the standard library's (what
statekit used before), orjson and msgspec as they come, and `canonical_json` (orjson with
the standard library where their bytes would differ); and the two decoders on the texts.

Run: `python -m bench.canonical_encoders` from the repository root (`--runs N`, default
7; `--instructions` counts instructions per record under valgrind's callgrind instead,
the figure that holds on a shared machine: for each encoder and kind of record, one
process encodes the records once and another three times, and the difference over
two passes is what one pass costs, start-up and the records' making left out).
The records are what the runner encodes for each event of the task chart's stream
(`bench._streams.task_stream`) and of the counter chart of `bench/runner_throughput.py`:
the payload, the evidence (compact form), the context; each run times every encoder over
the same records, interleaved. Rows show µs per record, median over the runs (min-max),
the ratio to the standard library's in the same run, and how many records each encoder
writes with the standard library's bytes.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import msgspec
import orjson

from bench._runner_loops import counter
from bench._streams import task_stream
from bench.engine_core import compiled
from bench.hand_task import TASK_CHART
from statekit.compiler.canonical import canonical_json
from statekit.engine.chart import Chart
from statekit.runner.evidence import evidence_json

Encode = Callable[[Any], Any]

_STDLIB = json.JSONEncoder(sort_keys=True, separators=(",", ":"), ensure_ascii=False)
_MAKE: Any = json.encoder.c_make_encoder  # type: ignore[attr-defined]
_C = _MAKE(None, _STDLIB.default, json.encoder.encode_basestring, None, ":", ",", True, False, True)


def stdlib(value: Any) -> str:
    """statekit's encoder before orjson: the standard library's C encoder, built once."""
    return "".join(_C(value, 0))


def json_dumps(value: Any) -> str:
    """`json.dumps` with the same options (a new encoder per call, as the issue timed it)."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


_MSGSPEC = msgspec.json.Encoder(order="sorted")


def orjson_raw(value: Any) -> bytes:
    return orjson.dumps(value, option=orjson.OPT_SORT_KEYS)


ENCODERS: dict[str, Encode] = {
    "json.dumps(sort_keys=True, ...)": json_dumps,
    "standard library, C encoder built once (before)": stdlib,
    "orjson.dumps(OPT_SORT_KEYS)": orjson_raw,
    "msgspec Encoder(order='sorted')": _MSGSPEC.encode,
    "canonical_json (orjson + fallbacks, now)": canonical_json,
}
DECODERS: dict[str, Encode] = {"json.loads": json.loads, "orjson.loads": orjson.loads}


def records(chart: Chart, stream: Sequence[tuple[str, Any, str]]) -> dict[str, list[Any]]:
    """The values the runner encodes per event: payload, evidence, context."""
    out: dict[str, list[Any]] = {"payload": [], "evidence": [], "context": []}
    state = chart.start()
    for event, payload, event_id in stream:
        result = chart.send(state, event, payload, event_id=event_id, now_ms=1_000)
        out["payload"].append(dict(payload or {}))
        out["evidence"].append(json.loads(evidence_json(result, None, event_id)))
        out["context"].append(dict(result.state.context))
        state = chart.start() if result.state.is_final else result.state
    return out


def per_record_us(encode: Encode, values: Sequence[Any]) -> float:
    start = time.perf_counter()
    for value in values:
        encode(value)
    return (time.perf_counter() - start) / len(values) * 1e6


def same_bytes(encode: Encode, values: Sequence[Any]) -> str:
    agree = 0
    for value in values:
        text = encode(value)
        agree += (text if isinstance(text, str) else text.decode()) == stdlib(value)
    return f"{agree}/{len(values)}"


def spread(values: Sequence[float]) -> str:
    return f"{statistics.median(values):.2f} ({min(values):.2f}-{max(values):.2f})"


def table(kind: str, values: list[Any], runs: int) -> None:
    timed: dict[str, list[float]] = {name: [] for name in ENCODERS}
    ratio: dict[str, list[float]] = {name: [] for name in ENCODERS}
    texts = [stdlib(v) for v in values]
    loads: dict[str, list[float]] = {name: [] for name in DECODERS}
    for _ in range(runs):
        base = 0.0
        for name, encode in ENCODERS.items():
            timed[name].append(per_record_us(encode, values))
            if encode is stdlib:
                base = timed[name][-1]
        for name in ENCODERS:
            ratio[name].append(timed[name][-1] / base)
        for name, decode in DECODERS.items():
            loads[name].append(per_record_us(decode, texts))
    print(f"\n{kind}: {len(values)} records, {statistics.mean(map(len, texts)):.0f} B on average")
    print("| encoder | µs per record | ratio to before | same bytes as before |")
    print("|---|---|---|---|")
    for name, encode in ENCODERS.items():
        print(f"| {name} | {spread(timed[name])} | {spread(ratio[name])} "
              f"| {same_bytes(encode, values)} |")  # fmt: skip
    for name in DECODERS:
        print(f"| decode: {name} | {spread(loads[name])} | | |")


def all_records() -> dict[str, list[Any]]:
    """Each kind of record of both charts, by name (`task chart, evidence`, ...)."""
    task = records(compiled(TASK_CHART.read_text(), "task"), task_stream(500))
    count = records(counter(), [("Incr", {"by": 1}, f"e-{n}") for n in range(2000)])
    return {f"task chart, {k}": v for k, v in task.items()} | {
        f"counter chart, {k}": v for k, v in count.items()
    }


_PASSES = """
import sys
from bench.canonical_encoders import DECODERS, ENCODERS, all_records, stdlib
kind, name, passes = sys.argv[1], sys.argv[2], int(sys.argv[3])
values = all_records()[kind]
if name in DECODERS:
    values, run = [stdlib(v) for v in values], DECODERS[name]
else:
    run = ENCODERS[name]
for v in values[:8]:
    run(v)
for _ in range(passes):
    for v in values:
        run(v)
"""


def instructions(kind: str, name: str, passes: int) -> int:
    """Instructions of one process that makes the records and runs `name` over them
    `passes` times (PYTHONHASHSEED fixed, so that two processes do the same start-up)."""
    with tempfile.TemporaryDirectory() as folder:
        out = Path(folder) / "callgrind.out"
        subprocess.run(
            ["valgrind", "--tool=callgrind", f"--callgrind-out-file={out}", sys.executable,
             "-c", _PASSES, kind, name, str(passes)],
            env={**os.environ, "PYTHONHASHSEED": "0", "PYTHONDONTWRITEBYTECODE": "1"},
            check=True, capture_output=True,
        )  # fmt: skip
        for line in out.read_text().splitlines():
            if line.startswith(("summary:", "totals:")):
                return int(line.split()[1])
    raise RuntimeError("callgrind wrote no total")


def instruction_table(kinds: Sequence[str], sizes: dict[str, int]) -> None:
    print("| records | " + " | ".join([*ENCODERS, *DECODERS]) + " |")
    print("|---|" + "---|" * (len(ENCODERS) + len(DECODERS)))
    for kind in kinds:
        cells = []
        for name in [*ENCODERS, *DECODERS]:
            once, thrice = instructions(kind, name, 1), instructions(kind, name, 3)
            cells.append(f"{(thrice - once) / (2 * sizes[kind]) / 1000:,.1f} k")
        print(f"| {kind} | " + " | ".join(cells) + " |", flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=7)
    parser.add_argument("--instructions", action="store_true")
    args = parser.parse_args()
    every = all_records()
    if args.instructions:
        if shutil.which("valgrind") is None:
            sys.exit("--instructions needs valgrind (apt-get install valgrind)")
        instruction_table(list(every), {kind: len(v) for kind, v in every.items()})
        return
    print("load average " + " ".join(f"{x:.1f}" for x in os.getloadavg()))
    for kind, values in every.items():
        table(kind, values, args.runs)


if __name__ == "__main__":
    main()
