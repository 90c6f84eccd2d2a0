"""A runner's configuration: the sections it reads, from a configuration ``bot.config`` has already validated.

A runner process imports no pydantic (its import and schema machinery are ~9 MiB of a runner's RSS: README, runner
RSS). It does not validate the file itself either: ``load_runner_config`` runs ``python -m bot.config_check`` (the
same pydantic models, rules and error messages as every other role, in a child process that exits) and reads
what that child prints, the validated configuration with its defaults filled in, into the frozen dataclasses
below. They hold names and types only, no rule: a rule written here could drift from ``bot.config``'s, and
``tests/test_config_view.py`` checks that every field below is the pydantic model's field of the same name and
reads the same value, and that both paths accept and refuse the same files with the same message.

Also here, because every role uses them and a runner must reach them without ``bot.config``: ``ConfigError``,
and what ``redis.*`` says about reaching Redis (``redis_topology``, ``durability_settings``).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import types
import typing
from collections.abc import Mapping
from dataclasses import dataclass, field, fields, is_dataclass
from typing import TYPE_CHECKING, Any, Literal, TypeAlias

from bot.config_secrets import Secrets
from bot.redis_durable import DurabilitySettings
from bot.redis_topology import RedisTopology, parse_address
from bot.tools.selection import Rule

if TYPE_CHECKING:
    from bot.config import Config

#: How long the validating child may take (a cold interpreter importing pydantic: about a second).
CHECK_TIMEOUT_SECONDS = 60.0


class ConfigError(ValueError):
    """A configuration problem, with the file, key and problem in the message."""


@dataclass(frozen=True)
class RuleView:
    tools: tuple[str, ...] = ()
    tags: tuple[str, ...] = ()

    def build(self, label: str) -> Rule:
        return Rule.build(self.tools, self.tags, label)


@dataclass(frozen=True)
class ApplicationView:
    binary: str
    alias: str | None = None
    include: RuleView = RuleView()
    exclude: RuleView = RuleView()
    global_flags: tuple[str, ...] = ()
    timeout_seconds: float = 60.0
    working_dir: str | None = None
    env: dict[str, str] = field(default_factory=dict)
    max_concurrency: int = 4


@dataclass(frozen=True)
class SecretOutputView:
    commands: tuple[str, ...] = ()
    field_options: tuple[str, ...] = ()
    query_options: tuple[str, ...] = ()
    reveal_options: tuple[str, ...] = ()


@dataclass(frozen=True)
class ExecutionView:
    max_timeout_seconds: float
    kill_grace_seconds: float
    output_limit_bytes: int
    redact_patterns: tuple[str, ...]
    secret_output: SecretOutputView


@dataclass(frozen=True)
class RedisTlsView:
    enabled: bool
    ca_file: str | None
    cert_file: str | None
    key_file: str | None


@dataclass(frozen=True)
class SentinelView:
    addresses: tuple[str, ...]
    service_name: str
    username: str | None
    tls: bool


@dataclass(frozen=True)
class DurabilityView:
    replicas: Literal["auto"] | int
    timeout_ms: int
    remember_replica_seconds: float


@dataclass(frozen=True)
class RedisView:
    url: str | None
    mode: Literal["standalone", "sentinel", "cluster"]
    username: str | None
    tls: RedisTlsView
    sentinel: SentinelView
    state_dir: str
    retention_seconds: int
    shards: int
    max_connections: int
    pool_timeout_seconds: float
    durability: DurabilityView


@dataclass(frozen=True)
class DecisionKeysView:
    signing_key_file: str | None
    public_key_files: tuple[str, ...]
    valid_seconds: float


@dataclass(frozen=True)
class RunAsView:
    uid: int
    gid: int


@dataclass(frozen=True)
class RunnerView:
    run_as: RunAsView | None


@dataclass(frozen=True)
class ApprovalView:
    expire_after_seconds: float  # a runner's queue metrics date a pending call's proposal from its expiry


@dataclass(frozen=True)
class RunnerConfig:
    """The sections of the configuration a ``serve --role runner`` process reads (``Config``'s names)."""

    applications: tuple[ApplicationView, ...]
    sensitive_env_vars: tuple[str, ...]
    execution: ExecutionView
    redis: RedisView
    decisions: DecisionKeysView
    runner: RunnerView
    approval: ApprovalView
    shutdown_grace_seconds: float
    log_level: str
    source: str


#: What the code every role shares reads: the whole configuration, or a runner's part of it.
AnyConfig: TypeAlias = "Config | RunnerConfig"


def _read(kind: Any, value: Any, where: str) -> Any:
    """``value`` (validated JSON) as ``kind``: dataclasses field by field, sequences as tuples. No checks beyond
    the shape: the values were validated by ``bot.config`` before they were printed."""
    origin = typing.get_origin(kind)
    if isinstance(kind, type) and is_dataclass(kind):
        if not isinstance(value, Mapping):
            raise ConfigError(f"{where}: the validated configuration has no section here")
        hints = typing.get_type_hints(kind)
        return kind(**{spec.name: _read(hints[spec.name], value[spec.name], f"{where}.{spec.name}")
                       for spec in fields(kind) if spec.name in value})
    if origin in (types.UnionType, typing.Union):
        if value is None:
            return None
        chosen = [arg for arg in typing.get_args(kind) if arg is not type(None)]
        dataclass_arg = next((arg for arg in chosen if isinstance(arg, type) and is_dataclass(arg)), None)
        return _read(dataclass_arg, value, where) if dataclass_arg is not None else value
    if origin is tuple:
        (item, _) = typing.get_args(kind)
        return tuple(_read(item, v, f"{where}[{i}]") for i, v in enumerate(value))
    if origin is dict:
        return dict(value)
    return value


def runner_config_from(validated: Mapping[str, Any]) -> RunnerConfig:
    """The runner's part of a configuration validated by ``bot.config`` and printed as JSON
    (``bot.config_check``)."""
    try:
        config: RunnerConfig = _read(RunnerConfig, validated, "<config>")
    except (KeyError, TypeError, ValueError) as exc:
        raise ConfigError(f"the validated configuration cannot be read ({exc!r}); is bot.config_check from "
                          "this version?") from None
    return config


#: The directory this ``bot`` package was imported from, and the child's start: ``-P`` (not ``-m``) keeps the working
#: directory off the child's sys.path (``python -m`` puts it first: a ``bot`` package a tool wrote into a runner's
#: working directory would run with the runner's credentials, or another checkout's would validate the file), and
#: the child looks where this process found ``bot`` first when that is no entry of its own path (a runner started
#: as ``python -m bot.cli`` in a source tree), so it validates with this very code.
_PACKAGE_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
_CHECK = ("import sys; root = sys.argv.pop(1); sys.path[:0] = [] if root in sys.path else [root]; "
          "from bot.config_check import main; sys.exit(main(sys.argv[1:]))")


def load_runner_config(path: str | os.PathLike[str] | None = None) -> RunnerConfig:
    """Load and validate the file at ``path`` (or $FISK_CHATOPS_CONFIG) as every role does, in a child
    process, and read the runner's part of the result; ConfigError (the validation's own message) when the
    file is refused."""
    command = [sys.executable, "-P", "-c", _CHECK, _PACKAGE_ROOT, *([os.fspath(path)] if path else [])]
    try:
        done = subprocess.run(command, capture_output=True, text=True, timeout=CHECK_TIMEOUT_SECONDS,
                              stdin=subprocess.DEVNULL, check=False)
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise ConfigError(f"validating the configuration failed: {exc}") from None
    if done.returncode != 0:
        # (a process profiled with PYTHONPROFILEIMPORTTIME passes it on: its child's import lines are not the message)
        problem = "\n".join(line for line in done.stderr.splitlines() if not line.startswith("import time:"))
        message = problem.strip() or f"the validating process exited with {done.returncode}"
        raise ConfigError(message.removeprefix("fisk-chatops: error: "))
    try:
        validated = json.loads(done.stdout)
    except ValueError:
        raise ConfigError(f"validating the configuration printed no configuration: {done.stdout[:200]!r}") from None
    return runner_config_from(validated)


def durability_settings(config: AnyConfig) -> DurabilitySettings:
    """``redis.durability`` as the store takes it (auto: None)."""
    section = config.redis.durability
    replicas = None if section.replicas == "auto" else int(section.replicas)
    return DurabilitySettings(replicas=replicas, timeout_ms=section.timeout_ms,
                              remember_replica_seconds=section.remember_replica_seconds)


def redis_topology(config: AnyConfig, secrets: Secrets | None = None) -> RedisTopology:
    """What ``redis.*`` and the REDIS_* environment say about how to reach Redis (beyond REDIS_URL)."""
    secrets = secrets or Secrets()
    section = config.redis
    return RedisTopology(
        mode=section.mode,
        sentinels=tuple(parse_address(a) for a in section.sentinel.addresses),
        service_name=section.sentinel.service_name,
        username=section.username,
        sentinel_username=section.sentinel.username,
        password=secrets.redis_password or None,
        sentinel_password=secrets.redis_sentinel_password or None,
        tls=section.tls.enabled,
        sentinel_tls=section.sentinel.tls,
        tls_ca_file=section.tls.ca_file,
        tls_cert_file=section.tls.cert_file,
        tls_key_file=section.tls.key_file,
    )


def full_config(config: AnyConfig, needed_by: str) -> Config:
    """``config`` when it is the whole configuration; a runner's part cannot start ``needed_by``."""
    if isinstance(config, RunnerConfig):
        raise ConfigError(f"{needed_by} needs the whole configuration; this process read a runner's part only")
    return config
