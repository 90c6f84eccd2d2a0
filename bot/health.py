"""The per-process HTTP endpoint: ``/healthz`` (alive), ``/readyz`` (dependencies reachable), ``/metrics``.

Readiness checks and scrape-time collectors are plain async callables supplied by the roles, so this module
knows nothing of Redis or Slack.
"""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field

from aiohttp import web
from prometheus_client import CONTENT_TYPE_LATEST, generate_latest

from bot.listen import start_site
from bot.metrics import REGISTRY

log = logging.getLogger(__name__)

ReadinessCheck = Callable[[], Awaitable[tuple[bool, str]]]
Collector = Callable[[], Awaitable[None]]


@dataclass
class HealthServer:
    """Serves the three endpoints on ``host:port`` until ``stop``; ``port=0`` picks a free port."""

    host: str = "0.0.0.0"
    port: int = 8080
    checks: dict[str, ReadinessCheck] = field(default_factory=dict)
    collectors: Sequence[Collector] = ()
    check_timeout: float = 3.0
    _runner: web.AppRunner | None = None

    async def healthz(self, _request: web.Request) -> web.Response:
        return web.json_response({"status": "alive"})

    async def readyz(self, _request: web.Request) -> web.Response:
        results: dict[str, dict[str, object]] = {}
        for name, check in self.checks.items():
            try:
                ok, detail = await asyncio.wait_for(check(), self.check_timeout)
            except Exception as exc:  # a failing check means "not ready", never a crash of the endpoint
                ok, detail = False, f"{type(exc).__name__}: {exc}"
            results[name] = {"ok": ok, "detail": detail}
        ready = all(r["ok"] for r in results.values())
        return web.Response(
            status=200 if ready else 503,
            text=json.dumps({"ready": ready, "checks": results}),
            content_type="application/json",
        )

    async def metrics(self, _request: web.Request) -> web.Response:
        for collect in self.collectors:
            try:
                await asyncio.wait_for(collect(), self.check_timeout)
            except Exception:
                log.warning("metrics collector failed", exc_info=True)
        body = generate_latest(REGISTRY)
        return web.Response(body=body, headers={"Content-Type": CONTENT_TYPE_LATEST})

    async def start(self) -> int:
        app = web.Application()
        app.router.add_get("/healthz", self.healthz)
        app.router.add_get("/readyz", self.readyz)
        app.router.add_get("/metrics", self.metrics)
        self._runner, self.port = await start_site(
            app, self.host, self.port, purpose="/healthz, /readyz and /metrics", fix="pass --health-port PORT"
        )
        return self.port

    async def stop(self) -> None:
        if self._runner is not None:
            await self._runner.cleanup()
            self._runner = None
