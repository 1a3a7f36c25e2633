"""The base protocol of LSP over a byte stream: frames in, every request answered.

A frame is a header part (`Name: value` lines ending in CRLF, then an empty
line) and a body of `Content-Length` bytes. The specification says "the
structure of header fields conforms to the HTTP semantic", and HTTP field names
are case-insensitive (RFC 9110, section 5.1), so header names are read without
regard to case (`content-length: 12` is the same header); a bare LF ends a
line too.

A client that breaks the framing does not stop the server:

- a frame whose header has no usable `Content-Length` (missing, twice, not a
  decimal number) or whose length is over `max_body_bytes` is answered with a
  JSON-RPC parse error (id null) and its body is not read: it is skipped as
  junk;
- junk (the rest of a body that was longer than its `Content-Length`, stray
  lines) is skipped up to the next `Content-Length` header, wherever on a line
  it starts: that is how the reader resynchronises;
- a header line is kept to `MAX_HEADER_LINE` bytes, so a line without end
  costs no memory.

A body that is not a JSON-RPC message (bad JSON, not an object, wrong
`jsonrpc`, an id that is neither a number nor a string) is answered with a
parse error or an invalid-request error; a request whose params do not fit its
method is answered with an invalid-params error under its id. JSON-RPC answers
nothing to a notification, so a broken notification is only logged.
"""

from __future__ import annotations

import json
import logging
import re
from dataclasses import dataclass
from typing import Any, BinaryIO, Protocol

from pygls.exceptions import JsonRpcException

logger = logging.getLogger(__name__)

MAX_HEADER_LINE = 4096
"""Bytes of one header line the reader keeps (a longer line is junk, but for a
`Content-Length` header at its end)."""

PARSE_ERROR = -32700
INVALID_REQUEST = -32600

_CONTENT_LENGTH = b"content-length"
_TOKEN = re.compile(rb"[A-Za-z0-9!#$%&'*+.^_`|~-]+")
_MAX_LENGTH_DIGITS = 18


@dataclass(frozen=True, slots=True)
class Frame:
    """A frame read whole: its body."""

    body: bytes


@dataclass(frozen=True, slots=True)
class BadFrame:
    """A header part that locates no body, and why."""

    reason: str


class FrameReader:
    """Reads frames from a blocking binary stream (call `next` off the event loop)."""

    def __init__(self, stream: BinaryIO, max_body_bytes: int) -> None:
        self._stream = stream
        self._max_body_bytes = max_body_bytes

    def next(self) -> Frame | BadFrame | None:
        """The next frame, or what is wrong with its header; None at the end of the stream."""
        length: int | None = None
        problem: str | None = None
        started = False
        while True:
            line = self._line()
            if line is None:
                return None
            if not line.strip():
                if started:
                    break
                continue  # blank lines between frames
            resync = line.lower().find(_CONTENT_LENGTH + b":")
            if resync > 0:  # junk, then a header: a new frame starts there
                line, length, problem, started = line[resync:], None, None, False
            name, colon, value = line.partition(b":")
            name = name.strip()
            if not colon or not _TOKEN.fullmatch(name):
                if started:
                    problem = "a header line is not 'Name: value'"
                continue  # junk before a frame is skipped
            started = True
            if name.lower() != _CONTENT_LENGTH:
                continue  # Content-Type and others: nothing to do
            digits = value.strip()
            if length is not None:
                problem = "two Content-Length headers"
            elif not digits.isdigit() or len(digits) > _MAX_LENGTH_DIGITS:
                problem = f"Content-Length is not a length: {digits[:40]!r}"
            else:
                length = int(digits)
        if problem is None and length is None:
            problem = "no Content-Length header"
        if problem is not None or length is None:
            return BadFrame(problem or "no Content-Length header")
        if length > self._max_body_bytes:
            return BadFrame(f"a body of {length} bytes is over the limit of {self._max_body_bytes}")
        body = self._stream.read(length)
        if len(body) < length:
            return None
        return Frame(body)

    def _line(self) -> bytes | None:
        """One line, or its last `MAX_HEADER_LINE` bytes when it is longer; None at the end."""
        kept = b""
        while True:
            chunk = self._stream.readline(MAX_HEADER_LINE)
            if not chunk:
                return None
            kept = (kept + chunk)[-MAX_HEADER_LINE:]
            if chunk.endswith(b"\n"):
                return kept


class Writer(Protocol):
    """Where frames go (pygls' `StdoutWriter`)."""

    def write(self, data: bytes) -> None: ...


class MessageProtocol(Protocol):
    """The part of pygls' `JsonRPCProtocol` a body is handed to."""

    def structure_message(self, data: dict[str, Any]) -> Any: ...

    def handle_message(self, message: Any) -> None: ...


def encode_frame(message: dict[str, Any]) -> bytes:
    """`message` as one frame (ASCII JSON, so its length in bytes is its length in characters)."""
    body = json.dumps(message, ensure_ascii=True, separators=(",", ":")).encode("ascii")
    return b"Content-Length: %d\r\n\r\n%s" % (len(body), body)


def error_frame(ident: int | str | None, code: int, message: str) -> bytes:
    """A JSON-RPC error response to request `ident` (None: the id could not be read)."""
    return encode_frame(
        {"jsonrpc": "2.0", "id": ident, "error": {"code": code, "message": message}}
    )


def deliver(
    protocol: MessageProtocol, writer: Writer, frame: Frame | BadFrame, shutting_down: bool
) -> None:
    """Hand a frame's message to `protocol`, or answer what is wrong with it."""
    if isinstance(frame, BadFrame):
        logger.warning("bad frame: %s", frame.reason)
        writer.write(error_frame(None, PARSE_ERROR, f"Parse error: {frame.reason}"))
        return
    try:
        data = json.loads(frame.body)
    except (ValueError, RecursionError) as error:  # UnicodeDecodeError is a ValueError
        writer.write(error_frame(None, PARSE_ERROR, f"Parse error: {error}"))
        return
    problem, ident = _envelope_problem(data)
    if problem is not None:
        writer.write(error_frame(ident, INVALID_REQUEST, f"Invalid Request: {problem}"))
        return
    request = "method" in data and "id" in data
    if request and shutting_down and data["method"] != "exit":
        writer.write(error_frame(ident, INVALID_REQUEST, "the server is shutting down"))
        return
    try:
        message = protocol.structure_message(data)
    except JsonRpcException as error:
        if request:
            writer.write(error_frame(ident, error.code, error.message or type(error).__name__))
        else:
            logger.warning("dropped a message that does not fit its method: %s", error)
        return
    protocol.handle_message(message)


def _envelope_problem(data: object) -> tuple[str | None, int | str | None]:
    """What makes `data` no JSON-RPC 2.0 message (None: nothing), and the id to answer."""
    if not isinstance(data, dict):
        return "a message is a JSON object", None
    raw_id = data.get("id")
    ident = raw_id if isinstance(raw_id, int | str) and not isinstance(raw_id, bool) else None
    if "id" in data and raw_id is not None and ident is None:
        return "an id is a number or a string", None
    if data.get("jsonrpc") != "2.0":
        return "jsonrpc must be '2.0'", ident
    if "method" in data and not isinstance(data["method"], str):
        return "a method is a string", ident
    if "method" not in data and "id" not in data:
        return "neither a method nor an id", None
    if "method" not in data and "result" not in data and "error" not in data:
        return "a response has a result or an error", None
    return None, ident
