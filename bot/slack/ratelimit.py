"""Web API pacing per method: how many requests of one method may be in flight, and a shared pause on 429.

Slack rate-limits each Web API method on its own, in tiers (Tier 1 about 1 request a minute ... Tier 4 about
100; ``chat.postMessage`` about one a second per channel, with bursts), and answers a request over the limit
with HTTP 429 and ``Retry-After``. A poster that posts in parallel must not turn one 429 into a stampede:

* every method gets a number of concurrent requests by its tier (``TIER_CONCURRENCY``), so a burst of
  completions never sends more than a few requests of a low-tier method at once;
* a 429 pauses the whole method for ``Retry-After`` seconds for every task of this process, not only the
  request that got it (slack_sdk's own handler sleeps only that request); the request itself is retried after
  the pause, up to the handler's retry count.

The limits Slack publishes are minimums ("50+ per minute"); Slack enforces the real ones and says so with 429,
so the pause is what keeps us within them, and the tier concurrency keeps bursts small.
"""

from __future__ import annotations

import asyncio
import contextlib
import random
import time
from collections.abc import AsyncIterator, Callable
from typing import Any

from slack_sdk.http_retry.builtin_async_handlers import AsyncRateLimitErrorRetryHandler

#: Slack's tier of each method the bot calls (https://api.slack.com/methods); 0 = "special" limits.
METHOD_TIERS: dict[str, int] = {
    "chat.postMessage": 0,
    "chat.update": 3,
    "chat.delete": 3,
    "chat.postEphemeral": 4,
    "conversations.replies": 3,
    "conversations.info": 3,
    "reactions.add": 3,
    "reactions.remove": 2,
    "files.getUploadURLExternal": 4,
    "files.completeUploadExternal": 4,
    "usergroups.users.list": 2,
    "users.info": 4,
    "auth.test": 0,
    "apps.connections.open": 1,
    "assistant.threads.setStatus": 3,
}
DEFAULT_TIER = 3
#: Requests of one method in flight at once, by tier (special limits are per channel: allow more).
TIER_CONCURRENCY: dict[int, int] = {0: 8, 1: 1, 2: 2, 3: 4, 4: 8}


def method_of(url: str) -> str:
    """The Web API method of a request URL (``.../api/chat.postMessage?x=1`` -> ``chat.postMessage``)."""
    return url.split("?", 1)[0].rstrip("/").rsplit("/", 1)[-1]


def retry_after_seconds(headers: dict[str, Any]) -> float:
    """Slack's ``Retry-After`` (seconds); 1 s when it is missing or unreadable."""
    for name, value in headers.items():
        if name.lower() == "retry-after":
            raw = value[0] if isinstance(value, list | tuple) else value
            try:
                return max(0.0, float(raw))
            except (TypeError, ValueError):
                break
    return 1.0


class MethodPacer:
    """Per-method concurrency by tier and a per-method pause shared by every request of this process."""

    def __init__(self, concurrency: dict[int, int] | None = None,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self._concurrency = {**TIER_CONCURRENCY, **(concurrency or {})}
        self._clock = clock
        self._slots: dict[str, asyncio.Semaphore] = {}
        self._resume_at: dict[str, float] = {}

    def limit(self, method: str) -> int:
        return self._concurrency[METHOD_TIERS.get(method, DEFAULT_TIER)]

    def pause(self, method: str, seconds: float) -> None:
        """No new request of ``method`` starts for ``seconds`` (a longer pause already set is kept)."""
        until = self._clock() + seconds
        self._resume_at[method] = max(self._resume_at.get(method, 0.0), until)

    def paused_for(self, method: str) -> float:
        return max(0.0, self._resume_at.get(method, 0.0) - self._clock())

    async def wait_resumed(self, method: str) -> None:
        while (delay := self.paused_for(method)) > 0:
            await asyncio.sleep(delay)

    @contextlib.asynccontextmanager
    async def slot(self, method: str) -> AsyncIterator[None]:
        """Hold one of ``method``'s request slots, once any pause of the method is over."""
        slots = self._slots.get(method)
        if slots is None:
            slots = self._slots[method] = asyncio.Semaphore(self.limit(method))
        async with slots:
            await self.wait_resumed(method)
            yield


class SharedRateLimitRetryHandler(AsyncRateLimitErrorRetryHandler):
    """slack_sdk's 429 retry, but the ``Retry-After`` pause applies to the whole method (``MethodPacer``)."""

    def __init__(self, pacer: MethodPacer, max_retry_count: int = 3) -> None:
        super().__init__(max_retry_count=max_retry_count)
        self.pacer = pacer

    async def prepare_for_next_attempt_async(self, *, state: Any, request: Any, response: Any = None,
                                             error: Exception | None = None) -> None:
        if response is None:
            raise error  # type: ignore[misc]
        state.next_attempt_requested = True
        method = method_of(request.url)
        # a little jitter so replicas paused by the same 429 do not all come back in the same millisecond
        self.pacer.pause(method, retry_after_seconds(response.headers) + random.uniform(0, 0.1))
        await self.pacer.wait_resumed(method)
        state.increment_current_attempt()
