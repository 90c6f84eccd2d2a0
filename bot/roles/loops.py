"""Background loops a role runs beside its work: final-state metrics, trimming the bus streams, watching the
tool binaries, and the collectors the health endpoint calls before each scrape."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Awaitable, Callable

from redis.exceptions import RedisError

from bot.approvals.events import CompletionConsumer
from bot.approvals.queue_depth import read_queue_depth
from bot.metrics import APPROVAL_WAIT, CALLS_FINAL, OLDEST_PENDING, QUEUE_DEPTH, STREAM_UNACKNOWLEDGED_AGE
from bot.roles.core import Core, instance_name
from bot.streams import entry_age_seconds, trim_acknowledged

log = logging.getLogger(__name__)

#: Seconds the metrics reader waits after a batch, so calls finishing one after another are counted a batch at a
#: time (three round trips per batch on the runner's loop, not per call); the counters lag by at most this.
METRICS_PAUSE_SECONDS = 0.1


async def count_final_states(core: Core, stop_event: asyncio.Event, pause: float = METRICS_PAUSE_SECONDS) -> None:
    """Feed the calls-by-final-state and approval-wait metrics from the completions stream, once per call
    across replicas (consumer group ``metrics``). Events are handled a batch at a time: one read, one pipelined
    read of the decision times, one acknowledgement, then ``pause`` seconds for the next batch to gather, instead
    of three round trips per call on the runner's loop (the one that starts children)."""

    def consumer() -> CompletionConsumer:
        return CompletionConsumer(core.redis.client, "metrics", instance_name("metrics"),
                                  shards=core.config.redis.shards, start_id="$", reader=core.redis.reader)

    completions = consumer()
    while not stop_event.is_set():
        try:
            events = await completions.read(count=200)
            waits = await core.store.human_decision_waits([e.call_id for e in events])
            for event, waited in zip(events, waits, strict=True):
                CALLS_FINAL.labels(str(event.state)).inc()
                if waited is not None:
                    APPROVAL_WAIT.observe(waited)
            await completions.ack(*events)
            if events:
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(stop_event.wait(), pause)
        except (RedisError, OSError) as exc:  # a Redis restart must not end the process over a metric
            log.warning("metrics: reading completions failed (%s); retrying", exc)
            completions = consumer()
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(stop_event.wait(), 1.0)


async def trim_bus_streams(core: Core, stop_event: asyncio.Event, interval: float = 30.0) -> None:
    """Drop what every consumer group of the inbox and outbox has acknowledged (a pending call's turn costs
    nothing there once handled), never an entry a group has not, and publish each stream's unacknowledged age.
    A stream whose own reader (``bus.READERS``) has not created its group yet keeps up to its size cap."""
    from bot.agent.bus import INBOX, OUTBOX, READERS, STREAM_MAXLEN

    while not stop_event.is_set():
        for stream in (INBOX, OUTBOX):
            try:
                _, oldest = await trim_acknowledged(core.redis.client, stream, STREAM_MAXLEN, acknowledged_only=True,
                                                   readers=READERS[stream])
                STREAM_UNACKNOWLEDGED_AGE.labels(stream).set(entry_age_seconds(oldest, time.time()))
            except Exception:
                log.exception("trimming %s failed", stream)
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(stop_event.wait(), interval)


async def watch_binaries(core: Core, stop_event: asyncio.Event, interval: float = 2.0) -> None:
    """Re-introspect a binary that changed on disk, so new proposals use the upgraded tool (see CatalogSource)."""
    while not stop_event.is_set():
        try:
            await core.catalogs.refresh()
        except Exception:
            log.exception("checking the tool binaries for changes failed")
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(stop_event.wait(), interval)


def queue_collector(core: Core) -> Callable[[], Awaitable[None]]:
    """Set the queue-depth gauges (awaiting_approval, queued, running) and the oldest pending call's age from
    the shard indexes, before each scrape (``bot.approvals.queue_depth``: reads only, one script per shard)."""

    async def collect() -> None:
        depth = await read_queue_depth(core.redis.client, core.store.keys)
        QUEUE_DEPTH.labels("awaiting_approval").set(depth.awaiting_approval)
        QUEUE_DEPTH.labels("queued").set(depth.queued)
        QUEUE_DEPTH.labels("running").set(depth.running)
        oldest = None  # scored by expiry: proposal time is expiry minus the approval window
        if depth.earliest_expiry is not None:
            oldest = depth.earliest_expiry - core.config.approval.expire_after_seconds
        OLDEST_PENDING.set(max(0.0, time.time() - oldest) if oldest is not None else 0.0)

    return collect


def pool_collector(core: Core) -> Callable[[], Awaitable[None]]:
    async def collect() -> None:
        core.redis.collect_metrics()

    return collect

