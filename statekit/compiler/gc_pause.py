"""The one helper that pauses Python's cyclic garbage collector around a bulk build."""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def collector_paused() -> Iterator[None]:
    """Pause the cyclic garbage collector for the block; restore its previous state after.

    Building a chart (or any other large acyclic structure) allocates many small
    objects and no reference cycles, yet each generation-2 collection walks
    everything allocated so far, which made compile time grow faster than the
    chart (600 → 790 µs per state from 1,000 to 2,000 states; 495 flat without it).
    Nesting is safe: only the outermost block re-enables the collector.
    """
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()
