"""``/fisk timeline`` and ``/fisk summary``: plain functions returning the ephemeral answer to show.

Both act on one thread, named by the caller (the Slack front end resolves which thread the command means).
The upload and the summary are posted through the agent's outbox like everything else.
"""

from __future__ import annotations

import re

from redis.asyncio import Redis

from bot.agent import bus
from bot.incidents.store import IncidentStore
from bot.incidents.timeline import build_timeline, render_markdown, zone
from bot.sanitize.redact import Redactor

WORDS = ("timeline", "summary")
MATERIAL_LIMIT = 150_000  # characters of timeline sent for a summary (the agent caps it too)
_PERMALINK = re.compile(r"/archives/([A-Z0-9]+)/p(\d{10})(\d{6})")
_TS = re.compile(r"^(\d{10}\.\d{6})$")


def thread_argument(text: str, channel: str) -> tuple[str, str] | None:
    """(channel, thread ts) named by the command's argument: a message link or a bare ts; None if absent."""
    arg = text.strip()
    if m := _PERMALINK.search(arg):
        return m.group(1), f"{m.group(2)}.{m.group(3)}"
    if m := _TS.match(arg):
        return channel, m.group(1)
    return None


async def timeline_command(redis: Redis, conversation: str, tz_name: str | None,
                           redactor: Redactor | None = None) -> str:
    """Queue the upload of the thread's timeline (Markdown) into the thread; the answer to show the user."""
    timeline = await build_timeline(redis, IncidentStore(redis), conversation, redactor=redactor)
    if not timeline.entries:
        return "Nothing is recorded for that thread (yet): no timeline to export."
    content = render_markdown(timeline, zone(tz_name))
    name = re.sub(r"[^A-Za-z0-9_.-]+", "-", conversation.partition(":")[2]) or "thread"
    await bus.publish_outbox(redis, "file", conversation, {
        "filename": f"timeline-{name}.md", "title": "Incident timeline", "content": content,
        "comment": f"Timeline of this thread: {len(timeline.entries)} entries.",
    })  # fmt: skip
    return "The timeline is being uploaded to the thread."


async def summary_command(redis: Redis, conversation: str, user: str, redactor: Redactor | None = None) -> str:
    """Ask the agent role for a status summary of the thread (posted in the thread when ready)."""
    timeline = await build_timeline(redis, IncidentStore(redis), conversation, redactor=redactor)
    if not timeline.entries:
        return "Nothing is recorded for that thread (yet): nothing to summarize."
    material = render_markdown(timeline)
    if len(material) > MATERIAL_LIMIT:  # the latest events matter most for a status
        material = "[… earlier events cut …]\n" + material[-MATERIAL_LIMIT:]
    await bus.submit_summary(redis, conversation, user, material)
    return "Asking the assistant for a summary; it will be posted in the thread."
