"""Redis key layout of the approval lifecycle, shared by the store, the workers and the event consumers.

Redis Cluster only runs a Lua script whose keys all live in one hash slot. A transition touches the call's
record, its conversation's sets, and the run / audit / completions streams in ONE script (that is what makes
it atomic), so all of those must share a hash tag. A tag per call (``{call:<id>}``) cannot be shared by a
stream, so the layout is *sharded*: a conversation is mapped to one of ``shards`` shards, and every key of
that shard (call records, conversation sets, and the shard's own streams) carries the tag ``{s<n>}``. With
``shards=1`` (the default, right for a single Redis or Sentinel) everything is one slot; on Cluster choose
``shards`` >= the number of masters so the load spreads. Consumers read every shard's stream.

The shard is encoded in the call id (``<shard>-<hex>``) so any process finds a call's keys from its id alone.
Keys a script derives at run time (conversation sets) are built from the shard base: same slot.
"""

from __future__ import annotations

import zlib
from dataclasses import dataclass


@dataclass(frozen=True)
class Keys:
    """Names of every key and stream; the single place that knows the layout."""

    prefix: str = "fc"
    shards: int = 1

    def __post_init__(self) -> None:
        if self.shards < 1:
            raise ValueError("shards must be >= 1")

    def shard_for_conversation(self, conversation: str) -> int:
        """Stable shard of a conversation: all its calls (and its sets) live together."""
        if self.shards == 1:
            return 0
        return zlib.crc32(conversation.encode()) % self.shards

    def shard_of_call(self, call_id: str) -> int:
        head, sep, _ = call_id.partition("-")
        if not sep or not head.isdigit() or int(head) >= self.shards:
            raise ValueError(f"malformed call id {call_id!r}")
        return int(head)

    def base(self, shard: int) -> str:
        """Prefix of every key of one shard, including the hash tag."""
        return f"{self.prefix}:{{s{shard}}}:"

    def all_shards(self) -> range:
        return range(self.shards)

    def call(self, call_id: str) -> str:
        return self.base(self.shard_of_call(call_id)) + "call:" + call_id

    def body(self, call_id: str) -> str:
        """The call's fixed fields as one JSON string (see ``records.py``: the hash stays a listpack)."""
        return self.base(self.shard_of_call(call_id)) + "body:" + call_id

    def heartbeat(self, call_id: str) -> str:
        return self.base(self.shard_of_call(call_id)) + "hb:" + call_id

    def conv_calls(self, shard: int, conversation: str) -> str:
        """Hash of the conversation's calls that are not terminal yet: id -> ``p`` (awaiting approval) or ``o``."""
        return self.base(shard) + "conv:" + conversation + ":calls"

    def conv_open(self, shard: int, conversation: str) -> str:
        """Set of the conversation's calls that are not terminal yet (earlier versions: ``conv_calls`` now)."""
        return self.base(shard) + "conv:" + conversation + ":open"

    def conv_pending(self, shard: int, conversation: str) -> str:
        """Set of the conversation's calls awaiting approval (earlier versions: ``conv_calls`` now)."""
        return self.base(shard) + "conv:" + conversation + ":pending"

    def awaiting(self, shard: int) -> str:
        """Sorted set of calls awaiting approval, scored by ``expires_at`` (the sweeper's index)."""
        return self.base(shard) + "awaiting"

    def running(self, shard: int) -> str:
        """Sorted set of running calls, scored by claim time (the heartbeat check's index)."""
        return self.base(shard) + "running"

    def run_stream(self, shard: int) -> str:
        return self.base(shard) + "run"

    def parked(self, shard: int) -> str:
        """The runner waiting for the shard's next approved call (``<runner> <ttl ms> <hand-back s>``, expiring)."""
        return self.base(shard) + "parked"

    def handover(self, shard: int, runner: str) -> str:
        """List of calls claimed for ``runner`` by their approval, each ``<id> <record JSON>``, until it takes them."""
        return self.base(shard) + "handoff:" + runner

    def taken(self, shard: int, runner: str) -> str:
        """List of hand-overs for ``runner`` that it has not started (TAKE removes each before the child starts): moved
        there by a previous version's wait, or by the runner itself when it will not start one at once (DEMOTE).
        What a crash left there is given back, never lost."""
        return self.base(shard) + "taken:" + runner

    def moved(self, shard: int, runner: str, token: str) -> str:
        """List of hand-overs one runner process's wait moved off its hand-over list (BLMOVE): being started or
        running (the move is the take), each removed by the call's end. ``token``: the process's own, written with
        its park, so a lost reply is told from what an earlier process of the same runner id moved."""
        return self.base(shard) + "moved:" + runner + ":" + token

    def handovers(self, shard: int) -> str:
        """Sorted set of handed-over calls, scored by when the sweeper may take one back that was never taken."""
        return self.base(shard) + "handoffs"

    def audit_stream(self, shard: int) -> str:
        return self.base(shard) + "audit"

    def completions_stream(self, shard: int) -> str:
        return self.base(shard) + "completions"

    def progress_stream(self, shard: int) -> str:
        """Non-terminal transitions a front end shows as they happen (approved, running, stop requested)."""
        return self.base(shard) + "progress"
