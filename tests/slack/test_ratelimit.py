"""Web API pacing against the loopback fake Slack: a 429's Retry-After pauses the whole method for every
request of the process, and a method never has more requests in flight than its tier allows."""

from __future__ import annotations

import asyncio
import threading
import time
from typing import Any

from bot.slack.client import make_client
from bot.slack.ratelimit import MethodPacer, method_of, retry_after_seconds
from tests.support.fake_slack import FakeSlack, SlackCall

TOKEN = "xoxb-test"


async def test_retry_after_pauses_every_request_of_the_method() -> None:
    with FakeSlack(expected_token=TOKEN) as slack:
        arrivals: list[tuple[float, str]] = []
        default = slack._api_chat_postMessage

        def record(call: SlackCall) -> dict[str, Any]:
            arrivals.append((time.monotonic(), str(call.params.get("text"))))
            return default(call.params)

        slack.on("chat.postMessage", record)
        slack.fail_next("chat.postMessage", status=429, headers={"Retry-After": "1"})
        client = make_client(TOKEN, slack.api_url)
        first = asyncio.create_task(client.chat_postMessage(channel="C1", text="first"))
        await asyncio.sleep(0.2)  # the first got its 429 by now; the method is paused for a second
        limited_at = time.monotonic() - 0.2
        second = await client.chat_postMessage(channel="C1", text="second")
        assert second["ok"] and (await first)["ok"]
        assert [c.status for c in slack.calls_to("chat.postMessage")] == [429, 200, 200]
        assert sorted(text for _, text in arrivals) == ["first", "second"]
        assert min(at for at, _ in arrivals) - limited_at >= 0.9  # nothing was sent during the pause
        other = time.monotonic()
        await client.chat_update(channel="C1", ts="1.1", text="x")  # another method was never paused
        assert time.monotonic() - other < 0.5


async def test_requests_in_flight_are_capped_by_the_method_tier() -> None:
    with FakeSlack(expected_token=TOKEN) as slack:
        lock = threading.Lock()
        now = peak = 0

        def slow(call: SlackCall) -> dict[str, Any]:
            nonlocal now, peak
            with lock:
                now += 1
                peak = max(peak, now)
            time.sleep(0.1)
            with lock:
                now -= 1
            return {"ok": True}

        slack.on("reactions.remove", slow)  # Tier 2
        client = make_client(TOKEN, slack.api_url)
        pacer = MethodPacer()
        assert pacer.limit("reactions.remove") == 2
        await asyncio.gather(*(client.reactions_remove(channel="C1", timestamp="1.1", name="x") for _ in range(6)))
        assert peak == 2


def test_method_and_retry_after_parsing() -> None:
    assert method_of("http://127.0.0.1:1/api/chat.postMessage?x=1") == "chat.postMessage"
    assert retry_after_seconds({"retry-after": ["3"]}) == 3.0
    assert retry_after_seconds({"Retry-After": "0.5"}) == 0.5
    assert retry_after_seconds({"Retry-After": "soon"}) == 1.0
    assert retry_after_seconds({}) == 1.0
