"""How a conversation's transcript is kept in Redis: zlib-compressed JSON once it is long, plain JSON before,
and a transcript stored as plain JSON by a previous version still loads."""

from __future__ import annotations

import json
import zlib

import pytest
from redis.asyncio import Redis

from bot.agent import state
from bot.agent.state import COMPRESS_ABOVE, ConversationStore, ConvState

CONV = "slack:C0STORE:1700000000.000100"


def transcript(turns: int) -> list[dict[str, object]]:
    messages: list[dict[str, object]] = []
    for n in range(turns):
        messages.append({"role": "user", "content": [{"type": "text", "text": f"is web-{n} healthy? ünïcode"}]})
        messages.append({"role": "assistant", "content": [
            {"type": "tool_use", "id": f"toolu_01{n:08d}AbCdEfGhIjKl", "name": "service_status",
             "input": {"service": f"web-{n}", "all": True}}]})
    return messages


async def test_a_long_transcript_is_stored_compressed_and_loads_unchanged(redis: Redis) -> None:
    store = ConversationStore(redis, retention_seconds=60)
    token = await store.acquire(CONV, 5)
    assert token is not None
    long = transcript(20)
    assert len(json.dumps(long)) > COMPRESS_ABOVE
    assert await store.save(CONV, token, long, ConvState())
    stored = await redis.get(store.key(CONV, "transcript"))
    assert stored is not None and stored.startswith(b"z:") and len(stored) < len(json.dumps(long)) / 2
    loaded, _ = await store.load(CONV)
    assert loaded == long

    short = transcript(1)
    assert await store.save(CONV, token, short, ConvState())
    assert json.loads(await redis.get(store.key(CONV, "transcript"))) == short  # short: plain JSON
    assert (await store.load(CONV))[0] == short


async def test_a_transcript_stored_as_plain_json_by_a_previous_version_loads(redis: Redis) -> None:
    store = ConversationStore(redis, retention_seconds=60)
    earlier = transcript(20)
    await redis.set(store.key(CONV + "1", "transcript"), json.dumps(earlier))
    assert (await store.load(CONV + "1"))[0] == earlier


async def test_a_compressed_transcript_that_inflates_past_the_bound_is_refused(redis: Redis,
                                                                               monkeypatch: pytest.MonkeyPatch) -> None:
    """A Redis writer's zlib bomb (here 8 MiB of JSON from 8 KiB) is refused at the bound, not inflated whole."""
    monkeypatch.setattr(state, "MAX_TRANSCRIPT_BYTES", 1024 * 1024)
    store = ConversationStore(redis, retention_seconds=60)
    bomb = b"z:" + zlib.compress(b"[" + b" " * (8 * 1024 * 1024) + b"]", 9)
    assert len(bomb) < 16 * 1024
    await redis.set(store.key(CONV, "transcript"), bomb)
    with pytest.raises(ValueError, match="inflates to more than 1048576 bytes"):
        await store.load(CONV)
    exactly = [{"role": "user", "content": "x" * (1024 * 1024 - 64)}]  # under the bound: loads
    await redis.set(store.key(CONV, "transcript"), b"z:" + zlib.compress(json.dumps(exactly).encode()))
    assert (await store.load(CONV))[0] == exactly
