"""Real multi-server Redis deployments for tests, from the bundled ``redis-server`` binary alone.

* :class:`RedisClusterServers`: a Redis Cluster of 3 primaries + 3 replicas, formed with plain commands
  (``CLUSTER ADDSLOTS``, ``CLUSTER MEET``, ``CLUSTER REPLICATE``) so no ``redis-cli`` is needed;
* :class:`RedisSentinelServers`: 1 primary + 1 replica watched by 3 sentinels (``redis-server --sentinel``).

Both start in about a second and are meant to be started once per test session. Both can ``kill -9`` a
primary (:meth:`kill_primary`) for failover tests.
"""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import subprocess
import time
from collections.abc import Callable
from pathlib import Path

import redis

from bot.redis_embedded import die_with_parent, redis_server_binary
from tests.support.redis_server import free_port

SLOTS = 16384


def _wait(predicate: Callable[[], bool], timeout: float, what: str) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            if predicate():
                return
        except (redis.RedisError, OSError):
            pass
        time.sleep(0.05)
    raise RuntimeError(f"timed out after {timeout:g}s waiting for {what}")


def cluster_port() -> int:
    """A free port whose cluster bus port (+10000) is free too (so at most 55535)."""
    for _ in range(200):
        port = free_port()
        if port <= 55535:
            with socket.socket() as bus:
                try:
                    bus.bind(("127.0.0.1", port + 10000))
                except OSError:
                    continue
            return port
    raise RuntimeError("no free port pair for a cluster node")


def _answers(port: int) -> bool:
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=0.2) as s:
            s.sendall(b"PING\r\n")
            return s.recv(64).startswith((b"+PONG", b"-NOAUTH"))
    except OSError:
        return False


class _Node:
    """One redis-server process on a loopback port."""

    def __init__(self, directory: Path, extra: list[str], sentinel: bool = False, cluster: bool = False) -> None:
        self.port = cluster_port() if cluster else free_port()
        self.directory = directory
        self.extra = extra
        self.sentinel = sentinel
        self.process: subprocess.Popen[bytes] | None = None

    def start(self) -> None:
        self.directory.mkdir(parents=True, exist_ok=True)
        if self.sentinel:
            conf = self.directory / "sentinel.conf"
            conf.write_text(f"port {self.port}\nbind 127.0.0.1\ndir {self.directory}\n" + "\n".join(self.extra) + "\n")
            args = [redis_server_binary(), str(conf), "--sentinel"]
        else:
            args = [
                redis_server_binary(), "--port", str(self.port), "--bind", "127.0.0.1", "--dir", str(self.directory),
                "--save", "", "--appendonly", "yes", "--appendfsync", "everysec", "--daemonize", "no", *self.extra,
            ]  # fmt: skip
        log = open(self.directory / "server.log", "ab")  # noqa: SIM115 (the child keeps it)
        # die with the test process even when it is killed (a timed-out run must not leave servers behind)
        self.process = subprocess.Popen(args, stdout=log, stderr=subprocess.STDOUT, start_new_session=True,
                                        preexec_fn=die_with_parent(signal.SIGKILL))
        log.close()

    def wait_up(self, timeout: float = 10.0) -> None:
        _wait(lambda: _answers(self.port), timeout, f"redis-server on port {self.port}")

    def kill(self) -> None:
        """``kill -9``: no AOF flush, no goodbye to the replicas."""
        if self.process is not None and self.process.poll() is None:
            os.kill(self.process.pid, signal.SIGKILL)
            self.process.wait(10)

    def stop(self, timeout: float = 10.0) -> None:
        """SIGTERM, repeated until it exits: a replica that has just synced is writing its first AOF, and Redis 6.2
        refuses a SIGTERM then ("Writing initial AOF, can't exit.") and does not retry it, so a single SIGTERM
        cost a 10 s wait for the SIGKILL. SIGKILL only if it still has not exited after ``timeout``."""
        if self.process is None:
            return
        deadline = time.monotonic() + timeout
        while self.process.poll() is None and time.monotonic() < deadline:
            self.process.terminate()
            with contextlib.suppress(subprocess.TimeoutExpired):
                self.process.wait(0.2)
        if self.process.poll() is None:
            self.process.kill()
            self.process.wait(10)

    @property
    def alive(self) -> bool:
        return self.process is not None and self.process.poll() is None

    def client(self, password: str | None = None) -> redis.Redis:
        return redis.Redis(host="127.0.0.1", port=self.port, password=password, socket_timeout=5)


class RedisClusterServers:
    """3 primaries (slots split in three) + 1 replica each, all on loopback ports."""

    def __init__(self, directory: Path, password: str | None = None) -> None:
        auth = ["--requirepass", password, "--masterauth", password] if password else []
        self.password = password
        self.nodes = [
            _Node(directory / f"node{i}", [
                "--cluster-enabled", "yes", "--cluster-config-file", "nodes.conf",
                "--cluster-node-timeout", "1000", "--cluster-replica-validity-factor", "0", *auth,
            ], cluster=True) for i in range(6)
        ]  # fmt: skip

    @property
    def primaries(self) -> list[_Node]:
        return self.nodes[:3]

    @property
    def url(self) -> str:
        auth = f":{self.password}@" if self.password else ""
        return f"redis://{auth}127.0.0.1:{self.nodes[0].port}"

    def start(self, timeout: float = 20.0) -> None:
        for node in self.nodes:
            node.start()
        for node in self.nodes:
            node.wait_up()
        clients = [node.client(self.password) for node in self.nodes]
        try:
            ranges = [(0, 5460), (5461, 10922), (10923, SLOTS - 1)]
            for client, (first, last) in zip(clients[:3], ranges, strict=True):
                client.execute_command("CLUSTER ADDSLOTS", *range(first, last + 1))
            for node in self.nodes[1:]:
                clients[0].execute_command("CLUSTER MEET", "127.0.0.1", node.port)
            ids = [c.execute_command("CLUSTER MYID").decode() for c in clients]
            _wait(lambda: all(_known(c) >= 6 for c in clients), timeout, "every cluster node to know the others")
            for replica, primary_id in zip(clients[3:], ids[:3], strict=True):
                replica.execute_command("CLUSTER REPLICATE", primary_id)
            _wait(lambda: all(_cluster_ok(c) for c in clients), timeout, "cluster_state:ok on every node")
            _wait(lambda: all(_replicas_synced(c) for c in clients[:3]), timeout, "replicas in sync")
        finally:
            for client in clients:
                client.close()

    def stop(self) -> None:
        for node in self.nodes:
            node.stop()

    def primary_of_key(self, key: str) -> _Node:
        """The node that serves ``key`` now (after a failover, the promoted replica)."""
        with self.nodes[0].client(self.password) if self.nodes[0].alive else self._any_alive() as client:
            slot = int(client.execute_command("CLUSTER KEYSLOT", key))
            for (first, last), owners in _slot_table(client).items():
                if first <= slot <= last:
                    return next(n for n in self.nodes if n.port == owners)
        raise RuntimeError(f"no node serves {key!r}")

    def _any_alive(self) -> redis.Redis:
        return next(n for n in self.nodes if n.alive).client(self.password)

    def wait_healthy(self, timeout: float = 20.0) -> None:
        """Every live node reports ``cluster_state:ok`` (after a failover: the replica took over)."""

        def ok() -> bool:
            for node in self.nodes:
                if node.alive:
                    with node.client(self.password) as client:
                        if not _cluster_ok(client):
                            return False
            return True

        _wait(ok, timeout, "cluster_state:ok after failover")


def _known(client: redis.Redis) -> int:
    nodes = client.execute_command("CLUSTER NODES")  # redis-py parses it into {address: fields}
    return len(nodes) if isinstance(nodes, dict) else len(_text(nodes).strip().splitlines())


def _cluster_ok(client: redis.Redis) -> bool:
    info = client.execute_command("CLUSTER INFO")
    return _text(info.get("cluster_state")) == "ok" if isinstance(info, dict) else "cluster_state:ok" in _text(info)


def _slot_table(client: redis.Redis) -> dict[tuple[int, int], int]:
    """{(first slot, last slot): port of the primary serving them}."""
    table = client.execute_command("CLUSTER SLOTS")
    if isinstance(table, dict):  # redis-py parses it into {(first, last): {"primary": (host, port), ...}}
        return {(int(a), int(b)): int(v["primary"][1]) for (a, b), v in table.items()}
    return {(int(row[0]), int(row[1])): int(row[2][1]) for row in table}


def _replicas_synced(client: redis.Redis) -> bool:
    info = client.info("replication")
    return int(info.get("connected_slaves", 0)) >= 1 and "online" in str(info.get("slave0", ""))


class RedisSentinelServers:
    """1 primary + 1 replica, watched by 3 sentinels that agree (quorum 2) on failovers after ~1 s."""

    SERVICE = "fisk"

    def __init__(self, directory: Path, password: str | None = None, sentinel_password: str | None = None) -> None:
        auth = ["--requirepass", password, "--masterauth", password] if password else []
        self.password = password
        self.sentinel_password = sentinel_password
        self.primary = _Node(directory / "primary", list(auth))
        self.replica = _Node(directory / "replica", list(auth))
        self.sentinels: list[_Node] = []
        self.directory = directory

    @property
    def data_nodes(self) -> list[_Node]:
        return [self.primary, self.replica]

    @property
    def sentinel_addresses(self) -> list[tuple[str, int]]:
        return [("127.0.0.1", s.port) for s in self.sentinels]

    def start(self, timeout: float = 20.0) -> None:
        self.primary.start()
        self.primary.wait_up()
        self.replica.extra += ["--replicaof", "127.0.0.1", str(self.primary.port)]
        self.replica.start()
        self.replica.wait_up()
        lines = [
            f"sentinel monitor {self.SERVICE} 127.0.0.1 {self.primary.port} 2",
            f"sentinel down-after-milliseconds {self.SERVICE} 1000",
            f"sentinel failover-timeout {self.SERVICE} 5000",
            f"sentinel parallel-syncs {self.SERVICE} 1",
        ]
        if self.password:
            lines.append(f"sentinel auth-pass {self.SERVICE} {self.password}")
        if self.sentinel_password:
            lines.append(f"requirepass {self.sentinel_password}")
            lines.append(f"sentinel sentinel-pass {self.sentinel_password}")
        self.sentinels = [_Node(self.directory / f"sentinel{i}", lines, sentinel=True) for i in range(3)]
        for node in self.sentinels:
            node.start()
        for node in self.sentinels:
            node.wait_up()
        with self.primary.client(self.password) as client:
            _wait(lambda: _replicas_synced(client), timeout, "the replica in sync")
        _wait(self._sentinels_agree, timeout, "the sentinels to see each other and the replica")

    def _sentinels_agree(self) -> bool:
        for node in self.sentinels:
            with redis.Redis(host="127.0.0.1", port=node.port, password=self.sentinel_password) as s:
                state = s.execute_command("SENTINEL MASTER", self.SERVICE)
                fields = dict(zip(state[::2], state[1::2], strict=True)) if isinstance(state, list) else state
                fields = {_text(k): _text(v) for k, v in fields.items()}
                if int(fields["num-other-sentinels"]) < 2 or int(fields["num-slaves"]) < 1:
                    return False
        return True

    def current_primary(self) -> _Node:
        with redis.Redis(host="127.0.0.1", port=self.sentinels[0].port, password=self.sentinel_password) as s:
            _host, port = s.execute_command("SENTINEL GET-MASTER-ADDR-BY-NAME", self.SERVICE)
        return next(n for n in self.data_nodes if n.port == int(port))

    def stop(self) -> None:
        for node in [*self.sentinels, *self.data_nodes]:
            node.stop()


def _text(value: object) -> str:
    return value.decode() if isinstance(value, bytes) else str(value)
