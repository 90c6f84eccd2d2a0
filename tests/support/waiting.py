"""Poll until something real has happened (a row in Redis, a call on the fake Slack), with a deadline."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from typing import Any


async def wait_for(predicate: Callable[[], Any], timeout: float = 10.0) -> Any:
    """Poll ``predicate`` (sync or async) until it returns something truthy, and return that."""
    deadline = time.monotonic() + timeout
    while True:
        value = predicate()
        if asyncio.iscoroutine(value):
            value = await value
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError("condition not met in time")
        await asyncio.sleep(0.02)
