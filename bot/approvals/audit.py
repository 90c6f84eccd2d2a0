"""Reading the audit trail.

The entries are WRITTEN by the transition scripts (``scripts.py``), in the same script as the transition, so
a transition without its audit line (or the reverse) cannot exist. One stream per shard (``<prefix>:{s<n>}:
audit``), trimmed to the retention period; this module merges the shards back into one time-ordered list.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from pydantic import BaseModel, Field
from redis.asyncio import Redis

from bot.approvals.keys import Keys
from bot.approvals.records import command_of_body, from_epoch, to_epoch
from bot.streams import text as _text


class AuditEntry(BaseModel):
    """One transition: ``from_state`` -> ``to_state`` by ``actor`` (Slack user id, ``policy``,
    ``runner:<id>``, ``sweeper`` or ``agent``). A first approval of a two-person call is audited as
    awaiting_approval -> awaiting_approval."""

    id: str
    call_id: str
    from_state: str
    to_state: str
    actor: str
    at: datetime
    reason: str = ""
    conversation: str = ""
    tool: str = ""
    command: str = Field(default="", description="the command line as shown to people (secrets redacted)")
    requester: str = ""


async def read_audit(
    redis: Redis,
    since: datetime | None = None,
    limit: int = 100,
    *,
    call_id: str | None = None,
    conversation: str | None = None,
    key_prefix: str = "fc",
    shards: int = 1,
) -> list[AuditEntry]:
    """Audit entries in time order: the first ``limit`` at or after ``since``, or the last ``limit`` if
    ``since`` is None. ``call_id`` filters to one call (read from that call's shard only); ``conversation``
    to one thread's calls (its shard only; pass ``since`` to bound the scan)."""
    keys = Keys(key_prefix, shards)
    if call_id:
        shard_list = [keys.shard_of_call(call_id)]
    elif conversation:
        shard_list = [keys.shard_for_conversation(conversation)]
    else:
        shard_list = list(keys.all_shards())
    entries: list[AuditEntry] = []
    for shard in shard_list:
        stream = keys.audit_stream(shard)
        if call_id is not None or conversation is not None:
            start = f"{int(to_epoch(since) * 1000)}-0" if since else "-"
            raw: Any = await redis.xrange(stream, min=start, max="+")
        elif since is not None:
            raw = await redis.xrange(stream, min=f"{int(to_epoch(since) * 1000)}-0", max="+", count=limit)
        else:
            raw = list(reversed(await redis.xrevrange(stream, max="+", min="-", count=limit) or []))
        read = [_entry(entry_id, fields or {}) for entry_id, fields in raw or []]
        await _fill_commands(redis, keys, read)
        entries.extend(read)
    if call_id is not None:
        entries = [e for e in entries if e.call_id == call_id]
    if conversation is not None:
        entries = [e for e in entries if e.conversation == conversation]
    entries.sort(key=lambda e: (e.at, _id_key(e.id)))
    filtered = since is not None or call_id is not None or conversation is not None
    return entries[:limit] if filtered else entries[-limit:]


def format_audit_table(entries: list[AuditEntry]) -> str:
    """A plain-text table for ``fisk-chatops audit``: time (UTC), call, transition, actor, reason."""
    header = ("TIME (UTC)", "CALL", "TRANSITION", "ACTOR", "REASON")
    rows = [
        (
            e.at.astimezone(UTC).strftime("%Y-%m-%d %H:%M:%S"),
            e.call_id,
            f"{e.from_state} -> {e.to_state}",
            e.actor,
            e.reason.replace("\n", " "),
        )
        for e in entries
    ]
    widths = [max(len(row[i]) for row in [header, *rows]) for i in range(4)]
    lines = []
    for row in [header, *rows]:
        lines.append("  ".join(cell.ljust(widths[i]) for i, cell in enumerate(row[:4])) + "  " + row[4])
    return "\n".join(line.rstrip() for line in lines)


def _entry(entry_id: Any, fields: dict[Any, Any]) -> AuditEntry:
    f = {_text(k): _text(v) for k, v in fields.items()}
    return AuditEntry(
        id=_text(entry_id),
        call_id=f.get("call_id", ""),
        from_state=f.get("from", ""),
        to_state=f.get("to", ""),
        actor=f.get("actor", ""),
        at=from_epoch(f.get("at", "0")),
        reason=f.get("reason", ""),
        conversation=f.get("conversation", ""),
        tool=f.get("tool", ""),
        command=f.get("command", ""),
        requester=f.get("requester", ""),
    )


async def _fill_commands(redis: Redis, keys: Keys, entries: list[AuditEntry]) -> None:
    """An entry whose command is argv joined with spaces does not carry it (``scripts.distinct_command``): it is
    read from the call's body, kept as long as the entry. ``entries`` are of one shard, so one slot (Cluster)."""
    missing = sorted({e.call_id for e in entries if _lacks_command(e) and _is_call_id(keys, e.call_id)})
    if not missing:
        return
    async with redis.pipeline(transaction=False) as pipe:
        for call_id in missing:
            pipe.get(keys.body(call_id))
        bodies = await pipe.execute()
    commands = {call_id: command_of_body(body) for call_id, body in zip(missing, bodies, strict=True)}
    for entry in entries:
        if _lacks_command(entry):
            entry.command = commands.get(entry.call_id, "")


def _is_call_id(keys: Keys, call_id: str) -> bool:
    try:
        keys.shard_of_call(call_id)
    except ValueError:  # not written by this deployment's scripts: nothing to read for it
        return False
    return True


def _lacks_command(entry: AuditEntry) -> bool:
    """A call's transition without its command (a grant's entry names no tool and has no command)."""
    return bool(entry.tool and entry.call_id and not entry.command)


def _id_key(entry_id: str) -> tuple[int, int]:
    ms, _, seq = entry_id.partition("-")
    return int(ms), int(seq or 0)

