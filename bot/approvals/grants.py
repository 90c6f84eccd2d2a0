"""Standing approvals: "approve ``tool`` in this thread for N minutes", optionally only its exact command line.

A grant lives beside the thread's calls in the conversation's shard (``<base>grant:<id>`` hash, and the set
``<base>conv:<conversation>:grants``), so the CREATE script that records a proposal can check it in the same
atomic step: a grant revoked or expired a moment before is never used (the call then waits for a click as
usual). A call approved by a grant is ``auto_approved`` with actor ``grant:<id>`` and a reason naming who granted
it and until when, so every use is in the audit trail with the grant id; its decision token is signed by the role
that applies the grant (the agent's store, see ``CallStore.propose``). The grant itself is signed by the role
that records it (tool, command line, thread, expiry, and the tool's tags and binary digest as the granter saw
them): a grant written or widened in Redis by hand is ignored, and a tool re-tagged or replaced since (a new
per-tag approver rule, a new binary) is not covered by it. A grant never approves a call its own granter
requested (that would be self-approval) unless the policy writes ``forbid_self_approval: false``.
Granting and revoking are audited too, under the grant id. Who may grant is checked by the caller against the
approval policy (an approver of the call in front of them, ``ApprovalPolicy.standing_refusal`` for the tool).
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field, replace
from datetime import datetime
from typing import Any

from redis.asyncio import Redis

from bot.approvals.decisions import DecisionSigner, verified_statement
from bot.approvals.errors import ApprovalError
from bot.approvals.keys import Keys
from bot.approvals.records import from_epoch
from bot.approvals.verify_key import RawPublicKey
from bot.streams import text as _text

_REVOKE = r"""
local key = KEYS[1]
if redis.call('EXISTS', key) == 0 then return {'not_found'} end
local revoked = redis.call('HGET', key, 'revoked_by')
if revoked and revoked ~= '' then return {'already', revoked} end
if tonumber(redis.call('HGET', key, 'expires_at')) <= tonumber(ARGV[2]) then return {'expired'} end
redis.call('HSET', key, 'revoked_by', ARGV[1], 'revoked_at', ARGV[2])
redis.call('XADD', KEYS[2], 'MINID', '~', ARGV[4], '*', 'call_id', ARGV[3], 'from', 'granted', 'to', 'revoked',
           'actor', ARGV[1], 'at', ARGV[2], 'reason', 'standing approval revoked')
return {'ok'}
"""


class GrantError(ApprovalError):
    """A grant cannot be revoked (unknown, already revoked, expired); the message says which."""


@dataclass(frozen=True, kw_only=True)
class Grant:
    """One standing approval in one thread (a plain dataclass: the runner's store imports this module, and a
    runner process imports no pydantic). Built only by ``GrantStore.get`` from the grant's hash."""

    id: str
    conversation: str
    tool: str
    argv_hash: str = ""  # "" = any command line of the tool
    tags: str = ""  # the tool's tags when granted, sorted and newline-joined: a re-tagged tool is not covered
    binary_digest: str = ""  # the tool's binary when granted: a replaced binary is not covered
    command: str = ""  # the command line shown when the grant is for one command line only
    granted_by: str
    created_at: datetime
    expires_at: datetime
    revoked_by: str = ""
    revoked_at: datetime | None = None
    meta: dict[str, str] = field(default_factory=dict)
    signature: str = ""  # the granting role's token over what the grant allows (see ``trusted``)

    def trusted(self, public_key: RawPublicKey, conversation: str) -> Grant | None:
        """This grant as the granting role signed it (tool, command line, expiry, thread), or None.

        Redis is not authority: a grant written or widened by hand (another tool, a later expiry, another
        thread) is not signed for, and is ignored, so its calls wait for a click."""
        claims = verified_statement("grant", self.signature, public_key)
        if claims is None or claims.get("id") != self.id or claims.get("conversation") != conversation:
            return None
        try:
            expires_at = from_epoch(claims["expires_at"])
        except (KeyError, ValueError):
            return None
        return replace(self, tool=claims.get("tool", ""), argv_hash=claims.get("argv_hash", ""),
                       granted_by=claims.get("granted_by", ""), expires_at=expires_at, tags=claims.get("tags", ""),
                       binary_digest=claims.get("binary_digest", ""))

    def active(self, now: float) -> bool:
        return not self.revoked_by and self.expires_at.timestamp() > now

    def covers(self, tool: str, argv_hash: str, tags: Iterable[str], binary_digest: str) -> bool:
        """Whether this grant stands in for a click on a call of ``tool`` with this command line, tags and
        binary: the tool exactly as it was when granted (same tags, so the same approver rules; same binary)."""
        return (self.tool == tool and (not self.argv_hash or self.argv_hash == argv_hash)
                and self.tags == tag_key(tags) and self.binary_digest == binary_digest)


def tag_key(tags: Iterable[str]) -> str:
    """Tags in one comparable string (order does not matter)."""
    return "\n".join(sorted(set(tags)))


class GrantStore:
    def __init__(self, redis: Redis, keys: Keys, *, retention_seconds: float,
                 clock: Callable[[], float] = time.time, signer: DecisionSigner | None = None) -> None:
        self.redis = redis
        self.signer = signer
        self.keys = keys
        self.retention_seconds = retention_seconds
        self._clock = clock
        self._revoke = redis.register_script(_REVOKE)

    def now(self) -> float:
        return self._clock()

    def key(self, grant_id: str) -> str:
        return self.keys.base(self.keys.shard_of_call(grant_id)) + "grant:" + grant_id

    def index(self, conversation: str) -> str:
        shard = self.keys.shard_for_conversation(conversation)
        return self.keys.base(shard) + "conv:" + conversation + ":grants"

    async def create(self, conversation: str, tool: str, granted_by: str, minutes: float, *,
                     argv_hash: str = "", command: str = "", tags: Iterable[str] = (),
                     binary_digest: str = "") -> Grant:
        """Record a grant (audited under its id). The caller has checked that ``granted_by`` may grant it."""
        now = self._clock()
        shard = self.keys.shard_for_conversation(conversation)
        grant_id = f"{shard}-g{uuid.uuid4().hex[:16]}"
        expires = now + minutes * 60
        fields: dict[Any, Any] = {"id": grant_id, "conversation": conversation, "tool": tool, "argv_hash": argv_hash,
                  "command": command, "granted_by": granted_by, "created_at": repr(now), "expires_at": repr(expires),
                  "revoked_by": "", "revoked_at": "", "tags": tag_key(tags), "binary_digest": binary_digest}
        if self.signer is not None:
            claims = {k: str(fields[k]) for k in ("id", "conversation", "tool", "argv_hash", "granted_by",
                                                   "expires_at", "tags", "binary_digest")}
            fields["signature"] = self.signer.sign_statement("grant", claims)
        ttl = int(minutes * 60 + self.retention_seconds)
        scope = "this command line" if argv_hash else "any command line"
        async with self.redis.pipeline(transaction=True) as pipe:
            pipe.hset(self.key(grant_id), mapping=fields)
            pipe.expire(self.key(grant_id), ttl)
            pipe.sadd(self.index(conversation), grant_id)
            pipe.expire(self.index(conversation), ttl)
            pipe.xadd(self.keys.audit_stream(shard), {
                "call_id": grant_id, "from": "", "to": "granted", "actor": granted_by, "at": repr(now),
                "reason": f"standing approval of {tool} ({scope}) in {conversation} for {minutes:g} min"})
            await pipe.execute()
        return await self.get(grant_id)

    async def get(self, grant_id: str) -> Grant:
        try:
            raw = await self.redis.hgetall(self.key(grant_id))
        except ValueError as exc:
            raise GrantError(f"no standing approval {grant_id!r}") from exc
        if not raw:
            raise GrantError(f"no standing approval {grant_id!r} (it may have expired long ago)")
        f = {_text(k): _text(v) for k, v in raw.items()}
        return Grant(id=f["id"], conversation=f["conversation"], tool=f["tool"], argv_hash=f.get("argv_hash", ""),
                     command=f.get("command", ""), tags=f.get("tags", ""), binary_digest=f.get("binary_digest", ""),
                     granted_by=f["granted_by"], created_at=from_epoch(f["created_at"]),
                     expires_at=from_epoch(f["expires_at"]), revoked_by=f.get("revoked_by", ""),
                     revoked_at=from_epoch(f["revoked_at"]) if f.get("revoked_at") else None,
                     meta={k[5:]: v for k, v in f.items() if k.startswith("meta:")},
                     signature=f.get("signature", ""))

    async def active(self, conversation: str) -> list[Grant]:
        """The thread's grants that are neither revoked nor expired, oldest first."""
        now = self._clock()
        grants = []
        for raw_id in await self.redis.smembers(self.index(conversation)):
            try:
                grant = await self.get(_text(raw_id))
            except GrantError:
                await self.redis.srem(self.index(conversation), raw_id)
                continue
            if grant.active(now):
                grants.append(grant)
        return sorted(grants, key=lambda g: g.created_at)

    async def revoke(self, grant_id: str, user: str) -> Grant:
        """Revoke a grant now (audited); GrantError if unknown, already revoked or expired."""
        now = self._clock()
        try:
            shard = self.keys.shard_of_call(grant_id)
        except ValueError as exc:
            raise GrantError(f"no standing approval {grant_id!r}") from exc
        min_ms = max(0, int((now - self.retention_seconds) * 1000))
        reply = await self._revoke(keys=[self.key(grant_id), self.keys.audit_stream(shard)],
                                   args=[user, repr(now), grant_id, f"{min_ms}-0"])
        status = _text(reply[0])
        if status == "not_found":
            raise GrantError(f"no standing approval {grant_id!r}")
        if status == "already":
            raise GrantError(f"this standing approval was already revoked by {_text(reply[1])}")
        if status == "expired":
            raise GrantError("this standing approval has already expired")
        return await self.get(grant_id)

    async def set_meta(self, grant_id: str, **meta: str) -> None:
        mapping: dict[Any, Any] = {f"meta:{k}": v for k, v in meta.items()}
        await self.redis.hset(self.key(grant_id), mapping=mapping)
