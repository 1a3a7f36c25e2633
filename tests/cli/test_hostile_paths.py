"""A chart path that is not a regular file, for every command that reads charts.

The family: every kind of path a user (or an attacker) can name instead of a
chart file — a FIFO (whose open would wait for a writer), a character device
that never ends (`/dev/zero`), a socket, a symbolic link to a FIFO, a folder
where a file is expected, a huge sparse file, a broken symbolic link — times
every command that reads a chart (`compile`, `lint`, `render`, `docs`,
`explain`, `paths`, `run`, `verify --chart`) and `statekit.load`. Each must answer (never
block, never read without bound) with a message that says what the path is,
and never a traceback or an internal error.
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

import statekit
from statekit import CompileError
from statekit.compiler.source.files import describe_non_regular, read_chart_bytes
from statekit.compiler.source.limits import DEFAULT_LIMITS
from statekit.lint.config import MAX_CONFIG_BYTES

ROOT = Path(__file__).resolve().parents[2]
PAYMENT = ROOT / "machines" / "payment.yaml"

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="FIFOs and sockets are POSIX")


def _fifo(folder: Path) -> Path:
    path = folder / "chart.yaml"
    os.mkfifo(path)
    return path


def _device(folder: Path) -> Path:
    return Path("/dev/zero")


def _socket(folder: Path) -> Iterator[Path]:
    path = folder / "s.yaml"
    with socket.socket(socket.AF_UNIX) as server:
        server.bind(str(path))
        yield path


def _link_to_fifo(folder: Path) -> Path:
    target = folder / "pipe"
    os.mkfifo(target)
    link = folder / "chart.yaml"
    link.symlink_to(target)
    return link


def _folder(folder: Path) -> Path:
    path = folder / "chart.yaml"
    path.mkdir()
    chart = "statechart: inside\ninitial: nowhere\nstates: {a: {}}\n"  # a chart, with an error
    (path / "inside.yaml").write_text(chart, encoding="utf-8")
    return path


def _sparse(folder: Path) -> Path:
    path = folder / "chart.yaml"
    with path.open("wb") as handle:
        handle.truncate(8 << 30)  # 8 GiB, almost none of it on disk
    return path


def _broken_link(folder: Path) -> Path:
    link = folder / "chart.yaml"
    link.symlink_to(folder / "gone.yaml")
    return link


MAX = DEFAULT_LIMITS.max_bytes
# kind -> (make the path, words the message must contain)
KINDS: dict[str, tuple[Callable[[Path], object], str]] = {
    "fifo": (_fifo, "a FIFO (named pipe), not a regular file"),
    "character-device": (_device, "a character device, not a regular file"),
    "socket": (_socket, "a socket, not a regular file"),
    "link-to-fifo": (_link_to_fifo, "a symbolic link to a FIFO (named pipe), not a regular file"),
    "folder": (_folder, "director"),  # click's words for single-file commands: "is a directory"
    "sparse-8GiB": (
        _sparse,
        f"the file has {(4 << 20) + 1} bytes or more, over the limit of {4 << 20}",
    ),
    "broken-link": (_broken_link, "exist"),
}
# what a folder given to a command that takes folders (and to the Python API) says instead
FOLDER_WORDS = {
    "lint": "inside.yaml",  # the folder is walked: its chart is linted
    "render": "inside.yaml",
    "docs": "inside.yaml",
    "verify": "inside.yaml",  # --chart takes folders of charts
    "load": "a folder, not a regular file",
}
BROKEN_LINK_WORDS = {"lint": "a broken symbolic link", "render": "a broken symbolic link"}
BROKEN_LINK_WORDS |= {"docs": "a broken symbolic link", "load": "No such file"}
BROKEN_LINK_WORDS |= {"lint --config": "a broken symbolic link"}


@pytest.fixture(params=sorted(KINDS))
def hostile(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[tuple[str, Path, str]]:
    make, words = KINDS[request.param]
    made = make(tmp_path)
    if isinstance(made, Path):
        yield request.param, made, words
    else:
        assert isinstance(made, Iterator)
        path = next(made)
        yield request.param, path, words
        next(made, None)


COMMANDS: dict[str, Callable[[Path, Path], list[str]]] = {
    "compile": lambda chart, tmp: ["compile", str(chart)],
    "lint": lambda chart, tmp: ["lint", str(chart)],
    "lint --config": lambda chart, tmp: ["lint", "--config", str(chart), str(PAYMENT)],
    "render": lambda chart, tmp: ["render", "--format", "dot", str(chart)],
    "docs": lambda chart, tmp: ["docs", "-o", str(tmp / "site"), str(chart)],
    "explain": lambda chart, tmp: ["explain", str(chart)],
    "paths": lambda chart, tmp: ["paths", str(chart)],
    "run": lambda chart, tmp: ["run", str(chart), "--db", f"sqlite:///{tmp / 'r.db'}"],
    "diff": lambda chart, tmp: ["diff", str(chart), str(PAYMENT)],
    "migrate": lambda chart, tmp: [
        "migrate",
        "--db",
        f"sqlite:///{tmp / 'm.db'}",
        "--chart",
        str(chart),
    ],
    "verify": lambda chart, tmp: [
        "verify",
        "--db",
        f"sqlite:///{tmp / 'v.db'}",
        "--chart",
        str(chart),
    ],
}


def _expected(kind: str, command: str, words: str) -> str:
    if kind == "folder":
        return FOLDER_WORDS.get(command, words)
    if kind == "broken-link":
        return BROKEN_LINK_WORDS.get(command, words)
    if kind == "sparse-8GiB" and command == "lint --config":  # a pyproject.toml's own limit
        return f"over the limit of {MAX_CONFIG_BYTES}"
    return words


@pytest.mark.parametrize("command", sorted(COMMANDS))
def test_every_command_says_what_the_path_is(
    hostile: tuple[str, Path, str], command: str, tmp_path: Path
) -> None:
    kind, chart, words = hostile
    done = subprocess.run(
        [sys.executable, "-m", "statekit.cli", *COMMANDS[command](chart, tmp_path)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        input="",
        check=False,
    )
    said = done.stdout + done.stderr
    assert done.returncode in (1, 2), said
    assert _expected(kind, command, words) in said
    assert "Traceback" not in said and "internal error" not in said


def test_the_api_says_what_the_path_is(hostile: tuple[str, Path, str]) -> None:
    kind, chart, words = hostile
    if kind == "character-device":
        chart = Path("/dev/zero")
    with pytest.raises(CompileError) as raised:
        statekit.load(chart)
    (diagnostic,) = raised.value.diagnostics
    assert _expected(kind, "load", words) in diagnostic.message
    assert (diagnostic.span.file, diagnostic.span.line) == (str(chart), 1)


DESCRIBED = {
    "fifo": "a FIFO (named pipe), not a regular file",
    "character-device": "a character device, not a regular file",
    "socket": "a socket, not a regular file",
    "link-to-fifo": "a symbolic link to a FIFO (named pipe), not a regular file",
    "folder": "a folder, not a regular file",
    "sparse-8GiB": None,  # a regular file: refused by its size, not by its kind
    "broken-link": "a broken symbolic link",
}


def test_describe_non_regular_names_each_kind_without_opening(
    hostile: tuple[str, Path, str],
) -> None:
    kind, chart, _words = hostile
    assert describe_non_regular(chart) == DESCRIBED[kind]


@pytest.mark.parametrize("limit", [0, 1, 1000, 1 << 16, (1 << 16) + 1, 1 << 20])
def test_reading_stops_at_the_limit(tmp_path: Path, limit: int) -> None:
    path = tmp_path / "big.yaml"
    with path.open("wb") as handle:
        handle.truncate(8 << 30)
    assert len(read_chart_bytes(path, limit)) == limit
    small = tmp_path / "small.yaml"
    small.write_bytes(b"x" * 100)
    assert read_chart_bytes(small, limit) == b"x" * min(100, limit)
