"""Run every benchmark script in this folder, one after the other, in fresh processes.

Run: `python bench/run_all.py` (or `make bench`). Each script prints its own table.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
NOT_BENCHMARKS = {"__init__", "generate", "run_all"}


def main() -> None:
    """Run each `bench/*.py` script as `python -m bench.<name>` from the repository root."""
    failed = []
    for script in sorted(HERE.glob("*.py")):
        if script.stem in NOT_BENCHMARKS or script.stem.startswith("_"):
            continue
        print(f"\n== bench/{script.name}", flush=True)
        done = subprocess.run([sys.executable, "-m", f"bench.{script.stem}"], cwd=HERE.parent)
        if done.returncode:
            failed.append(script.name)
    if failed:
        sys.exit(f"failed: {', '.join(failed)}")


if __name__ == "__main__":
    main()
