"""How much memory the process holds now, read cheaply enough to ask every few hundred states.

The exploration's memory bound (`explorer.DEFAULT_MAX_MEMORY`) compares this
reading with the one taken when the exploration began. On Linux it is the
resident set size from `/proc/self/statm` (one small read); elsewhere with
`resource`, the peak resident set size (`getrusage`), which grows with the
exploration too; where neither exists (Windows), None: only the bound on
abstract states applies there.
"""

from __future__ import annotations

import os
import sys
from typing import Final

try:
    import resource
except ImportError:  # pragma: no cover - Windows
    resource = None  # type: ignore[assignment]

_STATM: Final = "/proc/self/statm"
_PAGE: Final = os.sysconf("SC_PAGE_SIZE") if hasattr(os, "sysconf") else 4096
_RUSAGE_UNIT: Final = 1 if sys.platform == "darwin" else 1024  # bytes on macOS, KiB elsewhere


def memory_in_use() -> int | None:
    """The process's resident memory in bytes (its peak where the current value cannot be
    read), or None where it cannot be read at all."""
    try:
        with open(_STATM, "rb") as handle:
            return int(handle.read().split()[1]) * _PAGE
    except (OSError, ValueError, IndexError):
        pass
    if resource is None:  # pragma: no cover - Windows
        return None
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * _RUSAGE_UNIT
