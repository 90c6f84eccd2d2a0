"""Cleaning text without stalling the event loop: large texts go to a worker thread.

Every role runs one asyncio loop (Slack listener, agent, poster, heartbeats). Redaction is linear, but tens of
milliseconds for a large text is still too long to hold that loop, so anything over ``INLINE_LIMIT`` is cleaned
in ``asyncio.to_thread``; small texts (most model replies) stay inline, where a thread hop would cost more.
"""

from __future__ import annotations

import asyncio

from bot.sanitize.controls import strip_controls
from bot.sanitize.redact import Redactor

INLINE_LIMIT = 8192


def clean_text(redactor: Redactor, text: str) -> str:
    """Control characters removed, then secrets redacted (what tool output gets, for any other text)."""
    return redactor.redact(strip_controls(text))[0]


async def clean_model_text(redactor: Redactor, text: str) -> str:
    """``clean_text``, in a worker thread when ``text`` is large."""
    if len(text) <= INLINE_LIMIT:
        return clean_text(redactor, text)
    return await asyncio.to_thread(clean_text, redactor, text)
