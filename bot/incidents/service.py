"""The on-call front end as one task of the slack role: the timeline recorder, and the intake listener when
``incidents.enabled``."""

from __future__ import annotations

import asyncio
import logging

from redis.asyncio import Redis

from bot.approvals.store import CallStore
from bot.incidents.http import IntakeServer
from bot.incidents.intake import Intake
from bot.incidents.recorder import TimelineRecorder
from bot.incidents.settings import IncidentSecrets, IncidentSettings
from bot.incidents.store import IncidentStore

log = logging.getLogger(__name__)


async def run_oncall(
    redis: Redis, calls: CallStore, settings: IncidentSettings, secrets: IncidentSecrets, stop: asyncio.Event,
    *, consumer: str | None = None, started: asyncio.Future[int] | None = None,
) -> None:  # fmt: skip
    """Record timelines until ``stop``; serve the intake meanwhile if enabled (``started`` gets its port)."""
    store = IncidentStore(redis, retention_seconds=settings.retention_seconds)
    recorder = TimelineRecorder(redis, store, calls, consumer=consumer)
    server: IntakeServer | None = None
    if settings.enabled:
        server = IntakeServer(Intake(redis, settings, secrets, store), settings.http_host, settings.http_port)
        port = await server.start()
        log.info("incidents: alert intake listening on port %s (%d routes)", port, len(settings.routes))
        if not secrets.alertmanager_token and not secrets.alertmanager_basic:
            log.warning("incidents: no Alertmanager credential set: /alerts/alertmanager refuses every delivery")
        if not secrets.pagerduty_secrets:
            log.warning("incidents: no PagerDuty webhook secret set: /alerts/pagerduty refuses every delivery")
    if started is not None and not started.done():
        started.set_result(server.port if server else 0)
    try:
        await recorder.run(stop)
    finally:
        if server is not None:
            await server.stop()
