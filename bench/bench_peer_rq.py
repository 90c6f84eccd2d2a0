"""Our approve -> run path next to RQ on the same job and the same Redis (not a test):
``pip install -e '.[bench]' && python bench/bench_peer_rq.py``.

The job is the compiled bench tool (``bench/support.py``: prints the moment it started), run without a shell:

* ours: ``fisk-chatops serve --role runner`` processes; this process proposes a call and approves it
  (``CallStore``), the runner claims it (atomic approved -> running), executes it through the full approved-call
  path (catalog re-check, argv re-render, scrubbed environment, sanitizing) and records the result
  (completions stream, audit trail);
* RQ: ``rq worker`` processes with ``rq.worker.Worker`` (forks a work horse per job) and
  ``rq.worker.SimpleWorker`` (runs the job in the worker process); this process enqueues ``bench.rq_job.run_tool``.

1. Latency, one job at a time, one idle worker of each kind, samples interleaved (ours, Worker, SimpleWorker,
   ours, ...): approve/enqueue -> child started (the tool's own stamp) and -> result stored (ours: this process
   woken by the completion event; RQ: ``Job.latest_result(timeout=...)``, which blocks on RQ's results stream).
   Medians, p99 and ratios from this one run.
2. Throughput: workers stopped (SIGSTOP), N jobs approved/enqueued, workers continued (SIGCONT), timed until all
   N are done; 1 and 2 worker processes of each kind. Our runner runs up to ``max_concurrency`` calls at once in
   one process, an RQ worker one job at a time, so ours is also measured with ``max_concurrency: 1``.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import redis as sync_redis  # noqa: E402
from rq import Queue  # noqa: E402
from rq.registry import FinishedJobRegistry  # noqa: E402

from bench.bench_approvals import Bench, start_runners  # noqa: E402
from bench.rq_job import run_tool  # noqa: E402
from bench.support import (  # noqa: E402
    ROOT,
    RedisProcess,
    Role,
    build_tool,
    median_ms,
    pct,
    started_at,
    wait_until,
    write_config,
)

RQ_CLASSES = {"RQ Worker": "rq.worker.Worker", "RQ SimpleWorker": "rq.worker.SimpleWorker"}


class RQWorkers:
    """``count`` ``rq worker`` processes of one class on their own queue."""

    def __init__(self, url: str, worker_class: str, queue: str, count: int, logs: Path) -> None:
        self.queue_name = queue
        rq = str(Path(sys.executable).parent / "rq")
        self.processes = []
        for i in range(count):
            log = open(logs / f"{queue}-{i}.log", "wb")  # noqa: SIM115 -- the child keeps it
            self.processes.append(subprocess.Popen(
                [rq, "worker", "--url", url, "--worker-class", worker_class, "--path", str(ROOT),
                 "--logging_level", "WARNING", "--disable-job-desc-logging", "--name", f"{queue}-{i}", queue],
                cwd=ROOT, stdout=log, stderr=subprocess.STDOUT))
            log.close()
        client = sync_redis.Redis.from_url(url)
        wait_until(lambda: sum(1 for w in client.smembers("rq:workers") if queue in w.decode()) >= count, 60,
                   f"{count} {worker_class} ready", 0.1)
        client.close()

    def signal(self, sig: signal.Signals) -> None:
        for process in self.processes:
            os.kill(process.pid, sig)

    def stop(self) -> None:
        for process in self.processes:
            process.send_signal(signal.SIGTERM)
        for process in self.processes:
            try:
                process.wait(20)
            except subprocess.TimeoutExpired:
                process.kill()


def rq_sample(queue: Queue, argv: list[str]) -> tuple[float, float]:
    t0 = time.monotonic()
    job = queue.enqueue(run_tool, argv, result_ttl=600)
    result = job.latest_result(timeout=10)
    finished = time.monotonic()
    if result is None or result.type != result.Type.SUCCESSFUL:
        raise RuntimeError(f"RQ job {job.id} did not succeed: {result and result.exc_string}")
    return started_at(str(result.return_value)) - t0, finished - t0


def rq_throughput(url: str, workers: RQWorkers, argv: list[str], n: int) -> float:
    connection = sync_redis.Redis.from_url(url)
    queue = Queue(workers.queue_name, connection=connection)
    registry = FinishedJobRegistry(queue=queue)
    done_before = registry.count
    workers.signal(signal.SIGSTOP)
    try:
        with connection.pipeline() as pipe:
            for _ in range(n):
                queue.enqueue(run_tool, argv, result_ttl=600, pipeline=pipe)
            pipe.execute()
    finally:
        t0 = time.monotonic()
        workers.signal(signal.SIGCONT)
    wait_until(lambda: registry.count - done_before >= n, 300, f"{n} RQ jobs", 0.005)
    elapsed = time.monotonic() - t0
    connection.close()
    return n / elapsed


def line(label: str, values: list[float], reference: list[float] | None) -> str:
    ratio = f"  {median_ms(values) / median_ms(reference):5.2f}x ours" if reference else ""
    return f"  {label:<22} median {median_ms(values):7.2f} ms  p99 {pct(values, 99) * 1e3:7.2f} ms{ratio}"


async def main(args: argparse.Namespace) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        (work / "logs").mkdir()
        binary = build_tool(work / "bin")
        argv = [str(binary), "auth", "user", "list"]
        server = RedisProcess(work / "redis")
        configs = {}
        for concurrency in (16, 1):
            configs[concurrency] = write_config(work, binary, f"config-{concurrency}.yaml", max_concurrency=concurrency)
        ours = Bench(work, server.url, binary)
        connection = sync_redis.Redis.from_url(server.url)
        roles: list[Role] = []
        pools: list[RQWorkers] = []
        try:
            roles = start_runners(work, configs[16], server.url, 1, "lat")
            rq_latency = {name: RQWorkers(server.url, cls, f"lat{i}", 1, work / "logs")
                          for i, (name, cls) in enumerate(RQ_CLASSES.items())}
            pools += rq_latency.values()
            queues = {name: Queue(w.queue_name, connection=connection) for name, w in rq_latency.items()}
            await ours.latency(10)
            for queue in queues.values():
                for _ in range(10):
                    rq_sample(queue, argv)
            starts: dict[str, list[float]] = {"ours": [], **{name: [] for name in RQ_CLASSES}}
            ends: dict[str, list[float]] = {"ours": [], **{name: [] for name in RQ_CLASSES}}
            for _ in range(args.samples):
                (s, e), = zip(*await ours.latency(1), strict=True)
                starts["ours"].append(s)
                ends["ours"].append(e)
                for name, queue in queues.items():
                    s, e = rq_sample(queue, argv)
                    starts[name].append(s)
                    ends[name].append(e)
            print(f"latency, {args.samples} samples of each, interleaved, one idle worker of each kind:")
            print(" approve/enqueue -> child started")
            for name, values in starts.items():
                print(line("ours" if name == "ours" else name, values, None if name == "ours" else starts["ours"]))
            print(" approve/enqueue -> result stored")
            for name, values in ends.items():
                print(line("ours" if name == "ours" else name, values, None if name == "ours" else ends["ours"]))
            for role in roles:
                role.stop()
            roles = []
            for pool in pools:
                pool.stop()
            pools = []

            print(f"throughput, {args.calls} jobs, workers stopped while they are queued:")
            for count in (1, 2):
                results: dict[str, float] = {}
                for concurrency in (16, 1):
                    runners = start_runners(work, configs[concurrency], server.url, count, f"c{concurrency}n{count}-")
                    roles += runners
                    await ours.throughput(runners, 100)
                    results[f"ours (max_concurrency {concurrency})"] = await ours.throughput(runners, args.calls)
                    for role in runners:
                        role.stop()
                    roles = []
                for i, (name, cls) in enumerate(RQ_CLASSES.items()):
                    workers = RQWorkers(server.url, cls, f"tp{count}{i}", count, work / "logs")
                    pools.append(workers)
                    rq_throughput(server.url, workers, argv, 50)
                    results[name] = rq_throughput(server.url, workers, argv, args.calls)
                    workers.stop()
                    pools.remove(workers)
                reference = results["ours (max_concurrency 16)"]
                for name, rate in results.items():
                    print(f"  {count} worker process(es)  {name:<28} {rate:6.0f} jobs/s  "
                          f"(ours {reference / rate:4.1f}x this)")
        finally:
            for role in roles:
                role.stop()
            for pool in pools:
                pool.stop()
            connection.close()
            await ours.redis.aclose()
            server.stop()
    print("(one redis-server, AOF everysec, shared by both; every job spawns the same compiled tool)")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--samples", type=int, default=200, help="latency samples of each kind")
    parser.add_argument("--calls", type=int, default=1000, help="jobs in each throughput run")
    asyncio.run(main(parser.parse_args()))
