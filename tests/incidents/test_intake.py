"""Deliveries over real HTTP to the running intake: refused ones leave no trace; accepted ones open one thread
per incident, update it on repeats and close it on resolution (PagerDuty here; Alertmanager with the agent in
``test_incident_flow.py``)."""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import AsyncIterator

from bot.agent import bus
from bot.incidents.service import OnCall
from bot.incidents.settings import IncidentSecrets, IncidentSettings
from bot.incidents.store import IncidentStore
from tests.incidents.conftest import CHECKOUT, WEB, Intake, replies, top_level
from tests.incidents.payloads import (
    PD_OLD_SECRET,
    PD_SECRET,
    am_alert,
    am_payload,
    basic,
    bearer,
    dumps,
    pd_headers,
    pd_payload,
)
from tests.slack.conftest import Harness
from tests.support.waiting import wait_for

AM, PD = "/alerts/alertmanager", "/alerts/pagerduty"


async def _no_trace(intake: Intake, harness: Harness) -> None:
    assert await intake.outbox() == []
    assert await intake.redis.xlen(bus.INBOX) == 0
    assert [k async for k in intake.redis.scan_iter(match="fc:{inc}:*")] == []
    assert harness.slack.calls_to("chat.postMessage") == []


async def test_unsigned_forged_and_malformed_deliveries_change_nothing(intake: Intake, harness: Harness) -> None:
    good = dumps(am_payload())
    for headers in ({"Content-Type": "application/json"}, bearer("forged"), basic("am", "guess")):
        status, body = await intake.post(AM, good, headers)
        assert status == 401 and body["status"] == "refused"
    pd = dumps(pd_payload())
    for headers in ({}, pd_headers(pd, "forged-secret"), pd_headers(pd + b"\n", PD_SECRET)):
        assert (await intake.post(PD, pd, headers))[0] == 401
    assert (await intake.post(PD, pd + b" ", pd_headers(pd, PD_SECRET)))[0] == 401  # body changed after signing
    for bad in (b"{", dumps({"version": "4"}), dumps({**am_payload(), "alerts": []})):
        status, body = await intake.post(AM, bad, bearer())
        assert status == 400 and "error" in body
    bad_pd = dumps({"event": {"id": "e", "event_type": "incident.triggered", "resource_type": "incident",
                              "data": {"title": "no id"}}})
    assert (await intake.post(PD, bad_pd, pd_headers(bad_pd, PD_SECRET)))[0] == 400
    huge = b"{" + b" " * 2_000_000 + b"}"
    assert (await intake.post(AM, huge, bearer()))[0] == 413
    await _no_trace(intake, harness)


async def test_unrouted_and_flooding_deliveries(intake: Intake, harness: Harness) -> None:
    other = am_payload(alerts=[am_alert(service="batch")])
    other["commonLabels"] = {"alertname": "X", "service": "batch"}
    status, body = await intake.post(AM, dumps(other), bearer())
    assert status == 422 and body["status"] == "unrouted"
    await _no_trace(intake, harness)
    # the web route takes 8 deliveries a minute: the flood beyond gets 429 and changes nothing (the window is a
    # calendar minute: start well inside one)
    while time.time() % 60 > 40:
        await asyncio.sleep(0.5)
    statuses = [(await intake.post(AM, dumps(am_payload(group_key=f"g{i}")), bearer()))[0] for i in range(11)]
    assert statuses == [201] * 8 + [429] * 3
    events = [e for e in await intake.outbox() if e.kind == "thread_open"]
    assert len(events) == 8
    await wait_for(lambda: len(top_level(harness, WEB)) == 8, timeout=10)


async def test_pagerduty_incident_lifecycle_in_one_thread(intake: Intake, harness: Harness) -> None:
    body = dumps(pd_payload())
    status, answer = await intake.post(PD, body, pd_headers(body, PD_OLD_SECRET, PD_SECRET))  # during rotation
    assert status == 201 and answer["status"] == "new"
    (card,) = await wait_for(lambda: top_level(harness, CHECKOUT), timeout=10)
    shown = json.dumps(card["blocks"])
    assert "[OPEN] Checkout API latency" in shown and "checkout-api" in shown
    assert "<https://acme.pagerduty.com/incidents/PGR0VU2|PagerDuty incident>" in shown
    ts = card["ts"]
    # the brief went to the agent as the thread's first message, framed as data
    async def briefs() -> list[bus.BusEvent]:
        inbox = [bus.BusEvent.from_fields(i, f) for i, f in await intake.redis.xrange(bus.INBOX)]
        return [e for e in inbox if e.kind == "user_message"]

    (brief,) = await wait_for(briefs)
    assert brief.conversation == f"slack:{CHECKOUT}:{ts}" and brief.data["user"] == "alert:pagerduty"
    assert brief.data["text"].startswith("Checkout is paging") and "<alert_data>" in brief.data["text"]

    status, answer = await intake.post(PD, body, pd_headers(body, PD_SECRET))  # PagerDuty retried the same event
    assert (status, answer["status"]) == (200, "ignored")
    ack = dumps(pd_payload("incident.acknowledged", event_id="01DEN2"))
    assert (await intake.post(PD, ack, pd_headers(ack, PD_SECRET)))[0] == 200
    await wait_for(lambda: any("Acknowledged" in r for r in replies(harness, CHECKOUT, ts)), timeout=10)
    assert "Jane Oncall" in next(r for r in replies(harness, CHECKOUT, ts) if "Acknowledged" in r)
    resolved = dumps(pd_payload("incident.resolved", event_id="01DEN3"))
    status, answer = await intake.post(PD, resolved, pd_headers(resolved, PD_SECRET))
    assert (status, answer["status"]) == (200, "resolved")
    await wait_for(lambda: any("Resolved" in r for r in replies(harness, CHECKOUT, ts)), timeout=10)
    await wait_for(lambda: "[RESOLVED]" in json.dumps(harness.slack.message(CHECKOUT, ts)["blocks"]), timeout=10)
    assert len(top_level(harness, CHECKOUT)) == 1  # one thread for the whole incident
    store = IncidentStore(intake.redis)
    record = await store.get(answer["incident"])
    assert record["state"] == "resolved" and record["resolved_at"] and record["thread_ts"] == ts
    assert [e["kind"] for e in await store.events(answer["incident"])] == ["firing", "acknowledged", "resolved"]
    # after the resolution a late repeat of it changes nothing; a new trigger opens a new incident
    again = dumps(pd_payload("incident.resolved", event_id="01DEN4"))
    assert (await intake.post(PD, again, pd_headers(again, PD_SECRET)))[1]["status"] == "ignored"
    reopened = dumps(pd_payload(event_id="01DEN5"))
    assert (await intake.post(PD, reopened, pd_headers(reopened, PD_SECRET)))[1]["status"] == "new"
    await wait_for(lambda: len(top_level(harness, CHECKOUT)) == 2, timeout=10)


async def test_pings_and_other_events_are_answered_without_effect(intake: Intake, harness: Harness) -> None:
    ping = dumps({"event": {"id": "p1", "event_type": "pagey.ping", "resource_type": "pagey", "data": {}}})
    status, body = await intake.post(PD, ping, pd_headers(ping, PD_SECRET))
    assert (status, body["status"]) == (200, "ignored")
    resolved_first = dumps(am_payload("resolved"))
    assert (await intake.post(AM, resolved_first, bearer()))[1]["status"] == "ignored"
    assert harness.slack.calls_to("chat.postMessage") == []


async def test_two_replicas_receiving_one_incident_at_once_open_one_thread(
    intake: Intake, harness: Harness, incident_settings: IncidentSettings,
) -> None:
    second = OnCall(harness.redis, harness.store, incident_settings, IncidentSecrets(pagerduty_secrets=(PD_SECRET,)))
    port = await second.listen(host="127.0.0.1", port=0)
    try:
        urls = [intake.url, f"http://127.0.0.1:{port}"]

        async def deliver(i: int) -> int:
            body = dumps(pd_payload(event_id=f"burst-{i}"))
            async with intake.session.post(urls[i % 2] + PD, data=body, headers=pd_headers(body, PD_SECRET)) as r:
                return r.status

        statuses = sorted(await asyncio.gather(*(deliver(i) for i in range(6))))
        assert statuses == [200] * 5 + [201]
        await wait_for(lambda: top_level(harness, CHECKOUT), timeout=10)
        await asyncio.sleep(0.5)
        assert len(top_level(harness, CHECKOUT)) == 1
        thread_opens = [e for e in await intake.outbox() if e.kind == "thread_open"]
        assert len(thread_opens) == 1
    finally:
        await second._runner.cleanup()  # type: ignore[union-attr]


async def test_a_chunked_delivery_is_read_whole(intake: Intake, harness: Harness) -> None:
    """Without Content-Length the body arrives in pieces; one read returns only what has arrived so far, so
    the intake must read until the end (or the limit), not take the first piece as the whole body."""
    body = dumps(am_payload(group_key="chunked"))

    async def pieces() -> AsyncIterator[bytes]:
        for start in range(0, len(body), 64):
            yield body[start:start + 64]
            await asyncio.sleep(0.01)

    async with intake.session.post(intake.url + AM, data=pieces(), headers=bearer()) as resp:
        assert resp.status == 201, await resp.text()

    async def endless() -> AsyncIterator[bytes]:
        yield b"{" + b" " * 600_000
        yield b" " * 600_000 + b"}"

    async with intake.session.post(intake.url + AM, data=endless(), headers=bearer()) as resp:
        assert resp.status == 413


async def test_a_retry_of_a_delivery_that_failed_before_its_thread_was_queued_opens_the_thread(
    intake: Intake, harness: Harness,
) -> None:
    """The first attempt ran the store's script (marking the event id seen) and then failed before queueing the
    thread (Redis or the pod went away: the source got no 2xx). PagerDuty retries with the same event id; the
    retry must not be dropped as already handled while no thread exists."""
    body = dumps(pd_payload(event_id="crashed-once"))
    store = IncidentStore(intake.redis)
    applied = await store.apply(source="pagerduty", key="PGR0VU2", status="firing", event={"kind": "firing"},
                                fields={"source": "pagerduty", "key": "PGR0VU2", "route": "checkout",
                                        "channel": CHECKOUT, "title": "Checkout API latency"},
                                fingerprints=["PGR0VU2"], event_id="crashed-once")  # fmt: skip
    assert applied.outcome == "new"
    status, answer = await intake.post(PD, body, pd_headers(body, PD_SECRET))
    assert (status, answer["status"]) == (200, "ignored")
    (card,) = await wait_for(lambda: top_level(harness, CHECKOUT), timeout=10)
    assert "Checkout API latency" in json.dumps(card["blocks"])

    async def thread_recorded() -> bool:  # the poster records the thread's ts just after posting its card
        return (await store.get(applied.incident_id)).get("thread_ts") == card["ts"]
    await wait_for(thread_recorded, timeout=10)
    again = await intake.post(PD, body, pd_headers(body, PD_SECRET))  # a further retry queues nothing more
    assert again[1]["status"] == "ignored"
    await asyncio.sleep(0.3)
    assert len([e for e in await intake.outbox() if e.kind == "thread_open"]) == 1
