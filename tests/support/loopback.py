"""A threaded HTTP server on 127.0.0.1 for the fakes of remote APIs; restartable on the same port."""

from __future__ import annotations

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

    def start(self) -> Self:
        """Start listening; after :meth:`stop`, starts again on the same port (connection refused between)."""
        bound: Any = type(f"Bound{self.handler.__name__}", (self.handler,), {"owner": self})
        self._server = ThreadingHTTPServer(("127.0.0.1", self._port), bound)
        self._server.daemon_threads = True
        self._port = self._server.server_address[1]
        self._thread = threading.Thread(target=self._server.serve_forever, args=(0.05,), name=self.thread_name,
                                        daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None
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
