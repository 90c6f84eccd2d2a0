"""The records of a tool call and its lifecycle, and their layout in Redis.

Plain dataclasses, not pydantic models: the runner reads a record for every call it claims, and a runner process
imports no pydantic (README, runner RSS). ``CallRecord.from_redis`` is the one reader of the stored layout; the
few type checks pydantic made on what it read (argv a list of strings, ...) are in ``__post_init__``.

A call is two keys of its shard (``keys.py``):

* the call hash ``call:<id>``: the fields the Lua transition scripts read and write (state, the small
  identifying fields, timestamps, approvals, decision, runner, result, front-end ``meta:*``), each a string.
  A pending call's values all stay within Redis's ``hash-max-listpack-value`` (64 bytes), so Redis keeps the
  hash as a compact listpack instead of a hash table (about a third of the memory). Empty values and the id
  (it is in the key) are not stored.
* the body ``body:<id>``: one compact JSON string of what never changes after proposal and is too long for a
  listpack value (argv, the model's arguments, the shown command, tags, digests, the proposal seal). Written
  once by the create script, expired with the hash. Lua reads only the shown command from it (for audit
  entries): ``command``, stored only when it is not simply argv joined with spaces.

Fields that Lua must not re-encode stay opaque JSON strings (Lua's cjson loses float precision and turns ``[]``
into ``{}``), and timestamps stay decimal strings. A record written before the body existed has every field in
its hash; it is read as before (a hash field wins over the body).
"""

from __future__ import annotations

import base64
import hashlib
import json
import shlex
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from enum import StrEnum
from typing import Any

from bot.sanitize import redact_argv
from bot.streams import text as _text


class CallState(StrEnum):
    """States of the lifecycle drawn in DESIGN.md."""

    proposed = "proposed"
    awaiting_approval = "awaiting_approval"
    approved = "approved"
    auto_approved = "auto_approved"
    denied = "denied"
    expired = "expired"
    running = "running"
    finished = "finished"
    timed_out = "timed_out"
    failed_to_start = "failed_to_start"
    interrupted = "interrupted"
    cancelled = "cancelled"
    rejected = "rejected"
    refused = "refused"

    @property
    def terminal(self) -> bool:
        return self in TERMINAL_STATES


TERMINAL_STATES: frozenset[CallState] = frozenset(
    {
        CallState.denied,
        CallState.expired,
        CallState.finished,
        CallState.timed_out,
        CallState.failed_to_start,
        CallState.interrupted,
        CallState.cancelled,
        CallState.rejected,
        CallState.refused,
    }
)

#: The statuses a runner may report in ``finish`` (the executor's ``result["status"]``). ``cancelled`` only
#: when a human asked to stop the call and the runner's signal, not the tool itself, ended it.
RESULT_STATUSES: frozenset[CallState] = frozenset(
    {CallState.finished, CallState.timed_out, CallState.failed_to_start, CallState.refused,
     CallState.cancelled}
)


def hash_argv(argv: Sequence[str]) -> str:
    """sha256 of the argv joined with NUL: an approval click carries it to bind to this exact command line."""
    return hashlib.sha256("\0".join(argv).encode()).hexdigest()


def shown_command(argv: Sequence[str], redact_patterns: Sequence[str] = ()) -> str:
    """The command line as people may read it (secrets redacted, the operator's ``redact_patterns`` too, as the
    runner's result shows it): kept on the record and in every audit entry, so a timeline can say what ran after
    the record itself has expired."""
    return shlex.join(redact_argv(argv, (), redact_patterns))


def to_epoch(moment: datetime) -> float:
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    return moment.timestamp()


def epoch_text(moment: float) -> str:
    """A timestamp as stored in Redis: seconds with milliseconds (4 characters shorter than ``repr``, and what
    every reader keeps anyway: stream ids and scores are milliseconds)."""
    return f"{moment:.3f}"


def from_epoch(value: str | float) -> datetime:
    return datetime.fromtimestamp(float(value), UTC)


def _strings(name: str, value: Any) -> None:
    if not isinstance(value, list) or not all(isinstance(item, str) for item in value):
        raise ValueError(f"{name}: expected a list of strings, got {value!r}")


def _moment(owner: object, name: str, optional: bool = False) -> None:
    """A timestamp field as a datetime: seconds since the epoch (as stored) are read as the moment they name."""
    value = getattr(owner, name)
    if isinstance(value, int | float) and not isinstance(value, bool):
        object.__setattr__(owner, name, from_epoch(value))
    elif not isinstance(value, datetime) and not (optional and value is None):
        raise ValueError(f"{name}: expected a moment, got {value!r}")


def _text_field(name: str, value: Any, optional: bool = False) -> None:
    if not isinstance(value, str) and not (optional and value is None):
        raise ValueError(f"{name}: expected a string, got {value!r}")


@dataclass(frozen=True, kw_only=True)
class Approval:
    """One approver's click (two are kept for a two-person call). ``seal``: the deciding role's signed statement
    of this approval (seals.py)."""

    user: str
    at: datetime
    seal: str = ""

    def __post_init__(self) -> None:
        _moment(self, "at")


@dataclass(frozen=True, kw_only=True)
class Decision:
    """Who closed the approval phase (approved, denied, expired, auto-approved, rejected) and why."""

    actor: str
    at: datetime
    reason: str = ""

    def __post_init__(self) -> None:
        _moment(self, "at")


@dataclass(frozen=True, kw_only=True)
class Proposal:
    """A call the agent wants to make, already validated and rendered to argv by the tools layer.

    ``arguments``: the model's raw JSON arguments; ``tool_use_id``: the model's tool_use id (makes propose
    idempotent when the agent retries); ``binary_digest``: sha256 of the binary's bytes when the tool was built;
    ``model_hash``: sha256 of the introspection JSON the tool came from."""

    tool: str
    app: str
    arguments: str
    argv: list[str]
    tags: list[str] = field(default_factory=list)
    tool_use_id: str | None = None
    binary_digest: str = ""
    model_hash: str = ""

    def __post_init__(self) -> None:
        for name in ("tool", "app", "arguments", "binary_digest", "model_hash"):
            _text_field(name, getattr(self, name))
        _text_field("tool_use_id", self.tool_use_id, optional=True)
        _strings("argv", self.argv)
        _strings("tags", self.tags)


@dataclass(frozen=True, kw_only=True)
class CallRecord:
    """Everything known about one tool call; the single source of truth lives in Redis.

    ``started_at``: when a runner claimed it (running since); ``cancel``: who asked to stop it while running, and
    when; ``signed_decision``: the deciding role's token (see decisions.py); ``proposal_seal``: the proposing
    role's seal of the fields a click relies on."""

    id: str
    conversation: str
    tool: str
    app: str
    arguments: str
    argv: list[str]
    argv_hash: str
    requester: str
    tool_tags: list[str] = field(default_factory=list)
    trigger: str = ""
    state: CallState
    approvals: list[Approval] = field(default_factory=list)
    approvals_needed: int = 1
    decision: Decision | None = None
    runner: str | None = None
    started_at: datetime | None = None
    cancel: Decision | None = None
    result: dict[str, Any] | None = None
    tool_use_id: str | None = None
    binary_digest: str = ""
    model_hash: str = ""
    signed_decision: str = ""
    proposal_seal: str = ""
    created_at: datetime
    expires_at: datetime
    updated_at: datetime
    meta: dict[str, str] = field(default_factory=dict)

    def __post_init__(self) -> None:
        # what the stored layout could carry that the code below would misread: a hash or body written by anyone
        # with Redis access is checked here as pydantic checked it (the decision's signature covers the rest)
        for name in ("id", "conversation", "tool", "app", "arguments", "argv_hash", "requester", "trigger",
                     "binary_digest", "model_hash", "signed_decision", "proposal_seal"):
            _text_field(name, getattr(self, name))
        for name in ("runner", "tool_use_id"):
            _text_field(name, getattr(self, name), optional=True)
        _strings("argv", self.argv)
        _strings("tool_tags", self.tool_tags)
        object.__setattr__(self, "state", CallState(self.state))  # a state's name is read as the state
        for name in ("created_at", "expires_at", "updated_at"):
            _moment(self, name)
        _moment(self, "started_at", optional=True)
        if self.result is not None and not isinstance(self.result, dict):
            raise ValueError(f"result: expected a mapping, got {self.result!r}")
        if not all(isinstance(k, str) and isinstance(v, str) for k, v in self.meta.items()):
            raise ValueError(f"meta: expected strings, got {self.meta!r}")

    @property
    def terminal(self) -> bool:
        return self.state.terminal

    @classmethod
    def from_redis(cls, raw: Mapping[Any, Any], body: Any = None, call_id: str | None = None) -> CallRecord:
        """Build a record from the call hash (HGETALL output, bytes or str) and its body (the JSON string of the
        fixed fields, see ``layout``), ``call_id`` being the id in the key. A record written before the body
        existed has every field in the hash and no body; a field present in the hash wins over the body, and the id in
        the key wins over both."""
        fields: dict[str, Any] = expand_body(json.loads(_text(body))) if body else {}
        fields.setdefault("id", call_id)
        if fields.pop("tool_use", None) and call_id is not None:
            fields["tool_use_id"] = call_id.partition("-")[2]  # the id was made from the model's tool_use id
        for k, v in raw.items():
            name, value = _text(k), _text(v)
            fields[name] = json.loads(value) if name in _JSON_IN_HASH else value
        if call_id is not None:
            # the key names the call, never a field: a Redis writer who copies another call's hash (with the ``id``
            # field the previous layout stored) and body under this key would otherwise pass that call's seal
            fields["id"] = call_id
        meta = {k[5:]: v for k, v in fields.items() if k.startswith("meta:")}
        return cls(
            id=fields["id"],
            conversation=fields["conversation"],
            tool=fields.get("tool", ""),
            app=fields.get("app", ""),
            arguments=fields["arguments"],
            argv=fields["argv"],
            argv_hash=fields["argv_hash"],
            requester=fields.get("requester", ""),
            tool_tags=fields.get("tool_tags") or [],
            trigger=fields.get("trigger", ""),
            state=CallState(fields["state"]),
            approvals=[
                Approval(user=a["user"], at=from_epoch(a["at"]), seal=str(a.get("seal") or ""))
                for a in json.loads(fields.get("approvals") or "[]")
            ],
            approvals_needed=int(fields.get("approvals_needed") or 1),
            decision=_decision(fields.get("decision") or ""),
            runner=fields.get("runner") or None,
            started_at=from_epoch(fields["started_at"]) if fields.get("started_at") else None,
            cancel=_decision(fields.get("cancel") or ""),
            result=json.loads(fields["result"]) if fields.get("result") else None,
            tool_use_id=fields.get("tool_use_id") or None,
            binary_digest=fields.get("binary_digest", ""),
            model_hash=fields.get("model_hash", ""),
            signed_decision=fields.get("signed_decision", ""),
            proposal_seal=fields.get("proposal_seal", ""),
            created_at=from_epoch(fields["created_at"]),
            expires_at=from_epoch(fields["expires_at"]),
            updated_at=from_epoch(fields["updated_at"]),
            meta=meta,
        )

    @classmethod
    def from_reply(cls, reply: Sequence[Any], call_id: str) -> CallRecord:
        """Build a record from a Lua script's ``{flat HGETALL, body}`` reply (see ``scripts.RECORD``)."""
        flat = reply[0]
        return cls.from_redis(dict(zip(flat[0::2], flat[1::2], strict=True)), reply[1] if len(reply) > 1 else None,
                              call_id)


#: fields that the previous layout kept in the hash as JSON text and the body keeps as JSON values
_JSON_IN_HASH = frozenset({"argv", "tool_tags"})


@dataclass(frozen=True)
class NewCall:
    """A freshly proposed call as it is written: ``fields`` go into the call hash (small values, all strings:
    what the Lua scripts read and change), ``body`` is the JSON of what never changes after proposal."""

    id: str
    fields: dict[str, str]
    body: dict[str, Any]

    def body_json(self) -> str:
        """The body as stored: one-letter names, sha256 digests in base64url (43 characters instead of 64 hex)."""
        return json.dumps(compact_body(self.body), separators=(",", ":"), ensure_ascii=False)


#: the body's stored names (``command`` is read by the audit script as ``c``, argv as ``v``)
_BODY_NAMES = {"arguments": "a", "argv": "v", "command": "c", "tool_tags": "t", "trigger": "r",
               "binary_digest": "b", "model_hash": "m", "tool_use": "u", "proposal_seal": "s"}
_BODY_FIELDS = {short: name for name, short in _BODY_NAMES.items()}
_DIGESTS = frozenset({"binary_digest", "model_hash"})


def compact_body(body: Mapping[str, Any]) -> dict[str, Any]:
    """``body`` under its stored names. A digest that is not a sha256 in hex keeps its long name and its text, so
    reading it back never guesses an encoding."""
    stored: dict[str, Any] = {}
    for name, value in body.items():
        if name in _DIGESTS:
            if not (isinstance(value, str) and len(value) == 64 and _is_hex(value)):
                stored[name] = value
                continue
            value = base64.urlsafe_b64encode(bytes.fromhex(value)).rstrip(b"=").decode()
        stored[_BODY_NAMES.get(name, name)] = value
    return stored


def expand_body(stored: Mapping[str, Any]) -> dict[str, Any]:
    """The body under its field names, digests in hex; a body of the previous layout (long names) as it is."""
    body: dict[str, Any] = {}
    for key, value in stored.items():
        name = _BODY_FIELDS.get(key, key)
        if name in _DIGESTS and key != name:
            value = base64.urlsafe_b64decode(str(value) + "=").hex()
        body[name] = value
    return body


def command_of_body(body: Any) -> str:
    """The shown command of a stored body (JSON text, either layout): its own command, else argv joined with
    spaces (what an audit entry leaves out since this version, see ``scripts.distinct_command``); "" without
    a body."""
    if not body:
        return ""
    fields = expand_body(json.loads(_text(body)))
    return str(fields.get("command") or " ".join(fields.get("argv") or []))


def _is_hex(value: str) -> bool:
    return all(c in "0123456789abcdef" for c in value)


def new_call(
    *,
    call_id: str,
    conversation: str,
    tool: str,
    app: str,
    arguments: str,
    argv: Sequence[str],
    requester: str,
    tags: Sequence[str],
    trigger: str,
    approvals_needed: int,
    tool_use_id: str | None,
    now: float,
    expires_at: float,
    binary_digest: str = "",
    model_hash: str = "",
    redact_patterns: Sequence[str] = (),
) -> NewCall:
    """Split a new call into hash fields and body (see ``layout`` in DESIGN terms: the hash stays a listpack)."""
    fields = {
        "conversation": conversation,
        "tool": tool,
        "app": app,
        "argv_hash": hash_argv(argv),
        "requester": requester,
        "state": CallState.proposed.value,
        "created_at": epoch_text(now),
        "expires_at": epoch_text(expires_at),
        "updated_at": epoch_text(now),
    }
    if approvals_needed != 1:  # 1 when absent (the seal claims the number: a deleted field fails the seal check)
        fields["approvals_needed"] = str(approvals_needed)
    body: dict[str, Any] = {"arguments": arguments, "argv": list(argv)}
    command = shown_command(argv, redact_patterns)
    if command != " ".join(argv):  # else the audit script joins argv itself (nothing quoted or redacted)
        body["command"] = command
    optional = {"tool_tags": list(tags), "trigger": trigger, "binary_digest": binary_digest, "model_hash": model_hash}
    body.update({k: v for k, v in optional.items() if v})
    if tool_use_id is not None:
        if call_id.partition("-")[2] != tool_use_id:
            raise ValueError(f"call id {call_id!r} is not made from tool_use id {tool_use_id!r}")
        body["tool_use"] = 1
    return NewCall(call_id, fields, body)


def _decision(raw: str) -> Decision | None:
    if not raw:
        return None
    data = json.loads(raw)
    return Decision(actor=data["actor"], at=from_epoch(data["at"]), reason=data.get("reason", ""))

