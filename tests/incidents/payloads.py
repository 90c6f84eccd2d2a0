"""Realistic deliveries of both sources (shapes from Alertmanager's webhook v4 and PagerDuty's v3 docs)."""

from __future__ import annotations

import base64
import json
from typing import Any

from bot.incidents.alerts import pagerduty_signature

AM_TOKEN = "am-token-0123456789"
PD_SECRET = "pd-secret-new-abcdef"
PD_OLD_SECRET = "pd-secret-old-123456"


def am_alert(name: str = "HighErrorRate", status: str = "firing", fingerprint: str = "f1", **labels: str
             ) -> dict[str, Any]:  # fmt: skip
    return {
        "status": status,
        "labels": {"alertname": name, "service": "web", "severity": "critical", "instance": "db-3:9100", **labels},
        "annotations": {"summary": "web 502 rate above 5%", "description": "db-3 answers slowly",
                        "runbook_url": "https://runbooks.example.com/web-502"},
        "startsAt": "2026-12-01T08:00:00Z", "endsAt": "0001-01-01T00:00:00Z",
        "generatorURL": "https://prometheus.example.com/graph?g0.expr=rate", "fingerprint": fingerprint,
    }  # fmt: skip


def am_payload(status: str = "firing", alerts: list[dict[str, Any]] | None = None,
               group_key: str = '{}:{alertname="HighErrorRate"}') -> dict[str, Any]:  # fmt: skip
    alerts = alerts or [am_alert(status=status)]
    return {
        "version": "4", "groupKey": group_key, "truncatedAlerts": 0, "status": status, "receiver": "fisk",
        "groupLabels": {"alertname": "HighErrorRate"},
        "commonLabels": {"alertname": "HighErrorRate", "service": "web", "severity": "critical"},
        "commonAnnotations": {"summary": "web 502 rate above 5%"},
        "externalURL": "https://alertmanager.example.com", "alerts": alerts,
    }  # fmt: skip


def bearer(token: str = AM_TOKEN) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}", "Content-Type": "application/json"}


def basic(user: str, password: str) -> dict[str, str]:
    return {"Authorization": "Basic " + base64.b64encode(f"{user}:{password}".encode()).decode()}


def pd_payload(event_type: str = "incident.triggered", incident_id: str = "PGR0VU2", event_id: str = "01DEN1",
               agent: str = "Jane Oncall") -> dict[str, Any]:  # fmt: skip
    status = event_type.rpartition(".")[2]
    return {"event": {
        "id": event_id, "event_type": event_type, "resource_type": "incident",
        "occurred_at": "2026-12-01T08:01:00.000Z",
        "agent": {"html_url": "https://acme.pagerduty.com/users/PLH1HKV", "id": "PLH1HKV", "summary": agent,
                  "type": "user_reference"},
        "client": None,
        "data": {
            "id": incident_id, "type": "incident", "html_url": f"https://acme.pagerduty.com/incidents/{incident_id}",
            "number": 2, "status": status, "incident_key": "d3640fbd41094207a1c11e58e46b1662",
            "created_at": "2026-12-01T08:00:55Z", "title": "Checkout API latency",
            "service": {"id": "PF9KMXH", "summary": "checkout-api", "type": "service_reference",
                        "html_url": "https://acme.pagerduty.com/services/PF9KMXH"},
            "assignees": [], "escalation_policy": {"id": "PHE5SWD", "summary": "Checkout on-call"},
            "teams": [], "priority": None, "urgency": "high", "conference_bridge": None, "resolve_reason": None,
        },
    }}  # fmt: skip


def pd_headers(body: bytes, *secrets: str) -> dict[str, str]:
    signatures = ",".join(pagerduty_signature(s, body) for s in secrets)
    return {"X-PagerDuty-Signature": signatures, "Content-Type": "application/json"} if secrets else {}


def dumps(payload: Any) -> bytes:
    return json.dumps(payload).encode()
