"""The approval lifecycle tests again, on a real Redis Cluster (3 primaries + 3 replicas) with 3 key shards.

Every test of the store, claim retries (nonces), the runner worker, cancellation and completion events is
``redis`` fixture pointing at the cluster (the tests build stores and consumers with one
shard). A Lua script or a read whose keys span hash slots fails there: redis-py's
cluster client refuses a script whose keys map to several slots before sending it, and the server answers
CROSSSLOT to a multi-key command. So these passing is the proof that every transition touches one slot.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from redis.asyncio import Redis

from bot.approvals.store import CallStore
from tests.approvals.test_cancel import *  # noqa: F403
from tests.approvals.test_claim_nonce import *  # noqa: F403
from tests.approvals.test_events import *  # noqa: F403
from tests.approvals.test_layout import *  # noqa: F403
from tests.approvals.test_queue_depth import *  # noqa: F403
from tests.approvals.test_store import *  # noqa: F403
from tests.approvals.test_worker import *  # noqa: F403
from tests.support import decision_keys
from tests.support.redis_topologies import RedisClusterServers
from tests.support.topology_clients import open_on


@pytest.fixture
async def redis(redis_cluster: RedisClusterServers, tmp_path: Path) -> AsyncIterator[Redis]:
    handle = await open_on("cluster", redis_cluster, tmp_path)
    yield handle.client
    await handle.close()


@pytest.fixture
def store(redis: Redis) -> CallStore:
    return CallStore(redis, heartbeat_ttl=1.0, signer=decision_keys.signer())


# These two start a separate worker process given the standalone server's URL (tests/support/worker_process.py);
# they are about process death, not key layout, and run against the standalone server in test_worker.py.
del test_worker_killed_after_read_before_claim_call_runs_once  # noqa: F821
del test_worker_killed_during_execution_becomes_interrupted_never_rerun  # noqa: F821
