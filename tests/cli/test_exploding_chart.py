"""A chart whose reachable configurations explode ends as an `analysis-limit` finding.

Eighteen parallel regions of two states each (2 KB of YAML, 262,144
configurations, 19 events in each) are more than the default bounds allow; they
all take a RESET event, so that the lint analysis cannot explore them apart
(`statekit.analysis.compositional`) and builds their product.
The test proves where it matters that a bound stops the exploration (the one on
abstract states, or the one on memory, whichever comes first on this machine):
`statekit lint` and `explain` each run in a process whose address space is
limited (`resource.setrlimit(RLIMIT_AS)`, 1.5 GiB), and each exits 1 with the
`analysis-limit` finding, never with an out-of-memory or an internal error.
A small `--max-memory` makes every exploring command (`paths` too) stop on the
memory bound, quickly.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from chart_helpers import toggling_regions_yaml

ROOT = Path(__file__).resolve().parents[2]
ADDRESS_SPACE = 1536 << 20

resource = pytest.importorskip("resource")
pytestmark = pytest.mark.skipif(
    not sys.platform.startswith("linux"), reason="RLIMIT_AS is enforced on Linux"
)


def _limit_address_space() -> None:
    resource.setrlimit(resource.RLIMIT_AS, (ADDRESS_SPACE, ADDRESS_SPACE))


@pytest.fixture(scope="module")
def chart(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("boom") / "boom.yaml"
    path.write_text(toggling_regions_yaml(18, shared="RESET"), encoding="utf-8")
    assert path.stat().st_size < 2500
    return path


@pytest.mark.parametrize("command", ["lint", "explain"])
def test_an_exploding_chart_is_an_analysis_limit_under_a_memory_limit(
    chart: Path, command: str
) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "statekit.cli", command, str(chart)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=False,
        preexec_fn=_limit_address_space,
    )
    said = done.stdout + done.stderr
    assert done.returncode == 1, said[-2000:]
    assert "error[analysis-limit]" in said
    bounds = ("MiB of memory (--max-memory)", "abstract states (--max-configurations)")
    assert any(bound in said for bound in bounds), said[-2000:]
    assert "MemoryError" not in said and "internal error" not in said


@pytest.mark.parametrize("command", ["lint", "explain", "paths"])
@pytest.mark.parametrize("output_format", ["text", "json"])
def test_max_memory_stops_every_exploring_command(
    tmp_path: Path, command: str, output_format: str
) -> None:
    path = tmp_path / "boom.yaml"
    path.write_text(toggling_regions_yaml(12), encoding="utf-8")
    options = ["--max-memory", "1", "--format", output_format]
    done = subprocess.run(
        [sys.executable, "-m", "statekit.cli", command, str(path), *options],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=False,
    )
    said = done.stdout + done.stderr
    assert done.returncode == 1, said[-2000:]
    assert "analysis-limit" in said
    assert "more than 1 MiB of memory" in said
