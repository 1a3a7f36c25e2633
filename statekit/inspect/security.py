"""What every request and response of the inspector goes through: read-only methods, the
token, and the security headers (one ASGI middleware, so that no route can forget them).

- A method other than GET or HEAD is refused (405) before any route runs: nothing the
  inspector serves changes anything.
- With a token (`Inspector.token`), a request carries it as `Authorization: Bearer T`,
  or as the cookie a first `?token=T` sets (HttpOnly, SameSite=Strict) while the
  browser is sent on to the same address without it; anything else gets 401. Tokens
  are compared in constant time.
- Every response carries `CONTENT_SECURITY_POLICY` (no script or style but the
  inspector's own files, no framing, no base or foreign form target), `nosniff`,
  `no-referrer` (a token in an address is never sent on) and `no-store`.
"""

from __future__ import annotations

import hmac
from collections.abc import Iterable
from http.cookies import SimpleCookie
from urllib.parse import parse_qsl, quote, urlencode

from starlette.datastructures import MutableHeaders
from starlette.types import ASGIApp, Message, Receive, Scope, Send

CONTENT_SECURITY_POLICY = (
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
    "connect-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'self'"
)
SECURITY_HEADERS = (
    ("content-security-policy", CONTENT_SECURITY_POLICY),
    ("x-content-type-options", "nosniff"),
    ("referrer-policy", "no-referrer"),
    ("cache-control", "no-store"),
)
READ_METHODS = frozenset({"GET", "HEAD"})
TOKEN_COOKIE = "statekit_inspect_token"
TOKEN_PARAMETER = "token"


class InspectorGuard:
    """ASGI middleware: refuses writes and requests without the token; adds the headers."""

    def __init__(self, app: ASGIApp, token: str | None) -> None:
        self.app = app
        self.token = token

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        send = _with_headers(send)
        if scope["method"] not in READ_METHODS:
            await _plain(
                send, 405, "the inspector only reads: GET or HEAD", [("allow", "GET, HEAD")]
            )
            return
        if self.token is not None:
            query = parse_qsl(scope.get("query_string", b"").decode("latin-1"), True)
            given = [value for name, value in query if name == TOKEN_PARAMETER]
            if given and self._matches(given[-1]):
                await _token_redirect(send, scope, query, self.token)
                return
            if not self._carried(scope):
                await _plain(
                    send,
                    401,
                    "this inspector asks for its token: open the address `statekit inspect` "
                    "printed (it ends in ?token=...) or send Authorization: Bearer <token>",
                    [("www-authenticate", 'Bearer realm="statekit inspect"')],
                )
                return
        await self.app(scope, receive, send)

    def _matches(self, given: str) -> bool:
        assert self.token is not None
        return hmac.compare_digest(given.encode(), self.token.encode())

    def _carried(self, scope: Scope) -> bool:
        for name, value in scope["headers"]:
            if name == b"authorization":
                scheme, _, credential = value.decode("latin-1").partition(" ")
                if scheme.lower() == "bearer" and self._matches(credential.strip()):
                    return True
            elif name == b"cookie":
                cookie = SimpleCookie()
                try:
                    cookie.load(value.decode("latin-1"))
                except Exception:  # a malformed cookie header carries no token
                    continue
                morsel = cookie.get(TOKEN_COOKIE)
                if morsel is not None and self._matches(morsel.value):
                    return True
        return False


def _with_headers(send: Send) -> Send:
    async def sending(message: Message) -> None:
        if message["type"] == "http.response.start":
            headers = MutableHeaders(scope=message)
            for name, value in SECURITY_HEADERS:
                headers[name] = value
        await send(message)

    return sending


async def _plain(
    send: Send, status: int, text: str, headers: Iterable[tuple[str, str]] = ()
) -> None:
    body = (text + "\n").encode()
    await send(
        {
            "type": "http.response.start",
            "status": status,
            "headers": [
                (b"content-type", b"text/plain; charset=utf-8"),
                (b"content-length", str(len(body)).encode()),
                *((k.encode(), v.encode()) for k, v in headers),
            ],
        }
    )
    await send({"type": "http.response.body", "body": body})


async def _token_redirect(
    send: Send, scope: Scope, query: list[tuple[str, str]], token: str
) -> None:
    """303 to the same address without `?token=`, setting the token's cookie."""
    rest = urlencode([(k, v) for k, v in query if k != TOKEN_PARAMETER])
    # quoted again: a decoded path may hold what a header must not (CR, LF, non-ASCII)
    location = quote(scope.get("root_path", "") + scope["path"]) + ("?" + rest if rest else "")
    cookie = f"{TOKEN_COOKIE}={token}; Path=/; HttpOnly; SameSite=Strict"
    await send(
        {
            "type": "http.response.start",
            "status": 303,
            "headers": [
                (b"location", location.encode("utf-8")),
                (b"set-cookie", cookie.encode("latin-1")),
                (b"content-length", b"0"),
            ],
        }
    )
    await send({"type": "http.response.body", "body": b""})
