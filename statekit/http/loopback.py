"""`LoopbackServer`: an ASGI app served by uvicorn on 127.0.0.1 in a thread (tests, samples).

    with LoopbackServer(app) as server:
        HttpPoster(lambda m: f"{server.url}/instances/{m.instance_id}/events")(message)

The socket is bound and listening before the thread starts, so a client may connect
as soon as `__enter__` returns (the kernel queues the connection until uvicorn accepts
it): nothing waits on a timer. `__exit__` asks uvicorn to stop and joins its thread.
"""

from __future__ import annotations

import socket
import threading
from types import TracebackType
from typing import Any

import uvicorn


class LoopbackServer:
    """The app on a port of 127.0.0.1 the system picks (module docstring)."""

    def __init__(self, app: Any) -> None:
        self._app = app
        self._socket: socket.socket | None = None
        self._server: uvicorn.Server | None = None
        self._thread: threading.Thread | None = None

    @property
    def url(self) -> str:
        """`http://127.0.0.1:PORT`."""
        if self._socket is None:
            raise RuntimeError("the server is not running (use it in a with block)")
        return f"http://127.0.0.1:{self._socket.getsockname()[1]}"

    def __enter__(self) -> LoopbackServer:
        listening = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        listening.bind(("127.0.0.1", 0))
        listening.listen(64)
        config = uvicorn.Config(self._app, log_level="warning", lifespan="off")
        self._server = server = uvicorn.Server(config)
        self._socket = listening
        self._thread = threading.Thread(
            target=server.run, kwargs={"sockets": [listening]}, daemon=True
        )
        self._thread.start()
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        trace: TracebackType | None,
    ) -> None:
        if self._server is not None:
            self._server.should_exit = True
        if self._thread is not None:
            self._thread.join(timeout=30)
        if self._socket is not None:
            self._socket.close()
        self._socket = self._server = self._thread = None
