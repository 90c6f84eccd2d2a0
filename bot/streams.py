"""Small helpers for Redis streams shared by every role: decoding replies and creating consumer groups.

It imports nothing of the bot, so every package may use it without breaking the package order.
"""

from __future__ import annotations

from typing import Any

from redis.asyncio import Redis
from redis.exceptions import ResponseError


def text(value: Any) -> str:
    """A Redis reply value as str (clients here run with ``decode_responses=False``)."""
    return value.decode() if isinstance(value, bytes) else str(value)


async def ensure_group(redis: Redis, stream: str, group: str, start_id: str = "0") -> None:
    """Create the consumer group (and the stream) if missing; idempotent."""
    try:
        await redis.xgroup_create(stream, group, id=start_id, mkstream=True)
    except ResponseError as exc:
        if "BUSYGROUP" not in str(exc):  # the group exists already, which is the normal case
            raise
