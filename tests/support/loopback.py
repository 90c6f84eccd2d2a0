"""A threaded HTTP server on 127.0.0.1 for the fakes of remote APIs; restartable on the same port."""

from __future__ import annotations

import contextlib
import socket
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, ClassVar, Self


class LoopbackServer:
    """Subclasses set ``handler`` (a request handler class with an ``owner`` attribute) and ``thread_name``."""

    handler: ClassVar[type[BaseHTTPRequestHandler]]
    thread_name: ClassVar[str] = "loopback"

    def __init__(self) -> None:
        self._server: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None
        self._port = 0
        self._connections: set[socket.socket] = set()  # open (kept-alive) client connections
        self._connections_lock = threading.Lock()

    def start(self) -> Self:
        """Start listening; after :meth:`stop`, starts again on the same port (connection refused between)."""
        owner = self

        class Tracked(self.handler):  # type: ignore[name-defined]
            def setup(self) -> None:
                super().setup()
                with owner._connections_lock:
                    owner._connections.add(self.connection)

            def finish(self) -> None:
                with owner._connections_lock:
                    owner._connections.discard(self.connection)
                super().finish()

        bound: Any = type(f"Bound{self.handler.__name__}", (Tracked,), {"owner": self})
        self._server = ThreadingHTTPServer(("127.0.0.1", self._port), bound)
        self._server.daemon_threads = True
        self._port = self._server.server_address[1]
        self._thread = threading.Thread(target=self._server.serve_forever, args=(0.05,), name=self.thread_name,
                                        daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        """Stop listening and drop kept-alive connections too: a stopped fake is unreachable, like a down API."""
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None
        with self._connections_lock:
            connections, self._connections = self._connections, set()
        for connection in connections:
            with contextlib.suppress(OSError):
                connection.shutdown(socket.SHUT_RDWR)
        if self._thread is not None:
            self._thread.join(5)
            self._thread = None

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self._port}"
