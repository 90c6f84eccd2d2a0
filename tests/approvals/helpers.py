"""Shared helpers of the worker tests: counting executions through a real file side effect."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path
from typing import Any

from bot.approvals.records import CallRecord
from bot.approvals.store import CallStore
from bot.approvals.worker import RunnerWorker
from tests.support.worker_process import append_marker


def executions(marker: Path) -> list[str]:
    return marker.read_text().split() if marker.exists() else []


def marker_executor(marker: Path, sleep: float = 0.0) -> Callable[[CallRecord], Awaitable[dict[str, Any]]]:
    async def executor(record: CallRecord) -> dict[str, Any]:
        append_marker(str(marker), record.id)
        await asyncio.sleep(sleep)
        return {"status": "finished", "exit_code": 0, "output": "ok"}

    return executor


async def wait_until(predicate: Callable[[], Awaitable[bool]], timeout: float = 10.0) -> None:
    deadline = asyncio.get_running_loop().time() + timeout
    while not await predicate():
        if asyncio.get_running_loop().time() > deadline:
            raise AssertionError("condition not reached in time")
        await asyncio.sleep(0.02)


async def all_terminal(store: CallStore, ids: list[str]) -> bool:
    for call_id in ids:
        if not (await store.get(call_id)).terminal:
            return False
    return True


@contextlib.asynccontextmanager
async def running(worker: RunnerWorker) -> AsyncIterator[asyncio.Event]:
    stop = asyncio.Event()
    task = asyncio.create_task(worker.run(stop))
    try:
        yield stop
    finally:
        stop.set()
        await asyncio.wait_for(task, 30)
