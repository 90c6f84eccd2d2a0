"""redis-py's send wrapper per command, and what ``bot.redis_send`` saves: ``python bench/bench_redis_send.py``.

One redis-server on loopback; two clients in this process on it, each the project's pool (``MeteredPool``) with
one connection and redis-py's default 5 s ``socket_timeout``: one with redis-py's own connection class (every send
wrapped in ``asyncio.wait_for``: a Task per send), one with the project's (a send that cannot block written
directly). Rounds alternate the
two; each round times ``--n`` sequential commands of each kind (GET, and an EVALSHA of a small script, which is what
the runner's claim, TAKE and finish are) and prints CPU (``time.process_time``) and wall time per command, then the
medians and their ratio. Also printed: whether a callback scheduled just before a command runs before the command
is on the wire (a Task exists then) or after (none).
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import redis.asyncio as aredis  # noqa: E402

from bench.support import RedisProcess  # noqa: E402
from bot.redis_pool import MeteredPool, PoolSettings, pool_kwargs  # noqa: E402

SCRIPT = "return redis.call('GET', KEYS[1])"


async def per_command(client: aredis.Redis, n: int, kind: str) -> tuple[float, float]:
    script = client.register_script(SCRIPT)
    cpu, wall = time.process_time(), time.perf_counter()
    for _ in range(n):
        if kind == "GET":
            await client.get("k")
        else:
            await script(keys=["k"])
    return (time.process_time() - cpu) / n * 1e6, (time.perf_counter() - wall) / n * 1e6


async def tasks_during_send(client: aredis.Redis) -> int:
    """Tasks alive when a callback scheduled just before a command runs, besides this one."""
    seen: list[int] = []
    asyncio.get_running_loop().call_soon(lambda: seen.append(len(asyncio.all_tasks()) - 1))
    await client.get("k")
    return seen[0]


async def main(args: argparse.Namespace) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        server = RedisProcess(Path(tmp))
        try:
            plain_pool = MeteredPool.from_url(server.url, **pool_kwargs(PoolSettings(max_connections=1, name="b0")))
            plain_pool.connection_class = plain_pool.connection_class.__mro__[2]  # redis-py's own class
            plain = aredis.Redis(connection_pool=plain_pool)
            ours = aredis.Redis(connection_pool=MeteredPool.from_url(
                server.url, **pool_kwargs(PoolSettings(max_connections=1, name="b1"))))
            await plain.set("k", "v")
            for name, client in (("redis-py", plain), ("ours", ours)):
                await per_command(client, 200, "GET")  # warm-up
                print(f"{name}: tasks besides the caller's while a command is being sent: "
                      f"{await tasks_during_send(client)}")
            figures: dict[tuple[str, str], list[tuple[float, float]]] = {}
            for _ in range(args.rounds):
                for kind in ("GET", "EVALSHA"):
                    for name, client in (("redis-py", plain), ("ours", ours)):
                        figures.setdefault((name, kind), []).append(await per_command(client, args.n, kind))
            for kind in ("GET", "EVALSHA"):
                cpu = {name: statistics.median(c for c, _ in figures[(name, kind)]) for name in ("redis-py", "ours")}
                wall = {name: statistics.median(w for _, w in figures[(name, kind)]) for name in ("redis-py", "ours")}
                print(f"{kind:8s} CPU per command: redis-py {cpu['redis-py']:.1f} us, ours {cpu['ours']:.1f} us "
                      f"({cpu['redis-py'] / cpu['ours']:.2f}x); wall: {wall['redis-py']:.1f} us, {wall['ours']:.1f} us "
                      f"({wall['redis-py'] / wall['ours']:.2f}x)")
            await plain.aclose()
            await ours.aclose()
        finally:
            server.stop()


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("-n", type=int, default=2000, help="commands per round and kind")
    parser.add_argument("--rounds", type=int, default=5)
    asyncio.run(main(parser.parse_args()))
