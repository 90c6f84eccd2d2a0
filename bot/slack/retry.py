"""Retrying work against Slack and Redis until it is done: shared by the intake worker (recorded requests) and
the poster (outbox, completions, progress), which both must outlast an outage without losing or skipping
anything they acknowledged."""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Awaitable, Callable
from typing import Any

from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import TimeoutError as RedisTimeoutError
from slack_sdk.errors import SlackApiError

from bot.slack import client as api

log = logging.getLogger(__name__)

TRANSIENT_REDIS = (RedisConnectionError, RedisTimeoutError, OSError, TimeoutError)


async def until_done(work: Callable[[], Awaitable[Any]], stop_event: asyncio.Event,
                     backoff: tuple[float, float], who: str = "slack intake") -> bool:
    """Run ``work`` until it succeeds (True) or the process stops (False), retrying transient Redis and Slack
    failures (aiohttp errors and the like too) with exponential backoff. A permanent Slack refusal counts as
    done: Slack will never accept it, and it must not block everything after it. Other errors propagate.
    ``who`` names the caller in the logs."""
    delay = backoff[0]
    while not stop_event.is_set():
        try:
            await work()
            return True
        except SlackApiError as exc:
            if not api.is_transient(exc):
                log.error("%s: Slack refused a request for good (%s); skipping it", who, api.error_code(exc))
                return True
            log.warning("%s: Slack failed (%s); retrying in %.1fs", who, api.error_code(exc) or exc, delay)
        except TRANSIENT_REDIS as exc:
            log.warning("%s: %s; retrying in %.1fs", who, exc, delay)
        except Exception as exc:
            if not api.is_transient(exc):
                raise
            log.warning("%s: %s; retrying in %.1fs", who, exc, delay)
        await pause(stop_event, delay)
        delay = min(delay * 2, backoff[1])
    return False


async def pause(stop_event: asyncio.Event, seconds: float) -> None:
    """Sleep ``seconds``, or less if the process is stopping."""
    with contextlib.suppress(TimeoutError):
        await asyncio.wait_for(stop_event.wait(), seconds)
