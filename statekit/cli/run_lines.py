"""The input lines of `statekit run`: read from a file descriptor without reading ahead
(`LineReader`), and parsed into the instance, command and creation context each asks for
(`parse_line`)."""

from __future__ import annotations

import io
import os
import select
from dataclasses import dataclass
from typing import IO, Any

from statekit.runner.command_checks import check_instance_id, make_command
from statekit.runner.json_text import parse_json
from statekit.runner.transaction import Command

FIELDS = {"instance", "event_id", "type", "payload", "expected_version", "sequence", "context"}


@dataclass(frozen=True, slots=True)
class Line:
    """One parsed input line: its number, the instance it is for, its command and the
    context to create that instance with when this line creates it (None: the chart's
    declared defaults)."""

    number: int
    instance: str
    command: Command
    context: dict[str, Any] | None = None


MAX_LINE_BYTES = 16 * 1024 * 1024
"""The longest input line `statekit run` reads (a longer one is an ERROR line, skipped
without being held in memory)."""


class LineReader:
    """Input lines read straight from a file descriptor, never one more than asked for.

    `next()` blocks for one line; `ready()` says, without blocking, whether a next line
    (or the end of the input) is already there, so a batch can end when no more input
    is ready instead of waiting for it.
    """

    def __init__(self, stream: IO[bytes]) -> None:
        self._stream = stream
        try:
            self._fd: int | None = stream.fileno()
        except (AttributeError, OSError, io.UnsupportedOperation):
            self._fd = None  # an in-memory stream: everything is ready
        self._buffer = bytearray()
        self._eof = False

    def _read(self) -> None:
        chunk = os.read(self._fd, 65536) if self._fd is not None else self._stream.read(65536)
        if chunk:
            self._buffer += chunk
        else:
            self._eof = True

    def ready(self) -> bool:
        """Whether `next()` would not wait for more input to arrive."""
        if self._eof or b"\n" in self._buffer or self._fd is None:
            return True
        readable, _, _ = select.select([self._fd], [], [], 0)
        return bool(readable)

    def next(self) -> bytes | None:
        """The next line (without its end of line), None at the end of the input; a line
        longer than `MAX_LINE_BYTES` is skipped and comes back as `TOO_LONG`."""
        skipping = False
        scanned = 0  # the buffer holds no end of line before this offset
        while True:
            end = self._buffer.find(b"\n", scanned)
            if end >= 0:
                line = bytes(self._buffer[:end]) if end <= MAX_LINE_BYTES else b""
                del self._buffer[: end + 1]
                return TOO_LONG if skipping or end > MAX_LINE_BYTES else line
            if len(self._buffer) > MAX_LINE_BYTES:
                skipping = True
                self._buffer.clear()
            scanned = len(self._buffer)
            if self._eof:
                if skipping:
                    return TOO_LONG
                if not self._buffer:
                    return None
                line = bytes(self._buffer)
                self._buffer.clear()
                return line
            self._read()


TOO_LONG = b"\x00too long"  # not a JSON text, so never a real line


def parse_line(number: int, raw: bytes) -> Line:
    """Parse one input line (ValueError with what is wrong)."""
    if raw is TOO_LONG:
        raise ValueError(f"the line is longer than {MAX_LINE_BYTES} bytes")
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ValueError(f"not UTF-8: byte {exc.start + 1} is not valid UTF-8") from None
    try:
        data = parse_json(text)
    except ValueError as exc:
        raise ValueError(f"not JSON: {exc}") from None
    if not isinstance(data, dict):
        raise ValueError("a line is a JSON object")
    unknown = sorted(set(data) - FIELDS)
    if unknown:
        raise ValueError(f"unknown field(s) {unknown}; a line has {sorted(FIELDS)}")
    for key in ("instance", "event_id", "type"):
        if not isinstance(data.get(key), str) or not data[key]:
            raise ValueError(f"{key!r} must be a non-empty string")
    check_instance_id(data["instance"])
    payload = data.get("payload")
    if payload is None:
        payload = {}
    elif not isinstance(payload, dict):
        raise ValueError("'payload' must be a JSON object")
    numbers = {}
    for key in ("expected_version", "sequence"):
        value = data.get(key)
        if value is not None and (not isinstance(value, int) or isinstance(value, bool)):
            raise ValueError(f"{key!r} must be an integer")
        numbers[key] = value
    command = make_command(
        data["event_id"],
        data["type"],
        payload,
        expected_version=numbers["expected_version"],
        sequence=numbers["sequence"],
    )  # the runner's own checks (a reserved event ID, a sequence below 1): a bad line
    context = data.get("context")
    if context is not None and not isinstance(context, dict):
        raise ValueError("'context' must be a JSON object")
    return Line(number=number, instance=data["instance"], command=command, context=context)
