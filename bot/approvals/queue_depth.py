"""How many calls wait at each stage, read from the shard indexes without touching the hot path.

``queued`` (approved, not yet claimed by a runner) has no index of its own: approval appends one entry to the
shard's run stream and a claim does not remove it (it stays pending until the result is stored, when the FINISH
script acknowledges and deletes it; a runner whose claim is refused acknowledges and deletes it too). So every
entry still in the run stream belongs to a call that is approved (queued) or running, and

    queued = XLEN(run stream) - (ZCARD(running) - ZCARD(handovers))

exactly (a call handed over to a parked runner is claimed by its approval and has no run entry: it is running and
in the shard's hand-over index until it ends or is given back, so it is taken out of the running calls that have
an entry), with three precise exceptions, all counted as queued for a while:

* a call cancelled after approval whose entry no runner has read yet: until a runner reads and refuses it (at
  once when a runner has a free slot);
* a call interrupted because its runner died: until a live runner takes its entry over (``reclaim_after``);
* an entry a runner of an earlier version refused (it acknowledged without deleting): until the stream is
  trimmed past it (``redis.retention_seconds``).

One read-only script per shard, O(1) (XLEN, three ZCARDs and one ZRANGE element), so the four numbers of a shard are one
consistent snapshot: a claim or a result landing between two reads cannot skew them. No command walks a stream,
and neither approval nor claim writes anything for this count (no bytes per pending call).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from bot.approvals.keys import Keys

# KEYS: awaiting, running, run stream, hand-overs (one shard: one hash slot). Reads only.
_DEPTH = r"""
local first = redis.call('ZRANGE', KEYS[1], 0, 0, 'WITHSCORES')
return {redis.call('ZCARD', KEYS[1]), redis.call('ZCARD', KEYS[2]), redis.call('XLEN', KEYS[3]), first[2] or '',
        redis.call('ZCARD', KEYS[4])}
"""


@dataclass(frozen=True)
class QueueDepth:
    """Calls by stage across every shard, and the earliest approval deadline (None: nothing awaits)."""

    awaiting_approval: int = 0
    queued: int = 0
    running: int = 0
    earliest_expiry: float | None = None


async def read_queue_depth(redis: Any, keys: Keys) -> QueueDepth:
    """Sum every shard's stages (see the module docstring for what ``queued`` counts)."""
    script = redis.register_script(_DEPTH)
    awaiting = queued = running = 0
    earliest: float | None = None
    for shard in keys.all_shards():
        reply = await script(keys=[keys.awaiting(shard), keys.running(shard), keys.run_stream(shard),
                                   keys.handovers(shard)])
        shard_awaiting, shard_running, entries, first = int(reply[0]), int(reply[1]), int(reply[2]), reply[3]
        awaiting += shard_awaiting
        running += shard_running
        queued += max(0, entries - (shard_running - int(reply[4])))
        if first not in ("", b""):
            expiry = float(first)
            earliest = expiry if earliest is None else min(earliest, expiry)
    return QueueDepth(awaiting, queued, running, earliest)
