"""Reading a chart file: a regular file only, and never more than the size limit plus one byte.

Every way a chart file is read (`statekit.load`, `compile_file`, and through it
the commands `compile`, `lint`, `render`, `docs`, `explain`, `paths` and
`run`) goes through `read_chart_bytes`. It refuses, without blocking, a path
that is not a regular file once symbolic links are resolved: a FIFO (opening
one for reading would wait for a writer), a character device such as
`/dev/zero` (endless), a block device, a socket or a folder. It reads at most
`limit` bytes, so a huge (perhaps sparse) file costs no more than the limit:
the loader then refuses it by size.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path
from typing import Final

__all__ = ["NotRegularFileError", "describe_non_regular", "read_chart_bytes"]

_CHUNK: Final = 1 << 16
_OPEN_FLAGS: Final = (
    os.O_RDONLY
    | getattr(os, "O_NONBLOCK", 0)  # a FIFO swapped in after the check must not block the open
    | getattr(os, "O_NOCTTY", 0)
    | getattr(os, "O_CLOEXEC", 0)
    | getattr(os, "O_BINARY", 0)
)


class NotRegularFileError(OSError):
    """The path exists but is not a regular file; `strerror` says what it is."""


def _kind(mode: int) -> str:
    if stat.S_ISDIR(mode):
        return "a folder"
    if stat.S_ISFIFO(mode):
        return "a FIFO (named pipe)"
    if stat.S_ISCHR(mode):
        return "a character device"
    if stat.S_ISBLK(mode):
        return "a block device"
    if stat.S_ISSOCK(mode):
        return "a socket"
    return "a special file"


def _not_regular(path: str | Path, mode: int) -> str:
    link = "a symbolic link to " if Path(path).is_symlink() else ""
    return f"{link}{_kind(mode)}, not a regular file"


def describe_non_regular(path: str | Path) -> str | None:
    """None when `path` is a regular file (symbolic links followed); otherwise what it
    is, in words to follow `path: `: `a FIFO (named pipe), not a regular file`, `a
    symbolic link to a folder, not a regular file`, `no such file or folder`, or why
    it cannot be examined. Never opens the path, so it never blocks."""
    try:
        mode = os.stat(path).st_mode
    except FileNotFoundError:
        return "a broken symbolic link" if Path(path).is_symlink() else "no such file or folder"
    except OSError as error:  # a loop of links, a name too long, no permission...
        return f"cannot be examined: {error.strerror or type(error).__name__}"
    return None if stat.S_ISREG(mode) else _not_regular(path, mode)


def read_chart_bytes(path: str | Path, limit: int) -> bytes:
    """The first `limit` bytes of the regular file at `path` (all of it when shorter).

    Raises `NotRegularFileError` for anything but a regular file (checked on the
    opened descriptor, so a path swapped after a check is caught too) and
    `OSError` when the file cannot be opened or read.
    """
    mode = os.stat(path).st_mode  # before opening: opening a socket fails with a vaguer error
    if not stat.S_ISREG(mode):
        raise NotRegularFileError(0, _not_regular(path, mode), str(path))
    fd = os.open(path, _OPEN_FLAGS)
    try:
        mode = os.fstat(fd).st_mode
        if not stat.S_ISREG(mode):
            raise NotRegularFileError(0, _not_regular(path, mode), str(path))
        chunks: list[bytes] = []
        remaining = limit
        while remaining > 0:
            chunk = os.read(fd, min(remaining, _CHUNK))
            if not chunk:
                break
            chunks.append(chunk)
            remaining -= len(chunk)
        return b"".join(chunks)
    finally:
        os.close(fd)
