"""Signed decisions: Redis is storage, not authority (DESIGN.md invariant 8).

The role that decides (the Slack front end on an Approve click, the agent when the policy auto-approves)
signs a *decision token* with an Ed25519 private key. The token names everything that makes the decision:
call id, tool, application, argv hash, binary digest, command-model hash, approvers, verdict, when it was
signed, when it stops being valid, and the key id. Runners hold only public keys: a call whose token is
missing, does not verify, names another call or another command line, has expired, or was already executed
by this runner is refused and never runs. Whoever can write Redis can therefore change states and queue
entries at will, but cannot mint a token, and a genuine token copied onto another call or onto rewritten
argv does not match what the runner recomputes from the record.

Token format: ``base64url(claims JSON) "." base64url(signature)``; the signature covers a fixed domain
prefix plus the claims bytes, so a signature made for anything else never verifies as a decision.

Making, writing and reading the key files is ``decision_keys.py``, read once at start; this module is on
every call's way to its child.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import heapq
import hmac
import json
import os
import threading
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import IO

from bot.approvals import sodium
from bot.approvals.records import CallRecord, hash_argv
from bot.approvals.signing_key import SeedKey, SigningKey
from bot.approvals.verify_key import InvalidSignature, PublicKey, RawPublicKey, as_public_key

_DOMAIN = b"fisk-chatops decision v1\n"
#: The verdicts a token may carry; nothing else lets a call run.
VERDICTS = frozenset({"approved", "auto_approved"})
#: Tokens verified ahead and not yet checked that a runner keeps (its claims in flight, at most its concurrency).
VERIFIED_AHEAD_LIMIT = 256


class DecisionKeyError(ValueError):
    """A key file is missing, unreadable or not an Ed25519 key; the message names the file."""


class DecisionRefused(Exception):
    """The call's decision does not verify; ``reason`` is one short line for the audit trail and the card."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


@dataclass(frozen=True)
class DecisionClaims:
    """What a decision token asserts."""

    call_id: str
    tool: str
    app: str
    argv_hash: str
    binary_digest: str
    model_hash: str
    approvers: tuple[str, ...]
    verdict: str
    signed_at: float
    expires_at: float
    key_id: str

    def encode(self) -> bytes:
        """Canonical bytes (sorted keys, no spaces): the same claims always sign to the same message."""
        # the fields by hand: dataclasses.asdict copies recursively and cost as much as the signature (approve()
        # signs on the way to the child's start); the bytes are the same (tests/approvals/test_decisions.py)
        data = {
            "call_id": self.call_id, "tool": self.tool, "app": self.app, "argv_hash": self.argv_hash,
            "binary_digest": self.binary_digest, "model_hash": self.model_hash, "approvers": list(self.approvers),
            "verdict": self.verdict, "signed_at": self.signed_at, "expires_at": self.expires_at,
            "key_id": self.key_id,
        }
        return json.dumps(data, sort_keys=True, separators=(",", ":")).encode()

    @classmethod
    def decode(cls, raw: bytes) -> DecisionClaims:
        data = json.loads(raw)
        if not isinstance(data, dict):
            raise ValueError("claims are not an object")
        return cls(
            call_id=str(data["call_id"]), tool=str(data["tool"]), app=str(data["app"]),
            argv_hash=str(data["argv_hash"]), binary_digest=str(data["binary_digest"]),
            model_hash=str(data["model_hash"]), approvers=tuple(str(a) for a in data["approvers"]),
            verdict=str(data["verdict"]), signed_at=float(data["signed_at"]),
            expires_at=float(data["expires_at"]), key_id=str(data["key_id"]),
        )


def key_id_of(public_key: RawPublicKey) -> str:
    """A short, stable name for a public key (first 16 hex digits of the sha256 of its raw bytes)."""
    return hashlib.sha256(public_key.public_bytes_raw()).hexdigest()[:16]


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def _unb64(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


class DecisionSigner:
    """Held only by the roles that decide. ``sign`` is called at the point the decision is made."""

    def __init__(self, private_key: SigningKey, *, valid_seconds: float = 3600.0) -> None:
        self._key = private_key
        # libsodium where installed (half OpenSSL's time, three signatures per click on the way to the child's
        # start), checked once to sign exactly as this key's own signing does; else that signing. A key read
        # without cryptography (signing_key.SeedKey) is libsodium's already, checked when it was made.
        self._sign: Callable[[bytes], bytes] = private_key.sign if isinstance(private_key, SeedKey) else \
            sodium.signer(private_key.private_bytes_raw(), private_key.sign) or private_key.sign
        self.key_id = key_id_of(private_key.public_key())
        self.valid_seconds = valid_seconds

    @property
    def public_key(self) -> PublicKey:
        return as_public_key(self._key.public_key())

    def sign(
        self,
        *,
        call_id: str,
        tool: str,
        app: str,
        argv_hash: str,
        binary_digest: str,
        model_hash: str,
        approvers: Sequence[str],
        verdict: str,
        now: float,
    ) -> str:
        """A token for one decision; it stops being valid ``valid_seconds`` after ``now``."""
        if verdict not in VERDICTS:
            raise ValueError(f"not a verdict that lets a call run: {verdict!r}")
        claims = DecisionClaims(
            call_id=call_id, tool=tool, app=app, argv_hash=argv_hash, binary_digest=binary_digest,
            model_hash=model_hash, approvers=tuple(approvers), verdict=verdict, signed_at=now,
            expires_at=now + self.valid_seconds, key_id=self.key_id,
        )
        payload = claims.encode()
        return f"{_b64(payload)}.{_b64(self._sign(_DOMAIN + payload))}"

    def sign_statement(self, kind: str, claims: dict[str, str]) -> str:
        """A token for something other than a decision (a standing approval): its own domain, so it can never
        pass as a decision, and vice versa."""
        payload = _statement_payload(claims)
        return f"{_b64(payload)}.{_b64(self._sign(_statement_domain(kind) + payload))}"

    def sign_detached(self, kind: str, claims: dict[str, str]) -> str:
        """The signature alone of a statement whose claims the checker rebuilds from what it checks (a seal kept
        next to the very fields it covers need not repeat them: ~90 bytes instead of ~700 on every call)."""
        return _b64(self._sign(_statement_domain(kind) + _statement_payload(claims)))

    def made_detached(self, kind: str, signature: str, claims: dict[str, str]) -> bool:
        """True if ``signature`` is this key's ``sign_detached`` signature of exactly ``claims``.

        Ed25519 signing is deterministic (RFC 8032: one key and one message give one signature), so a seal this
        key made is recognised by signing the claims again and comparing, ~30 us, instead of a verification,
        ~115 us, on the way from a click to the child's start. Anything that differs is verified in full: a
        genuine signature made another way (an implementation with random nonces) still passes, and a forged or
        rewritten one still fails. The comparison is constant-time, so timing teaches nobody this key's
        signature of claims they chose. Only ASCII is compared: a seal read from JSON may hold a lone surrogate,
        which no encoder takes, and the verification refuses it as it refuses any text that is not base64."""
        if signature.isascii() and hmac.compare_digest(self.sign_detached(kind, claims).encode(), signature.encode()):
            return True
        return verify_detached(kind, signature, claims, self.public_key)


def _statement_domain(kind: str) -> bytes:
    return f"fisk-chatops {kind} statement v1\n".encode()


def _statement_payload(claims: dict[str, str]) -> bytes:
    return json.dumps(claims, sort_keys=True, separators=(",", ":")).encode()


def verify_detached(kind: str, signature: str, claims: dict[str, str], public_key: RawPublicKey) -> bool:
    """True if ``public_key`` signed exactly ``claims`` as a ``kind`` statement (see ``sign_detached``)."""
    try:
        as_public_key(public_key).verify(_unb64(signature), _statement_domain(kind) + _statement_payload(claims))
    except (ValueError, binascii.Error, InvalidSignature):
        return False
    return True


def verified_statement(kind: str, token: str, public_key: RawPublicKey) -> dict[str, str] | None:
    """The claims of a ``sign_statement`` token if ``public_key`` signed it, else None."""
    head, sep, tail = token.partition(".")
    try:
        payload, signature = _unb64(head), _unb64(tail)
        as_public_key(public_key).verify(signature, _statement_domain(kind) + payload)
        claims = json.loads(payload)
    except (ValueError, binascii.Error, InvalidSignature):
        return None
    if not sep or not isinstance(claims, dict):
        return None
    return {str(k): str(v) for k, v in claims.items()}


class DecisionVerifier:
    """Held by runners: public keys only (several, so keys can rotate), plus this runner's replay memory.

    ``check`` refuses a token that does not verify or does not match the record; ``consume`` additionally
    remembers the decision until it expires, so the same genuine decision never executes twice here
    even if Redis is rewritten to queue the call again. With ``memory`` (a file in the runner's state
    directory) that memory survives a restart of the runner: one line per executed call, appended before the
    call runs, compacted to the unexpired lines at start.
    """

    def __init__(
        self,
        public_keys: Iterable[RawPublicKey],
        *,
        clock: Callable[[], float] = time.time,
        memory: str | os.PathLike[str] | None = None,
    ) -> None:
        self.keys = {key_id_of(k): as_public_key(k) for k in public_keys}
        if not self.keys:
            raise DecisionKeyError("no decision public key: a runner needs at least one to verify decisions")
        self._clock = clock
        self._used: dict[str, float] = {}
        self._expiry: list[tuple[float, str]] = []  # heap of (expires_at, call id): forgetting is O(log n)
        self._lock = threading.Lock()
        self._memory = self._load(Path(memory)) if memory is not None else None
        self._ahead: dict[str, DecisionClaims] = {}  # token -> its verified claims (verify_ahead), until checked

    def _load(self, path: Path) -> IO[str]:
        """Read the executed calls whose decisions are still valid, rewrite the file with only those, and keep
        it open for appending."""
        now = self._clock()
        try:
            lines = path.read_text().splitlines()
        except FileNotFoundError:
            lines = []
        for line in lines:
            used, _, until = line.partition(" ")
            try:
                expires_at = float(until)
            except ValueError:
                continue  # a line cut short by a crash
            if expires_at >= now:
                self._used[used] = expires_at
                heapq.heappush(self._expiry, (expires_at, used))
        path.parent.mkdir(parents=True, exist_ok=True)
        fresh = path.with_suffix(".tmp")
        fresh.write_text("".join(f"{c} {u!r}\n" for c, u in self._used.items()))
        fresh.replace(path)
        return open(path, "a", encoding="utf-8")  # noqa: SIM115  (kept open for the verifier's life)

    def verify_ahead(self, token: str) -> None:
        """Verify ``token``'s signature before the record it belongs to is at hand: a runner does it while its
        claim is in Redis, so the Ed25519 verification is off the way to the child's start. ``check`` of a record
        that carries this exact token then skips the signature (the same bytes under the same keys verify the
        same way), never the rest: the claims are still matched against the record, the expiry and the replay
        memory still apply. A token that does not verify is not remembered (``check`` says why)."""
        if not token or token in self._ahead:
            return
        try:
            claims = self._verified_claims(token)
        except DecisionRefused:
            return
        self._ahead[token] = claims
        while len(self._ahead) > VERIFIED_AHEAD_LIMIT:  # tokens whose claim lost or never came: oldest first
            self._ahead.pop(next(iter(self._ahead)))

    def check(self, record: CallRecord) -> DecisionClaims:
        """The verified claims of ``record``'s decision, or ``DecisionRefused`` saying why not."""
        token = record.signed_decision
        if not token:
            raise DecisionRefused("no signed decision")
        claims = self._ahead.pop(token, None) or self._verified_claims(token)
        _match(claims, record)
        if self._clock() > claims.expires_at:
            raise DecisionRefused("decision expired before execution")
        return claims

    def _verified_claims(self, token: str) -> DecisionClaims:
        """The claims of a token whose signature verifies under one of this runner's keys."""
        head, sep, tail = token.partition(".")
        try:
            if not sep:
                raise ValueError("not a token")
            payload, signature = _unb64(head), _unb64(tail)
            claims = DecisionClaims.decode(payload)
        except (ValueError, KeyError, TypeError, binascii.Error):
            raise DecisionRefused("malformed decision token") from None
        key = self.keys.get(claims.key_id)
        if key is None:
            raise DecisionRefused(f"decision signed by unknown key {claims.key_id[:16]!r}")
        try:
            key.verify(signature, _DOMAIN + payload)
        except InvalidSignature:
            raise DecisionRefused("decision signature does not verify") from None
        return claims

    def consume(self, record: CallRecord) -> DecisionClaims:
        """``check``, then remember the call so a replay of the same decision is refused."""
        claims = self.check(record)
        now = self._clock()
        with self._lock:
            # forget what expired, oldest first (a scan of every remembered call per call was quadratic)
            while self._expiry and self._expiry[0][0] < now:
                until, forgotten = heapq.heappop(self._expiry)
                if self._used.get(forgotten) == until:
                    del self._used[forgotten]
            # keyed by the decoded signature (Ed25519 signatures are not malleable, while the base64 text of a
            # token can be spelled several ways): the same decision twice is a replay, a new decision for a
            # reused call id (a test's fixed tool_use id) is not
            used = hashlib.sha256(_unb64(record.signed_decision.partition(".")[2])).hexdigest()
            if used in self._used:
                raise DecisionRefused("decision already executed (replay)")
            self._used[used] = claims.expires_at
            heapq.heappush(self._expiry, (claims.expires_at, used))
            if self._memory is not None:
                self._memory.write(f"{used} {claims.expires_at!r}\n")
                self._memory.flush()  # in the kernel before the call starts: a runner crash does not lose it
        return claims


def _match(claims: DecisionClaims, record: CallRecord) -> None:
    """The token must be about this call and this command line (recomputed, not read from the record)."""
    if claims.call_id != record.id:
        raise DecisionRefused("decision was signed for another call")
    if claims.verdict not in VERDICTS or not claims.approvers:
        raise DecisionRefused(f"decision verdict {claims.verdict!r} does not allow running")
    if claims.tool != record.tool or claims.app != record.app:
        raise DecisionRefused("decision was signed for another tool")
    if claims.argv_hash != hash_argv(record.argv):
        raise DecisionRefused("command line differs from the one approved")
    if not claims.binary_digest or claims.binary_digest != record.binary_digest:
        raise DecisionRefused("binary digest differs from the one approved")
