"""Charts without time keep their exact IR digest (stored instances name charts by digest).

The digests were computed before timers, `send` and `cancel` entered the IR; the
IR's JSON form writes the new keys only when a chart uses them.
"""

from __future__ import annotations

from pathlib import Path

import pytest

import statekit

ROOT = Path(__file__).resolve().parents[2]

PINNED = {
    "machines/media_player.yaml": (
        "sha256:1ff67558e09b0646c9ea1312b41c3060a803c4fcd131eef6bff9389a4ecb358b"
    ),
    "tests/charts/order.yaml": (
        "sha256:a3c1fe9bdc1eb508c4ca28e733f29c79304f164aaa17e484fc775557cecd0ef0"
    ),
    # copies of machines/task.yaml and machines/payment.yaml as they were before time
    "tests/charts/task_v1.yaml": (
        "sha256:69385dadf936b1a7d459251d771be2d8636ee94900e1492633270f16097cf7ea"
    ),
    "tests/charts/payment_v1.yaml": (
        "sha256:e8bf00aea9be980c98adfef66b1dec4e38c1b1991cd32466c71e2728f0e32744"
    ),
}


@pytest.mark.parametrize("relative", sorted(PINNED))
def test_digest_of_a_chart_without_time_is_unchanged(relative: str) -> None:
    chart = statekit.load(ROOT / relative)
    assert chart.ir.timers == ()
    assert chart.ir.digest == PINNED[relative]


def test_every_chart_of_tests_charts_is_pinned() -> None:
    found = {f"tests/charts/{p.name}" for p in (ROOT / "tests" / "charts").glob("*.yaml")}
    assert found <= set(PINNED)
