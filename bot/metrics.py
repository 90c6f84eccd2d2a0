"""Prometheus metrics of one process. Each role exports what it observes; Prometheus sums over pods.

This module imports nothing of the bot but ``bot.metric_types`` (our own exposition: ``prometheus_client`` kept
+2.3 MiB in every process), so any package may record into it without breaking the package order.
"""

from __future__ import annotations

from bot.metric_types import Counter, Gauge, Histogram, Registry, register_process_metrics

REGISTRY = Registry()
# What every Prometheus client exports by default, on our own registry too: process_* (CPU, resident memory,
# open fds, start time), python_info, and python_gc_* (collections per generation).
register_process_metrics(REGISTRY)

CALLS_FINAL = Counter(
    "fisk_chatops_calls_total", "Tool calls that reached a final state, by state", ["state"], registry=REGISTRY
)
APPROVAL_WAIT = Histogram(
    "fisk_chatops_approval_wait_seconds", "Time from proposal to a human decision",
    buckets=(1, 5, 15, 30, 60, 120, 300, 600, 900, 1800, 3600), registry=REGISTRY,
)
RUN_DURATION = Histogram(
    "fisk_chatops_run_duration_seconds", "Tool call run time",
    buckets=(0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300, 600), registry=REGISTRY,
)
QUEUE_DEPTH = Gauge(
    "fisk_chatops_queue_depth",
    "Calls by stage across all shards: awaiting_approval, queued (approved, not yet claimed by a runner), running",
    ["stage"],
    registry=REGISTRY,
)
OLDEST_PENDING = Gauge(
    "fisk_chatops_oldest_pending_age_seconds", "Age of the oldest call awaiting approval", registry=REGISTRY
)
MODEL_REQUESTS = Counter(
    "fisk_chatops_model_requests_total", "Messages API requests, by outcome", ["outcome"], registry=REGISTRY
)
MODEL_TOKENS = Counter(
    "fisk_chatops_model_tokens_total", "Tokens used, by kind (input, output, cache_read, cache_write)", ["kind"],
    registry=REGISTRY,
)
ALERT_DELIVERIES = Counter(
    "fisk_chatops_alert_deliveries_total",
    "Alert deliveries, by source and answer (new, repeat, resolved, ignored, refused_401, malformed_400, ...)",
    ["source", "outcome"], registry=REGISTRY,
)
SLACK_API_ERRORS = Counter(
    "fisk_chatops_slack_api_errors_total", "Slack Web API calls that failed, by method", ["method"],
    registry=REGISTRY,
)
REDIS_POOL_CONNECTIONS = Gauge(
    "fisk_chatops_redis_pool_connections", "Redis connections of this process, by pool and state (in_use, idle)",
    ["pool", "state"], registry=REGISTRY,
)
REDIS_POOL_LIMIT = Gauge(
    "fisk_chatops_redis_pool_max_connections", "The most connections a pool may open", ["pool"], registry=REGISTRY
)
REDIS_POOL_WAITING = Gauge(
    "fisk_chatops_redis_pool_waiting", "Tasks waiting for a free Redis connection, by pool", ["pool"],
    registry=REGISTRY,
)
REDIS_POOL_TIMEOUTS = Counter(
    "fisk_chatops_redis_pool_timeouts_total", "Waits for a Redis connection that timed out (the command failed "
    "and was retried by its caller)", ["pool"], registry=REGISTRY,
)
UNCONFIRMED_WRITES = Counter(
    "fisk_chatops_redis_unconfirmed_writes_total", "Transitions written on the Redis primary that fewer replicas "
    "than redis.durability asks acknowledged in time (approval: the clicker was asked to confirm; claim: given back "
    "unstarted; result: stored again; denial: the denier was told; cancel: logged), by transition", ["transition"],
    registry=REGISTRY,
)
DECISIONS_REFUSED = Counter(
    "fisk_chatops_decisions_refused_total",
    "Approved calls a runner refused to run, by cause (decision: signature missing, wrong, for another call,"
    " expired or replayed; binary: the binary changed since approval)", ["cause"], registry=REGISTRY,
)
STREAM_UNACKNOWLEDGED_AGE = Gauge(
    "fisk_chatops_stream_oldest_unacknowledged_age_seconds", "Age of the oldest stream entry a consumer group"
    " has not acknowledged (0: none). Such entries are never trimmed; this grows while a consumer is down",
    ["stream"], registry=REGISTRY,
)
