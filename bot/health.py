"""The per-process HTTP endpoint: ``/healthz`` (alive), ``/readyz`` (dependencies reachable), ``/metrics``.

Readiness checks and scrape-time collectors are plain async callables supplied by the roles, so this module
knows nothing of Redis or Slack.

Served by asyncio's own TCP server, not aiohttp: the three answers are small GET responses, and a runner or
agent process that does not speak HTTP otherwise would carry aiohttp (~10 MiB of RSS) for them alone. Each
request is answered and the connection closed (``Connection: close``), which is what probes and Prometheus
scrapes expect of a health port; a request that is not a GET of a known path gets 404/405, one whose head does
not arrive within ``request_timeout`` or exceeds ``MAX_HEAD`` bytes is dropped.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field

from bot.listen import ListenError, listen_error
from bot.metric_types import CONTENT_TYPE
from bot.metrics import REGISTRY

log = logging.getLogger(__name__)

ReadinessCheck = Callable[[], Awaitable[tuple[bool, str]]]
Collector = Callable[[], Awaitable[None]]

#: The largest request head (request line and headers) read; a probe's is a few hundred bytes.
MAX_HEAD = 8192
_REASONS = {200: "OK", 400: "Bad Request", 404: "Not Found", 405: "Method Not Allowed", 503: "Service Unavailable"}
_JSON = "application/json; charset=utf-8"


@dataclass
class HealthServer:
    """Serves the three endpoints on ``host:port`` until ``stop``; ``port=0`` picks a free port."""

    host: str = "0.0.0.0"
    port: int = 8080
    checks: dict[str, ReadinessCheck] = field(default_factory=dict)
    collectors: Sequence[Collector] = ()
    check_timeout: float = 3.0
    request_timeout: float = 10.0
    _server: asyncio.Server | None = None

    async def healthz(self) -> tuple[int, str, bytes]:
        return 200, _JSON, json.dumps({"status": "alive"}).encode()

    async def readyz(self) -> tuple[int, str, bytes]:
        results: dict[str, dict[str, object]] = {}
        for name, check in self.checks.items():
            try:
                ok, detail = await asyncio.wait_for(check(), self.check_timeout)
            except Exception as exc:  # a failing check means "not ready", never a crash of the endpoint
                ok, detail = False, f"{type(exc).__name__}: {exc}"
            results[name] = {"ok": ok, "detail": detail}
        ready = all(r["ok"] for r in results.values())
        return 200 if ready else 503, _JSON, json.dumps({"ready": ready, "checks": results}).encode()

    async def metrics(self) -> tuple[int, str, bytes]:
        for collect in self.collectors:
            try:
                await asyncio.wait_for(collect(), self.check_timeout)
            except Exception:
                log.warning("metrics collector failed", exc_info=True)
        return 200, CONTENT_TYPE, REGISTRY.exposition()

    async def start(self) -> int:
        """Bind and serve; raises :class:`ListenError` (one line naming the address and the fix) when the port
        cannot be bound."""
        try:
            self._server = await asyncio.start_server(self._serve, self.host, self.port, limit=MAX_HEAD)
        except OSError as exc:
            shown = f"[{self.host}]:{self.port}" if ":" in self.host else f"{self.host}:{self.port}"
            raise ListenError(listen_error(shown, "/healthz, /readyz and /metrics", exc,
                                           "pass --health-port PORT")) from None
        sockets = self._server.sockets
        self.port = int(sockets[0].getsockname()[1]) if sockets else self.port
        return self.port

    async def stop(self) -> None:
        if self._server is not None:
            self._server.close()
            await self._server.wait_closed()
            self._server = None

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            try:
                head = await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), self.request_timeout)
            except (asyncio.IncompleteReadError, asyncio.LimitOverrunError, TimeoutError, ConnectionError):
                return
            status, content_type, body = await self._answer(head)
            writer.write(
                f"HTTP/1.1 {status} {_REASONS[status]}\r\nContent-Type: {content_type}\r\n"
                f"Content-Length: {len(body)}\r\nConnection: close\r\n\r\n".encode() + body
            )
            await writer.drain()
        except ConnectionError:
            pass
        finally:
            writer.close()
            with contextlib.suppress(ConnectionError):
                await writer.wait_closed()

    async def _answer(self, head: bytes) -> tuple[int, str, bytes]:
        parts = head.split(b"\r\n", 1)[0].split(b" ")
        if len(parts) != 3 or not parts[2].startswith(b"HTTP/1."):
            return 400, _JSON, b'{"error": "bad request"}'
        method, target = parts[0], parts[1].split(b"?", 1)[0]
        routes = {b"/healthz": self.healthz, b"/readyz": self.readyz, b"/metrics": self.metrics}
        route = routes.get(target)
        if route is None:
            return 404, _JSON, b'{"error": "not found"}'
        if method != b"GET":
            return 405, _JSON, b'{"error": "only GET"}'
        return await route()


__all__ = ["HealthServer", "ListenError"]
