"""Parsing and authenticating the two alert sources into one ``Notification``.

Plain functions of (raw body, headers): no I/O, so every refusal (401 unsigned or forged, 400 malformed) is
decided before anything is written anywhere.

* Alertmanager webhook, payload ``version: "4"``; authenticated by the bearer token or basic-auth pair that
  Alertmanager's ``http_config`` sends.
* PagerDuty Generic Webhooks v3; ``X-PagerDuty-Signature`` carries one ``v1=<hex>`` HMAC-SHA256 of the raw
  body per active secret (several during a rotation); any match with any configured secret is enough.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal
from urllib.parse import quote

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from bot.incidents.settings import IncidentSecrets

Status = Literal["firing", "acknowledged", "resolved", "update"]


class Refused(Exception):
    """A delivery refused before any side effect: ``status`` is the HTTP status to answer."""

    def __init__(self, status: int, reason: str) -> None:
        super().__init__(reason)
        self.status = status
        self.reason = reason


@dataclass(frozen=True)
class AlertItem:
    """One alert of a notification (Alertmanager groups several; a PagerDuty incident is one)."""

    name: str
    status: str
    labels: dict[str, str]
    summary: str = ""
    description: str = ""
    starts_at: str = ""
    source_url: str = ""
    fingerprint: str = ""


@dataclass(frozen=True)
class Notification:
    """What any source tells us: which incident (``key``), what happened to it (``status``), and the facts."""

    source: Literal["alertmanager", "pagerduty"]
    key: str
    status: Status
    title: str
    severity: str
    labels: dict[str, str]
    summary: str = ""
    description: str = ""
    links: dict[str, str] = field(default_factory=dict)
    alerts: tuple[AlertItem, ...] = ()
    event_id: str = ""
    event_type: str = ""
    actor: str = ""

    @property
    def fingerprints(self) -> list[str]:
        """The firing alerts, so a repeat that adds or drops one is told apart from a plain re-notification."""
        return sorted(a.fingerprint or a.name for a in self.alerts if a.status == "firing")


def lower_headers(headers: Mapping[str, str]) -> dict[str, str]:
    return {k.lower(): v for k, v in headers.items()}


def parse_json(body: bytes) -> Any:
    try:
        return json.loads(body.decode("utf-8"))
    except (UnicodeDecodeError, ValueError) as exc:
        raise Refused(400, f"body is not JSON: {exc}") from None
    except RecursionError:  # ``[[[[...`` within the size limit nests deeper than the decoder can follow
        raise Refused(400, "body is not JSON this intake reads: nested too deeply") from None


def _validation(exc: ValidationError) -> str:
    first = exc.errors()[0]
    where = ".".join(str(p) for p in first["loc"]) or "<root>"
    return f"{where}: {first['msg']}" + (f" (and {exc.error_count() - 1} more)" if exc.error_count() > 1 else "")


# ---------------------------------------------------------------- Alertmanager


class _Loose(BaseModel):
    model_config = ConfigDict(extra="ignore")


class AmAlert(_Loose):
    status: Literal["firing", "resolved"]
    labels: dict[str, str]
    annotations: dict[str, str] = Field(default_factory=dict)
    startsAt: str = ""
    endsAt: str = ""
    generatorURL: str = ""
    fingerprint: str = ""


class AmPayload(_Loose):
    version: Literal["4"]
    groupKey: str = Field(min_length=1, max_length=4096)
    status: Literal["firing", "resolved"]
    receiver: str = ""
    groupLabels: dict[str, str] = Field(default_factory=dict)
    commonLabels: dict[str, str] = Field(default_factory=dict)
    commonAnnotations: dict[str, str] = Field(default_factory=dict)
    externalURL: str = ""
    alerts: list[AmAlert] = Field(min_length=1)


def check_alertmanager_auth(headers: Mapping[str, str], secrets: IncidentSecrets) -> None:
    """Bearer token or basic auth, compared in constant time; no configured credential refuses everything."""
    if not secrets.alertmanager_token and not secrets.alertmanager_basic:
        raise Refused(401, "the Alertmanager intake has no credential configured")
    scheme, _, value = (lower_headers(headers).get("authorization") or "").strip().partition(" ")
    value = value.strip()
    if scheme.lower() == "bearer" and secrets.alertmanager_token:
        if hmac.compare_digest(value.encode(), secrets.alertmanager_token.encode()):
            return
    elif scheme.lower() == "basic" and secrets.alertmanager_basic:
        try:
            given = base64.b64decode(value, validate=True)
        except (binascii.Error, ValueError):
            given = b""
        expected = ":".join(secrets.alertmanager_basic).encode()
        if hmac.compare_digest(given, expected):
            return
    raise Refused(401, "missing or wrong credentials")


def parse_alertmanager(body: bytes) -> Notification:
    try:
        payload = AmPayload.model_validate(parse_json(body))
    except ValidationError as exc:
        raise Refused(400, f"not an Alertmanager v4 payload: {_validation(exc)}") from None
    common = payload.commonLabels
    first = payload.alerts[0]
    annotations = {**first.annotations, **payload.commonAnnotations}
    items = tuple(
        AlertItem(
            name=a.labels.get("alertname", ""), status=a.status, labels=a.labels,
            summary=a.annotations.get("summary", ""), description=a.annotations.get("description", ""),
            starts_at=a.startsAt, source_url=a.generatorURL, fingerprint=a.fingerprint,
        )
        for a in payload.alerts
    )  # fmt: skip
    links = {}
    runbook = annotations.get("runbook_url") or annotations.get("runbook")
    if runbook:
        links["Runbook"] = runbook
    if first.generatorURL:
        links["Source"] = first.generatorURL
    if payload.externalURL and payload.groupLabels:
        matchers = ",".join(f'{k}="{v}"' for k, v in sorted(payload.groupLabels.items()))
        links["Silence"] = f"{payload.externalURL.rstrip('/')}/#/silences/new?filter={quote('{' + matchers + '}')}"
    return Notification(
        source="alertmanager",
        key=payload.groupKey,
        status=payload.status,
        title=common.get("alertname") or first.labels.get("alertname") or payload.groupKey,
        severity=common.get("severity") or first.labels.get("severity", ""),
        labels=dict(common) or dict(first.labels),
        summary=annotations.get("summary", ""),
        description=annotations.get("description", ""),
        links=links,
        alerts=items,
    )


# ---------------------------------------------------------------- PagerDuty


class _Ref(_Loose):
    id: str = ""
    summary: str = ""
    html_url: str = ""


class PdIncident(_Loose):
    id: str = Field(min_length=1, max_length=256)
    title: str = ""
    status: str = ""
    html_url: str = ""
    number: int | None = None
    urgency: str = ""
    incident_key: str | None = None
    service: _Ref | None = None
    escalation_policy: _Ref | None = None
    priority: _Ref | None = None


class PdEvent(_Loose):
    id: str = Field(min_length=1, max_length=256)
    event_type: str = Field(min_length=1)
    resource_type: str = ""
    occurred_at: str = ""
    agent: _Ref | None = None
    data: dict[str, Any] = Field(default_factory=dict)


class PdPayload(_Loose):
    event: PdEvent


_PD_STATUS: dict[str, Status] = {
    "incident.triggered": "firing",
    "incident.reopened": "firing",
    "incident.acknowledged": "acknowledged",
    "incident.resolved": "resolved",
}


def pagerduty_signature(secret: str, body: bytes) -> str:
    return "v1=" + hmac.new(secret.encode(), body, hashlib.sha256).hexdigest()


def check_pagerduty_signature(body: bytes, headers: Mapping[str, str], secrets: IncidentSecrets) -> None:
    """Any ``v1=`` signature of the header matching any configured secret, compared in constant time."""
    if not secrets.pagerduty_secrets:
        raise Refused(401, "the PagerDuty intake has no webhook secret configured")
    given = [s.strip() for s in (lower_headers(headers).get("x-pagerduty-signature") or "").split(",")]
    given = [s for s in given if s.startswith("v1=")]
    if not given:
        raise Refused(401, "missing X-PagerDuty-Signature")
    matched = False
    for secret in secrets.pagerduty_secrets:
        expected = pagerduty_signature(secret, body).encode()
        for signature in given:  # no early exit: the time taken does not depend on which one matched
            matched |= hmac.compare_digest(expected, signature.encode())
    if not matched:
        raise Refused(401, "bad X-PagerDuty-Signature")


def parse_pagerduty(body: bytes) -> Notification | None:
    """The notification, or None for an event that concerns no incident (``pagey.ping``, other resources)."""
    try:
        event = PdPayload.model_validate(parse_json(body)).event
        if event.resource_type != "incident" or not event.event_type.startswith("incident."):
            return None
        incident = PdIncident.model_validate(event.data)
    except ValidationError as exc:
        raise Refused(400, f"not a PagerDuty v3 webhook: {_validation(exc)}") from None
    labels = {
        "service": incident.service.summary if incident.service else "",
        "service_id": incident.service.id if incident.service else "",
        "urgency": incident.urgency,
        "priority": incident.priority.summary if incident.priority else "",
        "escalation_policy": incident.escalation_policy.summary if incident.escalation_policy else "",
    }
    labels = {k: v for k, v in labels.items() if v}
    links = {"PagerDuty incident": incident.html_url} if incident.html_url else {}
    status: Status = _PD_STATUS.get(event.event_type, "update")
    item = AlertItem(name=incident.title, status="resolved" if status == "resolved" else "firing", labels=labels,
                     fingerprint=incident.id)
    return Notification(
        source="pagerduty",
        key=incident.id,
        status=status,
        title=incident.title or incident.id,
        severity=incident.urgency or (incident.priority.summary if incident.priority else ""),
        labels=labels,
        summary=f"#{incident.number} {incident.title}" if incident.number else incident.title,
        links=links,
        alerts=(item,),
        event_id=event.id,
        event_type=event.event_type,
        actor=event.agent.summary if event.agent else "",
    )
