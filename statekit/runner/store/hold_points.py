"""Points in a write transaction where a test can hold it (`Store.hold`), to force an
interleaving instead of hoping a sleep produces it.

A test installs `store.hold = f` on one store (one connection); the runner and the
store then call `f(point)` at each of these points of that store's write
transactions, in the thread running them, and `f` may block there (waiting on an
event the test sets once the other transaction has got where it should be). With
no hold installed (`None`, always so outside tests) each point costs one attribute
test. `tests/runner/test_redelivery_races.py` drives every redelivery race through
these points.
"""

from __future__ import annotations

from collections.abc import Callable

BEGIN = "begin"
"""A write transaction is about to begin (nothing locked yet by it)."""

LOCKED = "locked"
"""The instance row(s) the transaction decides about are locked and read (or claimed,
for timer deliveries); nothing is decided yet."""

DECIDED = "decided"
"""Everything is decided and nothing of it written yet (the locks are still held)."""

COMMIT = "commit"
"""The decided rows are written, the COMMIT not sent yet. With a hold installed,
PostgreSQL sends its COMMIT on its own rather than with the writes
(`PostgresStore.write_decided`'s `last`), so that this point exists there too."""

POINTS = (BEGIN, LOCKED, DECIDED, COMMIT)

Hold = Callable[[str], None]
"""What a test installs: called with each point's name as the transaction reaches it."""
