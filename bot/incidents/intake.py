"""Alert intake as plain functions: (raw body, headers) -> (HTTP status, JSON answer), side effects in Redis.

Order of checks, so that a bad delivery has no effect at all: size, authentication (401), parsing (400),
routing, the per-route rate limit (429); only then is the incident opened or updated (one atomic script) and
the thread's posts queued on the agent's outbox, which the Slack poster consumes.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from redis.asyncio import Redis

from bot.agent import bus
from bot.incidents.alerts import (
    Notification,
    Refused,
    check_alertmanager_auth,
    check_pagerduty_signature,
    parse_alertmanager,
    parse_pagerduty,
)
from bot.incidents.card import clean, render_brief, render_card, render_note
from bot.incidents.settings import IncidentSecrets, IncidentSettings, Route
from bot.incidents.store import Applied, IncidentStore
from bot.metrics import ALERT_DELIVERIES
from bot.sanitize.redact import Redactor, build_redactor

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Answer:
    status: int
    body: dict[str, Any]


class Intake:
    """Both endpoints over one store; stateless (any replica may take any delivery)."""

    def __init__(self, redis: Redis, settings: IncidentSettings, secrets: IncidentSecrets,
                 store: IncidentStore | None = None, redactor: Redactor | None = None) -> None:  # fmt: skip
        self.redis = redis
        # the process's configured redactor (as tool output gets); the default patterns only when not given
        self.redactor = redactor or build_redactor()
        self.settings = settings
        self.secrets = secrets
        self.store = store or IncidentStore(redis, retention_seconds=settings.retention_seconds)

    async def alertmanager(self, body: bytes, headers: Mapping[str, str]) -> Answer:
        return _counted("alertmanager", await self._alertmanager(body, headers))

    async def pagerduty(self, body: bytes, headers: Mapping[str, str]) -> Answer:
        return _counted("pagerduty", await self._pagerduty(body, headers))

    async def _alertmanager(self, body: bytes, headers: Mapping[str, str]) -> Answer:
        try:
            self._check_size(body)
            check_alertmanager_auth(headers, self.secrets)
            notification = parse_alertmanager(body)
        except Refused as exc:
            return _refused(exc, "alertmanager")
        return await self.deliver(notification)

    async def _pagerduty(self, body: bytes, headers: Mapping[str, str]) -> Answer:
        try:
            self._check_size(body)
            check_pagerduty_signature(body, headers, self.secrets)
            notification = parse_pagerduty(body)
        except Refused as exc:
            return _refused(exc, "pagerduty")
        if notification is None:
            return Answer(200, {"status": "ignored", "reason": "not an incident event"})
        return await self.deliver(notification)

    async def deliver(self, n: Notification) -> Answer:
        """An authenticated, well-formed notification: route, rate-limit, apply, queue the posts."""
        route = self.settings.route_for(n.source, n.labels)
        if route is None:
            log.warning("incidents: no route for a %s notification (labels %s); not accepted", n.source,
                        sorted(n.labels))
            return Answer(422, {"status": "unrouted", "error": "no route matches this alert's labels"})
        limit = route.rate_limit_per_minute or self.settings.rate_limit_per_minute
        if await self.store.over_rate(route.name, limit):
            log.warning("incidents: route %s is over its limit of %d deliveries a minute", route.name, limit)
            return Answer(429, {"status": "rate_limited", "error": f"route {route.name}: over {limit} per minute"})
        fields = {"source": n.source, "key": n.key, "route": route.name, "channel": route.channel,
                  "title": clean(n.title, 300, self.redactor)}
        event = {"kind": n.status, "source": n.source, "title": clean(n.title, 300, self.redactor),
                 "actor": clean(n.actor, 100, self.redactor),
                 "event_type": n.event_type, "alerts": len(n.fingerprints)}  # fmt: skip
        applied = await self.store.apply(
            source=n.source, key=n.key, status=n.status, event=event, fields=fields, fingerprints=n.fingerprints,
            event_id=n.event_id,
        )  # fmt: skip
        if applied.outcome == "duplicate" and applied.incident_id:
            # a retry of a delivery applied before its posts were queued (the attempt failed after the script, so
            # the source retries): queue what that attempt did not, or the incident would never get its thread
            record = await self.store.get(applied.incident_id)
            if record and not record.get("thread_queued"):
                await self._queue_posts(n, route, applied)
        if applied.outcome in ("none", "duplicate"):
            return Answer(200, {"status": "ignored", "reason": "no open incident" if applied.outcome == "none"
                                else "delivery already handled"})
        await self._queue_posts(n, route, applied)
        return Answer(200 if applied.outcome != "new" else 201,
                      {"status": applied.outcome, "incident": applied.incident_id})

    async def _queue_posts(self, n: Notification, route: Route, applied: Applied) -> None:
        record = await self.store.get(applied.incident_id)
        key = self.store.incident_key(applied.incident_id)
        state = record.get("state", "open")
        text, blocks = render_card(
            n, state=state, route=route.name, deliveries=int(record.get("deliveries") or 1),
            opened_at=float(record.get("opened_at") or 0) or None, updated_at=float(record.get("updated_at") or 0),
            redactor=self.redactor,
        )  # fmt: skip
        brief = render_brief(n, route.brief or self.settings.brief, self.redactor)
        if not record.get("thread_queued") and await self.store.claim_thread(applied.incident_id):
            # one delivery queues the thread (replicas race here); a creator that died before claiming it is
            # repaired by the next delivery
            await bus.publish_outbox(self.redis, "thread_open", f"incident:{applied.incident_id}", {
                "record": key, "channel": route.channel, "text": text, "blocks": blocks,
                "user": f"alert:{n.source}", "brief": brief,
                "meta": {"source": "alert", "incident": applied.incident_id, "route": route.name},
            })  # fmt: skip
            if applied.outcome == "new":
                return
        note = render_note(n, state, applied.previous_fingerprints, self.redactor)
        post_key = f"incident:{applied.incident_id}:{record.get('deliveries', '0')}"
        await bus.publish_outbox(self.redis, "thread_post", f"incident:{applied.incident_id}", {
            "record": key, "key": post_key, "text": note or "", "card": {"text": text, "blocks": blocks},
        })  # fmt: skip

    def _check_size(self, body: bytes) -> None:
        if len(body) > self.settings.max_body_bytes:
            raise Refused(413, f"body over {self.settings.max_body_bytes} bytes")


def _counted(source: str, answer: Answer) -> Answer:
    outcome = str(answer.body.get("status") or "")
    ALERT_DELIVERIES.labels(source, f"{outcome}_{answer.status}" if answer.status >= 400 else outcome).inc()
    return answer


def _refused(exc: Refused, source: str) -> Answer:
    log.warning("incidents: %s delivery refused (%d): %s", source, exc.status, exc.reason)
    return Answer(exc.status, {"status": "refused", "error": exc.reason})
