"""Small helpers for Redis streams shared by every role: decoding replies and creating consumer groups.

It imports nothing of the bot but the leaf ``bot/cancelling.py``, so every package may use it without breaking the
package order.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Iterable, Sequence
from typing import Any

from redis.asyncio import Redis
from redis.exceptions import ResponseError

from bot.cancelling import cancel_and_wait


def text(value: Any) -> str:
    """A Redis reply value as str (clients here run with ``decode_responses=False``)."""
    return value.decode() if isinstance(value, bytes) else str(value)


async def stop_consumer(loops: Iterable[asyncio.Task[Any]], handlers: Iterable[asyncio.Task[Any]] = (), *,
                        grace: float = 10.0) -> None:
    """Stop a stream consumer: its read and reclaim loops at once, then its entry handlers once they had ``grace``
    seconds to finish their step. Whatever is cut short was not acknowledged, so it stays pending in its stream
    and is read again by a restart or taken over by a peer. Each task is cancelled until it has ended, not once
    (``bot/cancelling.py``: Python 3.11 can lose a cancellation and the loop would read on for ever). The caller
    being cancelled meanwhile (during the grace) cuts the grace short, not the stopping."""
    running = list(handlers)
    try:
        await cancel_and_wait(loops)  # not a single cancel(): Python 3.11 can lose one (see bot/cancelling.py)
        if running and grace > 0:
            await asyncio.wait(running, timeout=grace)
    finally:  # the owner cancelled during the grace (a shutdown cut short): its handlers must not run on alone
        await cancel_and_wait(running)


def next_read_id(last_id: str, entries: list[Any]) -> str:
    """Where a consumer's next XREADGROUP starts. A loop begins at "0" (its own pending entries, left by a restart)
    and reads past each batch of them ONCE, then switches to ">" (new entries). Re-reading "0" instead returns the
    same pending entries again at once, in a loop without BLOCK: it spins while they are in flight and burns the
    retries of one that fails in a moment (retrying it is the reclaim loop's job, after its idle delay)."""
    if last_id == ">":
        return last_id
    return text(entries[-1][0]) if entries else ">"


async def unseen_pending(
    redis: Redis, stream: str, group: str, consumer: str, seen: Callable[[str], bool], limit: int = 1024
) -> list[tuple[Any, Any]]:
    """Entries Redis delivered to ``consumer`` that it never handled (``seen`` names those it did): a read whose
    reply was lost (the connection cut after Redis delivered; redis-py retries the read itself and gets only newer
    entries). Found with XPENDING and read with XRANGE, delivering nothing again: XREADGROUP from ``0`` resets every
    pending entry's idle time, so re-reading every few seconds kept an entry the consumer handled and left pending
    (to be retried once idle) from ever being idle long enough for XAUTOCLAIM."""
    pending: Any = await redis.xpending_range(stream, group, min="-", max="+", count=limit, consumername=consumer)
    entries: list[tuple[Any, Any]] = []
    for item in pending or []:
        if seen(text(item["message_id"])):
            continue
        found: Any = await redis.xrange(stream, item["message_id"], item["message_id"], count=1)
        entries += found or []  # (none: deleted since, nothing to handle)
    return entries


async def ensure_group(redis: Redis, stream: str, group: str, start_id: str = "0") -> None:
    """Create the consumer group (and the stream) if missing; idempotent."""
    try:
        await redis.xgroup_create(stream, group, id=start_id, mkstream=True)
    except ResponseError as exc:
        if "BUSYGROUP" not in str(exc):  # the group exists already, which is the normal case
            raise


def _id_key(entry_id: str) -> tuple[int, int]:
    ms, _, seq = entry_id.partition("-")
    return int(ms), int(seq or 0)


def _after(entry_id: str) -> str:
    """The smallest id greater than ``entry_id`` (the first entry a group has not been given yet)."""
    ms, seq = _id_key(entry_id)
    return f"{ms}-{seq + 1}"


async def oldest_unacknowledged(redis: Redis, stream: str) -> str | None:
    """The id of the oldest entry some consumer group still needs (pending, or not delivered to it yet);
    None when every group has acknowledged everything, or no group reads the stream."""
    floor: str | None = None
    try:
        groups = await redis.xinfo_groups(stream)
    except ResponseError as exc:
        if "no such key" not in str(exc).lower():
            raise
        return None  # the stream does not exist (yet): nothing is owed
    for group in groups:
        candidate = _after(text(group["last-delivered-id"]))
        if int(group["pending"]):
            summary: Any = await redis.xpending(stream, text(group["name"]))
            candidate = min(candidate, text(summary["min"]), key=_id_key)
        if floor is None or _id_key(candidate) < _id_key(floor):
            floor = candidate
    if floor is None:
        return None
    first: Any = await redis.xrange(stream, floor, "+", count=1)
    return text(first[0][0]) if first else None


async def trim_acknowledged(redis: Redis, stream: str, keep: int, *, acknowledged_only: bool = False,
                            readers: Sequence[str] = ()) -> tuple[int, str | None]:
    """Trim ``stream`` to about ``keep`` entries, but never an entry a consumer group has not acknowledged.

    With ``acknowledged_only``, every entry below the oldest unacknowledged one goes (what all groups handled is
    not kept at all), and ``keep`` is only the cap of a stream no group reads yet (its reader has not started:
    nothing it will read may go). Returns (entries removed, id of the oldest unacknowledged entry or None). A
    long outage of a consumer therefore grows the stream instead of losing what it has not handled; the age of
    that oldest entry is the lag to alert on. ``readers``: the groups that must exist before ``acknowledged_only``
    trims (until the role that reads with one has created it, what the other groups acknowledged is still owed
    to it: a group starts at the stream's beginning).
    """
    if acknowledged_only and await _read_by_all(redis, stream, readers):
        # the newest entry is read BEFORE the groups' floor: one added in between is newer, so it stays
        newest_before: Any = await redis.xrevrange(stream, "+", "-", count=1)
        oldest = await oldest_unacknowledged(redis, stream)
        if oldest is None and not newest_before:
            return 0, None
        oldest_kept = oldest if oldest is not None else _after(text(newest_before[0][0]))
        return int(await redis.xtrim(stream, minid=oldest_kept, approximate=False)), oldest
    oldest = await oldest_unacknowledged(redis, stream)
    if await redis.xlen(stream) <= keep:
        return 0, oldest
    newest: Any = await redis.xrevrange(stream, "+", "-", count=keep)
    target = text(newest[-1][0])  # the oldest entry kept by the size cap
    if oldest is not None and _id_key(oldest) < _id_key(target):
        target = oldest
    removed = int(await redis.xtrim(stream, minid=target, approximate=False))
    return removed, oldest


async def _read_by_all(redis: Redis, stream: str, readers: Sequence[str]) -> bool:
    """Does some group read ``stream``, every one of ``readers`` among them?"""
    try:
        groups = {text(g["name"]) for g in await redis.xinfo_groups(stream)}
    except ResponseError as exc:
        if "no such key" not in str(exc).lower():
            raise
        return False
    return bool(groups) and groups.issuperset(readers)


def entry_age_seconds(entry_id: str | None, now: float) -> float:
    """Seconds since the entry was added (stream ids start with the milliseconds of their XADD); 0 for None."""
    return max(0.0, now - _id_key(entry_id)[0] / 1000) if entry_id else 0.0
