"""One URL in front of several HTTP backends, the way a load balancer spreads Slack's requests over replicas.

    with SpreadingProxy([url_a, url_b]) as proxy:
        post(proxy.base_url + "/slack/events", ...)      # goes to a, the next request to b, then a again...
        post(proxy.base_url + "/slack/events", headers={SpreadingProxy.PIN: "1"})  # goes to b, header dropped
        assert proxy.served == [0, 1]                     # which backend answered each request, in order

Requests are forwarded byte for byte (method, path, headers, body) over a new connection each, and the backend's
status, headers and body are relayed back; ``served`` and ``log`` record which backend took what. Alternating
(not random) keeps a test's choice of replica reproducible; ``PIN`` sends one request to a chosen backend, the
way a retry from Slack can land on the other replica than the first delivery.
"""

from __future__ import annotations

import http.client
import itertools
import threading
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler
from typing import Any
from urllib.parse import urlsplit

from tests.support.loopback import LoopbackServer

_HOP_BY_HOP = {"connection", "keep-alive", "transfer-encoding", "te", "trailer", "upgrade", "proxy-connection"}


@dataclass(frozen=True)
class Forwarded:
    backend: int  # index into the proxy's backends
    path: str
    headers: dict[str, str]  # lower-cased names, as the backend received them
    status: int  # what the backend answered (502 when it could not be reached)


class SpreadingProxy(LoopbackServer):
    thread_name = "spreading-proxy"
    PIN = "X-Test-Backend"  # a request carrying this header (a backend index) goes there; the header is dropped

    def __init__(self, backends: list[str], timeout: float = 30.0) -> None:
        super().__init__()
        if not backends:
            raise ValueError("a spreading proxy needs at least one backend")
        self.backends = [urlsplit(url) for url in backends]
        self.timeout = timeout
        self.log: list[Forwarded] = []
        self._turn = itertools.cycle(range(len(backends)))
        self._lock = threading.Lock()

    @property
    def served(self) -> list[int]:
        with self._lock:
            return [f.backend for f in self.log]

    def choose(self, pinned: str | None) -> int:
        if pinned is not None:
            index = int(pinned)
            if not 0 <= index < len(self.backends):
                raise ValueError(f"no backend {index}")
            return index
        with self._lock:
            return next(self._turn)

    def forward(self, index: int, method: str, path: str, headers: dict[str, str], body: bytes
                ) -> tuple[int, list[tuple[str, str]], bytes]:
        target = self.backends[index]
        connection = http.client.HTTPConnection(target.hostname or "127.0.0.1", target.port, timeout=self.timeout)
        try:
            connection.request(method, path, body=body, headers=headers)
            response = connection.getresponse()
            return response.status, response.getheaders(), response.read()
        except OSError as exc:
            return 502, [("Content-Type", "text/plain")], f"backend {index} unreachable: {exc}".encode()
        finally:
            connection.close()


class _Handler(BaseHTTPRequestHandler):
    owner: SpreadingProxy
    protocol_version = "HTTP/1.1"

    def log_message(self, format: str, *args: Any) -> None:
        pass

    def _handle(self) -> None:
        proxy = self.owner
        length = int(self.headers.get("content-length") or 0)
        body = self.rfile.read(length) if length else b""
        pinned = self.headers.get(SpreadingProxy.PIN)
        headers = {k: v for k, v in self.headers.items()
                   if k.lower() not in _HOP_BY_HOP and k.lower() != SpreadingProxy.PIN.lower()}
        index = proxy.choose(pinned)
        status, reply_headers, data = proxy.forward(index, self.command, self.path, headers, body)
        with proxy._lock:
            proxy.log.append(Forwarded(index, self.path, {k.lower(): v for k, v in headers.items()}, status))
        self.send_response(status)
        for name, value in reply_headers:
            if name.lower() not in _HOP_BY_HOP | {"content-length", "server", "date"}:  # ours are sent
                self.send_header(name, value)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    do_GET = _handle
    do_POST = _handle


SpreadingProxy.handler = _Handler
