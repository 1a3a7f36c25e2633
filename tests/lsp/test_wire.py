"""`statekit lsp` against a hostile client: malformed frames, broken messages, params that do
not fit their method, all over the real process's stdin.

Every case is followed by a probe (a hover whose answer is known): the server must still be
up, back in step with the stream, and answering as before. A frame that locates no body is
answered with a parse error under id null; a request, whatever its params, is answered
under its id with a result or a JSON-RPC error.
"""

from __future__ import annotations

import json
import random
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from lsp_session import Editor, Json

LIMIT = 4096
"""The server's `--max-message-bytes` here, so that a frame just over it is cheap to send."""

CHART = """\
statechart: wire
events:
  GO: {}
initial: idle
states:
  idle:
    description: Waiting.
    on:
      GO: busy
  busy: {}
"""
HOVER_AT = {"line": 5, "character": 3}  # on `idle:`


@dataclass
class Session:
    editor: Editor
    uri: str
    expected_hover: Any

    def request_bytes(self, ident: int, method: str = "textDocument/hover") -> bytes:
        message = {
            "jsonrpc": "2.0",
            "id": ident,
            "method": method,
            "params": {"textDocument": {"uri": self.uri}, "position": HOVER_AT},
        }
        return json.dumps(message).encode()

    def probe(self) -> None:
        """The server is up and answers a well-formed request as it did at the start."""
        assert self.editor.server.alive()
        answer = self.editor.request("textDocument/hover", self.uri, position=HOVER_AT)
        assert answer == self.expected_hover


@pytest.fixture(scope="module")
def session(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Session]:
    root = tmp_path_factory.mktemp("wire")
    editor = Editor(root, "--max-message-bytes", str(LIMIT))
    uri = editor.open(root / "wire.statechart.yaml", CHART)
    editor.published(uri)
    hover = editor.request("textDocument/hover", uri, position=HOVER_AT)
    assert hover is not None and "idle" in json.dumps(hover)
    yield Session(editor, uri, hover)
    editor.close()


def frame(body: bytes, header: bytes = b"Content-Length: %d\r\n\r\n") -> bytes:
    return (header % len(body) if b"%d" in header else header) + body


# --- frames ---------------------------------------------------------------------------

ANSWERED = "answered"  # the request inside is answered with its result
NULL_ERROR = "null error"  # a parse or invalid-request error under id null


@dataclass(frozen=True)
class FrameCase:
    name: str
    build: Any  # (body of a request) -> bytes on the wire
    outcome: str
    code: int | None = None


FRAME_CASES = [
    FrameCase(
        "lower-case header name", lambda b: frame(b, b"content-length: %d\r\n\r\n"), ANSWERED
    ),
    FrameCase(
        "upper-case header name", lambda b: frame(b, b"CONTENT-LENGTH: %d\r\n\r\n"), ANSWERED
    ),
    FrameCase(
        "Content-Type too",
        lambda b: frame(
            b,
            b"Content-Length: %d\r\n"
            b"Content-Type: application/vscode-jsonrpc; charset=utf-8\r\n\r\n",
        ),
        ANSWERED,
    ),
    FrameCase("bare LF line ends", lambda b: frame(b, b"Content-Length: %d\n\n"), ANSWERED),
    FrameCase("blank lines before", lambda b: b"\r\n\r\n" + frame(b), ANSWERED),
    FrameCase("junk line before", lambda b: b"garbage\r\n" + frame(b), ANSWERED),
    FrameCase("junk glued before", lambda b: b"}}xyz" + frame(b), ANSWERED),
    FrameCase("overlong junk line", lambda b: b"A" * 100_000 + b"\r\n" + frame(b), ANSWERED),
    FrameCase("junk without end, then a header", lambda b: b"B" * 100_000 + frame(b), ANSWERED),
    FrameCase(
        "non-numeric length", lambda b: frame(b, b"Content-Length: abc\r\n\r\n"), NULL_ERROR, -32700
    ),
    FrameCase(
        "negative length", lambda b: frame(b, b"Content-Length: -5\r\n\r\n"), NULL_ERROR, -32700
    ),
    FrameCase(
        "exponent length", lambda b: frame(b, b"Content-Length: 1e3\r\n\r\n"), NULL_ERROR, -32700
    ),
    FrameCase("empty length", lambda b: frame(b, b"Content-Length:\r\n\r\n"), NULL_ERROR, -32700),
    FrameCase(
        "huge length",
        lambda b: frame(b, b"Content-Length: 100000000000000\r\n\r\n"),
        NULL_ERROR,
        -32700,
    ),
    FrameCase(
        "thousand-digit length",
        lambda b: frame(b, b"Content-Length: " + b"9" * 1000 + b"\r\n\r\n"),
        NULL_ERROR,
        -32700,
    ),
    FrameCase("just over the limit", lambda b: frame(b"x" * (LIMIT + 1)), NULL_ERROR, -32700),
    FrameCase(
        "no Content-Length",
        lambda b: frame(b, b"Content-Type: text/plain\r\n\r\n"),
        NULL_ERROR,
        -32700,
    ),
    FrameCase(
        "two Content-Lengths",
        lambda b: frame(b, b"Content-Length: %d\r\nContent-Length: 3\r\n\r\n"),
        NULL_ERROR,
        -32700,
    ),
    FrameCase(
        "header line without a colon",
        lambda b: frame(b, b"Content-Length: %d\r\nnonsense\r\n\r\n"),
        NULL_ERROR,
        -32700,
    ),
    FrameCase(
        "non-ASCII header name",
        lambda b: frame(b, "Content-Length: %d\r\nX-\u00dc: 1\r\n\r\n".encode()),
        NULL_ERROR,
        -32700,
    ),
    FrameCase(
        "length shorter than the body",
        lambda b: b"Content-Length: %d\r\n\r\n" % (len(b) - 5) + b,
        NULL_ERROR,
        -32700,
    ),
    FrameCase(
        "length shorter, body ending a JSON value",
        lambda b: frame(b"{}", b"Content-Length: %d\r\n\r\n") + b"garbage",
        NULL_ERROR,
        -32600,
    ),
    FrameCase("invalid JSON", lambda b: frame(b[:-3]), NULL_ERROR, -32700),
    FrameCase("invalid UTF-8", lambda b: frame(b"\xff\xfe\xfd{}"), NULL_ERROR, -32700),
    FrameCase(
        "deeply nested JSON", lambda b: frame(b"[" * 200_000 + b"]" * 200_000), NULL_ERROR, -32700
    ),
    FrameCase("JSON array", lambda b: frame(b"[" + b + b"]"), NULL_ERROR, -32600),
    FrameCase("JSON scalar", lambda b: frame(b"42"), NULL_ERROR, -32600),
    FrameCase(
        "id an object",
        lambda b: frame(b.replace(b'"id": ', b'"id": {"x": 1}, "was": ')),
        NULL_ERROR,
        -32600,
    ),
    FrameCase(
        "id a boolean",
        lambda b: frame(b.replace(b'"id": ', b'"id": true, "was": ')),
        NULL_ERROR,
        -32600,
    ),
    FrameCase("neither method nor id", lambda b: frame(b'{"jsonrpc": "2.0"}'), NULL_ERROR, -32600),
]


@pytest.mark.parametrize("case", FRAME_CASES, ids=[c.name for c in FRAME_CASES])
def test_a_bad_frame_is_answered_and_the_stream_resynchronises(
    session: Session, case: FrameCase
) -> None:
    server = session.editor.server
    server.stray.clear()
    ident = server.next_id()
    server.send_bytes(case.build(session.request_bytes(ident)))
    if case.outcome == ANSWERED:
        assert server.response(ident).get("result") == session.expected_hover
    session.probe()
    if case.outcome == NULL_ERROR:
        errors = [m for m in server.stray if m.get("id") is None and "error" in m]
        assert [e["error"]["code"] for e in errors][:1] == [case.code], server.stray
    assert all(m.get("id") in (None, ident) for m in server.stray), server.stray


# --- messages: an answer under the request's own id ------------------------------------

ENVELOPES: list[tuple[str, dict[str, Any], int]] = [
    ("wrong jsonrpc", {"jsonrpc": "1.0"}, -32600),
    ("no jsonrpc", {"jsonrpc": None}, -32600),
    ("method a number", {"method": 7}, -32600),
    ("unknown method", {"method": "statekit/nothing"}, -32601),
]


@pytest.mark.parametrize(("name", "change", "code"), ENVELOPES, ids=[e[0] for e in ENVELOPES])
def test_a_broken_request_is_answered_under_its_id(
    session: Session, name: str, change: dict[str, Any], code: int
) -> None:
    server = session.editor.server
    ident = server.next_id()
    message = json.loads(session.request_bytes(ident))
    message.update(change)
    message = {k: v for k, v in message.items() if v is not None}
    server.send_bytes(frame(json.dumps(message).encode()))
    assert server.response(ident)["error"]["code"] == code
    session.probe()


# --- params ----------------------------------------------------------------------------

HOSTILE_VALUES: list[Any] = [
    None, -1, 0, 2**31, 2**53, 2**70, 1.5, "", "0", "x" * 3_000, "\u0000\ud7ff\U0010ffff",
    [], [1], {}, {"line": -1}, True, {"uri": None},
]  # fmt: skip


def base_params(uri: str) -> dict[str, Json]:
    position = dict(HOVER_AT)
    document = {"uri": uri}
    whole = {"start": {"line": 0, "character": 0}, "end": {"line": 9, "character": 0}}
    return {
        "textDocument/hover": {"textDocument": document, "position": position},
        "textDocument/completion": {"textDocument": document, "position": position},
        "textDocument/definition": {"textDocument": document, "position": position},
        "textDocument/references": {
            "textDocument": document,
            "position": position,
            "context": {"includeDeclaration": True},
        },
        "textDocument/documentSymbol": {"textDocument": document},
        "textDocument/prepareRename": {"textDocument": document, "position": position},
        "textDocument/rename": {"textDocument": document, "position": position, "newName": "calm"},
        "textDocument/codeAction": {
            "textDocument": document,
            "range": whole,
            "context": {"diagnostics": []},
        },
        "workspace/executeCommand": {"command": "statekit.serverStats", "arguments": []},
    }


def paths_of(value: Any, prefix: tuple[Any, ...] = ()) -> Iterator[tuple[Any, ...]]:
    yield prefix
    if isinstance(value, dict):
        for key, item in value.items():
            yield from paths_of(item, (*prefix, key))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            yield from paths_of(item, (*prefix, index))


def mutated(params: Any, path: tuple[Any, ...], replacement: Any, drop: bool) -> Any:
    """`params` with the value at `path` replaced (or its key dropped)."""
    if not path:
        return replacement
    copy = json.loads(json.dumps(params))
    parent = copy
    for key in path[:-1]:
        parent = parent[key]
    if drop and isinstance(parent, dict):
        del parent[path[-1]]
    else:
        parent[path[-1]] = replacement
    return copy


def params_cases(uri: str) -> Iterator[tuple[str, str, Any]]:
    """Every method with each of its values replaced by each hostile value and each key
    dropped (the systematic part), then seeded random multi-point mutations."""
    bases = base_params(uri)
    for method, params in bases.items():
        for path in paths_of(params):
            if path:
                yield method, f"drop {path}", mutated(params, path, None, drop=True)
            for value in HOSTILE_VALUES:
                yield method, f"{path}={value!r:.20}", mutated(params, path, value, drop=False)
    chance = random.Random(28)
    for round_ in range(150):
        method = chance.choice(sorted(bases))
        params = bases[method]
        for _ in range(chance.randint(1, 3)):
            path = chance.choice(list(paths_of(params)))
            value = chance.choice(HOSTILE_VALUES)
            params = mutated(params, path, value, drop=chance.random() < 0.2)
        yield method, f"random {round_}", params


def test_every_request_is_answered_whatever_its_params(session: Session) -> None:
    server = session.editor.server
    unanswered = []
    count = 0
    for method, name, params in params_cases(session.uri):
        ident = server.next_id()
        body = {"jsonrpc": "2.0", "id": ident, "method": method, "params": params}
        server.send_bytes(frame(json.dumps(body).encode()))
        answer = server.response(ident)
        count += 1
        if "result" not in answer and not isinstance(answer.get("error", {}).get("code"), int):
            unanswered.append((method, name, answer))
    assert not unanswered
    assert count > 800
    session.probe()


def test_requests_after_shutdown_are_refused_not_dropped(tmp_path: Path) -> None:
    editor = Editor(tmp_path)
    try:
        server = editor.server
        assert server.request("shutdown", None) is None
        ident = server.next_id()
        server.send_bytes(
            frame(json.dumps({"jsonrpc": "2.0", "id": ident, "method": "shutdown"}).encode())
        )
        assert server.response(ident)["error"]["code"] == -32600
    finally:
        editor.close()


# --- positions past the document ----------------------------------------------------

PAST_THE_END = [(5, 500), (7, 0), (500, 0), (2**31 - 1, 2**31 - 1)]
"""Positions the protocol allows (unsigned 32-bit, under 2^31) that lie past a line's end or
past the document's last line: the protocol says they fall back to the end."""
OUT_OF_RANGE = [(2**31, 0), (0, 2**31), (-1, 0), (0, -1)]
"""Positions no client may send: they are invalid params (-32602), never an internal error."""


@pytest.mark.parametrize("method", ["textDocument/hover", "textDocument/definition"])
@pytest.mark.parametrize("line_character", PAST_THE_END + OUT_OF_RANGE)
def test_a_position_past_the_end_is_clamped_and_one_out_of_range_is_invalid_params(
    session: Session, method: str, line_character: tuple[int, int]
) -> None:
    server = session.editor.server
    ident = server.next_id()
    line, character = line_character
    params = {
        "textDocument": {"uri": session.uri},
        "position": {"line": line, "character": character},
    }
    body = {"jsonrpc": "2.0", "id": ident, "method": method, "params": params}
    server.send_bytes(frame(json.dumps(body).encode()))
    answer = server.response(ident)
    if line_character in PAST_THE_END:
        assert "error" not in answer, answer
        assert answer["result"] in (None, []), answer  # nothing named there
    else:
        assert answer["error"]["code"] == -32602, answer
    session.probe()
