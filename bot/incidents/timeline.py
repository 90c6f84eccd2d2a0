"""An incident's (or any thread's) timeline: gathered from Redis, rendered as Markdown or JSON.

Sources: the thread's recorded entries (``recorder.py``: human messages, model answers, every call
transition with its command line, decisions, results) and, when the thread was opened by an alert, the
incident record and what the alert source said (trigger, repeats, acknowledgement, resolution). Every text
that came from outside (a human, an alert, a tool, the model) is cleaned again on the way out (controls
stripped, secrets redacted): the file is shared in postmortems.

Times are shown in UTC and, when given, in the reader's time zone (their Slack profile's ``tz``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from datetime import UTC, datetime, tzinfo
from typing import Any
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from redis.asyncio import Redis

from bot.incidents.card import clean
from bot.incidents.recorder import read_timeline
from bot.incidents.store import IncidentStore
from bot.sanitize.redact import Redactor, build_redactor

_CALL_WORDS = {
    "awaiting_approval": "Proposed, waiting for approval",
    "auto_approved": "Auto-approved",
    "approved": "Approved",
    "denied": "Denied",
    "expired": "Expired without a decision",
    "rejected": "Rejected (never shown for approval)",
    "running": "Started",
    "finished": "Finished",
    "timed_out": "Timed out",
    "failed_to_start": "Failed to start",
    "interrupted": "Interrupted (outcome unknown)",
    "refused": "Refused by the runner (approval or binary did not verify; not run)",
}
_EVENT_WORDS = {"firing": "Alert firing", "acknowledged": "Acknowledged", "resolved": "Resolved", "update": "Update"}


@dataclass
class Timeline:
    conversation: str
    entries: list[dict[str, Any]] = field(default_factory=list)
    incident: dict[str, str] = field(default_factory=dict)

    @property
    def start(self) -> float | None:
        times = [float(e["at"]) for e in self.entries if e.get("at")]
        return min(times) if times else None

    @property
    def end(self) -> float | None:
        if self.incident.get("resolved_at"):
            return float(self.incident["resolved_at"])
        return None

    def as_json(self) -> dict[str, Any]:
        return {"conversation": self.conversation, "incident": self.incident or None, "start": self.start,
                "end": self.end, "entries": self.entries}


async def build_timeline(redis: Redis, incidents: IncidentStore, conversation: str, *,
                         since: float | None = None, redactor: Redactor | None = None) -> Timeline:  # fmt: skip
    """The thread's timeline, every outside text cleaned with ``redactor``: pass the process's configured one
    (credential values, ``sensitive_env_vars``, ``redact_patterns``), as tool output gets."""
    redactor = redactor or build_redactor()
    entries = await read_timeline(redis, incidents, conversation)
    incident: dict[str, str] = {}
    incident_id = await incidents.incident_of(conversation)
    if incident_id:
        incident = await incidents.get(incident_id)
        for event in await incidents.events(incident_id):
            entries.append({"type": "alert", **event})
    for entry in entries:  # everything that came from outside is cleaned once more on the way out
        for name in ("text", "output", "reason", "title", "command", "error"):
            if isinstance(entry.get(name), str):
                entry[name] = clean(entry[name], 20_000, redactor)
    entries.sort(key=lambda e: float(e.get("at") or 0))
    if since is not None:
        entries = [e for e in entries if float(e.get("at") or 0) >= since]
    shown = {k: clean(v, 300, redactor) for k, v in incident.items() if k != "fingerprints"}
    return Timeline(conversation, entries, shown)


def zone(name: str | None) -> tzinfo | None:
    """The reader's zone from an IANA name (Slack's ``tz``); None when unknown."""
    if not name or name == "UTC":
        return None
    try:
        return ZoneInfo(name)
    except (ZoneInfoNotFoundError, ValueError):
        return None


def _when(epoch: float | None, tz: tzinfo | None) -> str:
    if not epoch:
        return "-"
    moment = datetime.fromtimestamp(epoch, UTC)
    shown = moment.strftime("%Y-%m-%d %H:%M:%S UTC")
    if tz is not None:
        local = moment.astimezone(tz)
        shown += f" ({local.strftime('%Y-%m-%d %H:%M:%S')} {getattr(tz, 'key', '') or local.tzname()})"
    return shown


def _fence(text: str) -> str:
    longest = max((len(m) for m in re.findall(r"`+", text)), default=0)
    ticks = "`" * max(3, longest + 1)
    return f"{ticks}\n{text}\n{ticks}"


def _quote(text: str) -> str:
    return "\n".join("> " + line for line in (text or "").splitlines() or [""])


def _describe(entry: dict[str, Any]) -> str:
    kind = entry.get("type")
    if kind == "alert":
        word = _EVENT_WORDS.get(str(entry.get("kind")), str(entry.get("kind")))
        by = f" by {entry['actor']}" if entry.get("actor") else ""
        return f"**{word}** ({entry.get('source')}){by}: {entry.get('title', '')} ({entry.get('alerts', 0)} alert(s))"
    if kind == "alert_brief":
        return "**Investigation started** from the alert (brief sent to the assistant)"
    if kind == "message":
        return f"**Message** from {entry.get('user')}:\n\n{_quote(str(entry.get('text') or ''))}"
    if kind in ("answer", "preface", "notice", "summary"):
        label = {"answer": "Assistant answer", "preface": "Assistant", "notice": "Bot notice",
                 "summary": "Status summary"}[str(kind)]  # fmt: skip
        return f"**{label}**:\n\n{_quote(str(entry.get('text') or ''))}"
    if kind == "stop":
        return f"**Stop** requested by {entry.get('user')}"
    if kind == "summary_request":
        return f"**Summary** requested by {entry.get('user')}"
    if kind == "call":
        return _describe_call(entry)
    return f"**{kind}**"


def _describe_call(e: dict[str, Any]) -> str:
    to = str(e.get("to"))
    word = _CALL_WORDS.get(to, to)
    if to == "denied" and "stopped by" in str(e.get("reason")):
        word = "Cancelled"
    head = f"**{word}**: `{e.get('tool')}` (call {e.get('call_id')})"
    if to == "awaiting_approval" and e.get("from") == "awaiting_approval":
        head = f"**Approval recorded**: `{e.get('tool')}` (call {e.get('call_id')})"
    lines = [head]
    if e.get("from") == "proposed":
        lines.append(f"requested by {e.get('requester')}; command line:\n\n{_fence(str(e.get('command') or ''))}")
    if to == "running":
        lines.append(f"on {e.get('actor')}")
    elif "exit_code" not in e and e.get("actor"):
        reason = f": {e['reason']}" if e.get("reason") else ""
        lines.append(f"by {e['actor']}{reason}")
    if "exit_code" in e and to != "running":
        duration = f" after {float(e['duration']):.1f} s" if e.get("duration") is not None else ""
        code = e.get("exit_code")
        lines.append(f"exit code {code if code is not None else '-'}{duration}")
        if e.get("error"):
            lines.append(f"error: {e['error']}")
        if e.get("output"):
            lines.append("output (excerpt, sanitized):\n\n" + _fence(str(e["output"])))
    return "\n".join(lines)


def render_markdown(timeline: Timeline, tz: tzinfo | None = None) -> str:
    inc = timeline.incident
    title = f"Incident timeline: {inc.get('title')}" if inc else f"Thread timeline: {timeline.conversation}"
    out = [f"# {title}", ""]
    zone_name = getattr(tz, "key", None) if tz is not None else None
    out.append(f"- Thread: `{timeline.conversation}`")
    if inc:
        out.append(f"- Incident: {inc.get('id')} from {inc.get('source')} (route {inc.get('route')}), "
                   f"state **{inc.get('state')}**, {inc.get('deliveries', '1')} notification(s)")
    out.append(f"- Start: {_when(timeline.start, tz)}")
    if inc:
        out.append(f"- Resolved: {_when(timeline.end, tz) if timeline.end else 'not yet'}")
    out.append(f"- Times: UTC{f' and {zone_name}' if zone_name else ''}")
    out += ["", "## Timeline", ""]
    for entry in timeline.entries:
        out.append(f"### {_when(float(entry.get('at') or 0), tz)}")
        out += ["", _describe(entry), ""]
    calls = _calls(timeline.entries)
    if calls:
        out += ["## Calls", "", "| call | tool | command | outcome | decided by | exit code |",
                "|---|---|---|---|---|---|"]
        for c in calls:
            cells = [c["call_id"], c["tool"], c["command"], c["state"], c["decided_by"], c["exit_code"]]
            out.append("| " + " | ".join(str(x).replace("|", "\\|").replace("\n", " ") for x in cells) + " |")
        out.append("")
    return "\n".join(out)


def _calls(entries: list[dict[str, Any]]) -> list[dict[str, str]]:
    calls: dict[str, dict[str, str]] = {}
    for e in entries:
        if e.get("type") != "call":
            continue
        c = calls.setdefault(str(e["call_id"]), {"call_id": str(e["call_id"]), "tool": str(e.get("tool")),
                                                 "command": f"`{e.get('command')}`", "state": "",
                                                 "decided_by": "", "exit_code": ""})  # fmt: skip
        c["state"] = str(e.get("to"))
        if e.get("to") in ("approved", "auto_approved", "denied", "expired", "rejected"):
            c["decided_by"] = str(e.get("actor"))
        if e.get("exit_code") is not None:
            c["exit_code"] = str(e["exit_code"])
    return list(calls.values())
