"""The cross-region example of docs/semantics.md says what the engine answers.

Every row of its table (configuration, answer) is checked against
`statekit explain --format json` on the example chart, so the page stays true.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SECTION = "### Which answer wins across regions"


def test_the_cross_region_example_matches_explain(tmp_path: Path) -> None:
    page = (ROOT / "docs" / "semantics.md").read_text(encoding="utf-8")
    section = page.split(SECTION, 1)[1].split("\n## ", 1)[0]
    body = section.split("```yaml\n", 1)[1].split("```", 1)[0]
    chart = tmp_path / "order.yaml"
    chart.write_text(body, encoding="utf-8")
    done = subprocess.run(
        [sys.executable, "-m", "statekit.cli", "explain", str(chart), "--format", "json"],
        capture_output=True,
        text=True,
        check=True,
    )
    answers = {}
    for row in json.loads(done.stdout)["configurations"]:
        (verdict,) = row["events"]["PAY_SUCCESS"]
        leaves = tuple(s.split(".")[-1] for s in row["states"])
        text = (
            verdict["status"]
            if verdict["reason"] is None
            else (f"{verdict['status']} {verdict['reason']}")
        )
        answers[leaves] = text
    rows = re.findall(r"^\| `(\w+)`, `(\w+)` \| `(\w+(?: \w+)?)`", section, re.M)
    assert len(rows) == 4
    for payment, invoice, answer in rows:
        assert answers[(payment, invoice)] == answer, (payment, invoice)
