"""The on-call front end as part of the slack role: the timeline recorder always, and the alert intake when
``incidents.enabled``, served on its own port (``incidents.listen: own``, works in Socket Mode too) or mounted
on the Slack HTTP server (``listen: slack``, HTTP mode only)."""

from __future__ import annotations

import asyncio
import logging

from aiohttp import web
from redis.asyncio import Redis

from bot.approvals.store import CallStore
from bot.incidents.http import add_routes
from bot.incidents.intake import Intake
from bot.incidents.recorder import TimelineRecorder
from bot.incidents.settings import IncidentSecrets, IncidentSettings
from bot.incidents.store import IncidentStore
from bot.listen import start_site
from bot.sanitize.redact import Redactor

log = logging.getLogger(__name__)


class OnCall:
    def __init__(self, redis: Redis, calls: CallStore, settings: IncidentSettings, secrets: IncidentSecrets, *,
                 consumer: str | None = None, reader: Redis | None = None,
                 redactor: Redactor | None = None) -> None:  # fmt: skip
        self.settings = settings
        self.store = IncidentStore(redis, retention_seconds=settings.retention_seconds)
        self.intake = Intake(redis, settings, secrets, self.store, redactor=redactor)
        self.recorder = TimelineRecorder(redis, self.store, calls, consumer=consumer, reader=reader)
        self.port: int | None = None
        self._runner: web.AppRunner | None = None
        if settings.enabled:
            if not secrets.alertmanager_token and not secrets.alertmanager_basic:
                log.warning("incidents: no Alertmanager credential set: /alerts/alertmanager refuses every delivery")
            if not secrets.pagerduty_secrets:
                log.warning("incidents: no PagerDuty webhook secret set: /alerts/pagerduty refuses every delivery")

    def mount(self, app: web.Application) -> None:
        """Add the intake routes to another aiohttp application (the Slack HTTP server)."""
        add_routes(app, self.intake)

    async def listen(self, host: str | None = None, port: int | None = None) -> int:
        """Serve the intake on its own port (``ListenError`` when it cannot be bound)."""
        app = web.Application(client_max_size=self.settings.max_body_bytes + 1)
        add_routes(app, self.intake)
        self._runner, self.port = await start_site(
            app, host or self.settings.http_host, self.settings.http_port if port is None else port,
            purpose="alert webhooks", fix="set incidents.http_port to a free port",
        )  # fmt: skip
        log.info("incidents: alert intake listening on port %s (%d routes)", self.port, len(self.settings.routes))
        return self.port

    async def run(self, stop: asyncio.Event) -> None:
        """Record timelines until ``stop``; then close the intake's own listener, if any."""
        try:
            await self.recorder.run(stop)
        finally:
            if self._runner is not None:
                await self._runner.cleanup()
                self._runner = None
