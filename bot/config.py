"""Settings from a YAML file plus environment variables, validated by pydantic.

Secrets (Slack tokens, signing secret, Anthropic key, Redis URL) come only from the environment so that a
configuration file can be committed and shared. Every error names the file, the key and the problem.
"""

from __future__ import annotations

import os
import re
import shutil
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from bot.agent.settings import AgentSettings
from bot.approvals.policy import ApprovalPolicy
from bot.config_env import deep_merge, environment_overrides, variable_for
from bot.config_keys import unknown_key_hint

# ConfigError, Secrets and what redis.* says live in pydantic-free modules a runner imports; named here too
from bot.config_secrets import Secrets as Secrets
from bot.config_view import ConfigError as ConfigError
from bot.config_view import durability_settings as durability_settings
from bot.config_view import redis_topology as redis_topology
from bot.fisk.environment import is_credential_name
from bot.incidents.settings import IncidentSettings
from bot.redis_topology import parse_address
from bot.sanitize.redact import compile_operator_pattern
from bot.slack.settings import SlackSettings
from bot.tools.rule_spec import RuleSpec

CONFIG_ENV = "FISK_CHATOPS_CONFIG"


class _Section(BaseModel):
    model_config = ConfigDict(extra="forbid")


class ApplicationConfig(_Section):
    binary: str
    alias: str | None = Field(default=None, pattern=r"^[a-zA-Z0-9_-]{1,30}$")
    include: RuleSpec = Field(default_factory=RuleSpec)
    exclude: RuleSpec = Field(default_factory=RuleSpec)
    global_flags: list[str] = Field(default_factory=list)
    timeout_seconds: float = Field(default=60.0, gt=0)
    working_dir: str | None = None
    env: dict[str, str] = Field(default_factory=dict)
    max_concurrency: int = Field(default=4, ge=1)

    @field_validator("env")
    @classmethod
    def _no_credentials(cls, value: dict[str, str]) -> dict[str, str]:
        # The scrubbing is absolute (DESIGN.md invariant 4): a credential cannot be handed back to a tool here.
        for name in value:
            if is_credential_name(name):
                raise ValueError(f"{name} is one of the bot's credential variables and is never passed to tools")
        return value


_OPTION = re.compile(r"^--?[A-Za-z0-9][\w.-]*$")


class SecretOutputConfig(_Section):
    """``execution.secret_output``: argv shapes whose whole output is a secret's value, ADDED to the built-in ones
    (``bot/sanitize/secret_argv.py``; README "Running one call safely"). There is no way to remove a built-in one."""

    commands: list[str] = Field(default_factory=list, description="word sequences, e.g. 'creds show'")
    field_options: list[str] = Field(default_factory=list, description="options whose value names a field, "
                                     "judged by the secret-name rules, e.g. '-f'")
    query_options: list[str] = Field(default_factory=list, description="options whose value is a path "
                                     "expression, e.g. '--select'")
    reveal_options: list[str] = Field(default_factory=list, description="options that on their own ask for "
                                      "secret values, e.g. '--decrypt'")

    @field_validator("commands")
    @classmethod
    def _words(cls, value: list[str]) -> list[str]:
        for command in value:
            if not command.split() or any(word.startswith("-") for word in command.split()):
                raise ValueError(f"{command!r}: a command is one or more words, no options (put those in "
                                 "field_options, query_options or reveal_options)")
        return value

    @field_validator("field_options", "query_options", "reveal_options")
    @classmethod
    def _options(cls, value: list[str]) -> list[str]:
        for option in value:
            if not _OPTION.match(option):
                raise ValueError(f"{option!r} is not an option: write it with its dashes, e.g. --field or -f")
        return value


class ExecutionConfig(_Section):
    max_timeout_seconds: float = Field(default=600.0, gt=0)
    kill_grace_seconds: float = Field(default=5.0, ge=0)
    output_limit_bytes: int = Field(default=65536, ge=1024)
    redact_patterns: list[str] = Field(default_factory=list)
    secret_output: SecretOutputConfig = Field(default_factory=SecretOutputConfig)

    @field_validator("redact_patterns")
    @classmethod
    def _linear_patterns(cls, value: list[str]) -> list[str]:
        # Compiled now, so a pattern RE2 refuses (lookaround, backreference) stops start-up with its reason
        # instead of failing the first call that produces output.
        for pattern in value:
            try:
                compile_operator_pattern(pattern)
            except re.error as exc:
                raise ValueError(str(exc)) from None
        return value


class RedisTlsConfig(_Section):
    """TLS to the data nodes (a ``rediss://`` URL turns it on too); files are PEM."""

    enabled: bool = False
    ca_file: str | None = None
    cert_file: str | None = Field(default=None, description="client certificate, when the server asks for one")
    key_file: str | None = None


class SentinelConfig(_Section):
    """``redis.mode: sentinel``: where the sentinels are and which primary they watch for us."""

    addresses: list[str] = Field(default_factory=list, description="host:port of each sentinel")
    service_name: str = Field(default="", description="the name the sentinels monitor the primary under")
    username: str | None = Field(default=None, description="ACL user on the sentinels (password: "
                                 "REDIS_SENTINEL_PASSWORD)")
    tls: bool = Field(default=False, description="the sentinels speak TLS too (same files as redis.tls)")

    @field_validator("addresses")
    @classmethod
    def _addresses(cls, value: list[str]) -> list[str]:
        for text in value:
            parse_address(text)
        return value


class DurabilityConfig(_Section):
    """``redis.durability``: approve, claim and finish wait for replicas (``WAIT``) before they count as done."""

    replicas: Literal["auto"] | int = Field(
        default="auto", description="auto: wait for one replica when the primary has any (none: no wait); a "
        "number: wait for that many (0: never wait)")
    timeout_ms: int = Field(default=1000, ge=1, le=60000, description="how long one transition waits for the "
                            "replicas before the user is asked to confirm (or a claim is given back)")
    remember_replica_seconds: float = Field(
        default=300.0, ge=0, description="auto: how long a primary that lost its replica still waits for one (a "
        "disconnected replica may yet be promoted: Sentinel allows 10 x down-after-milliseconds)")

    @field_validator("replicas")
    @classmethod
    def _replicas(cls, value: str | int) -> str | int:
        if isinstance(value, int) and value < 0:
            raise ValueError("replicas must be auto or a number >= 0")
        return value


class RedisConfig(_Section):
    url: str | None = None
    mode: Literal["standalone", "sentinel", "cluster"] = Field(
        default="standalone", description="standalone (one server, REDIS_URL), sentinel or cluster (REDIS_URL: "
        "any node)")
    username: str | None = Field(default=None, description="ACL user on the data nodes (password: REDIS_PASSWORD "
                                 "or in REDIS_URL)")
    tls: RedisTlsConfig = Field(default_factory=RedisTlsConfig)
    sentinel: SentinelConfig = Field(default_factory=SentinelConfig)
    state_dir: str = ".state"
    retention_seconds: int = Field(default=7 * 86400, gt=0)
    shards: int = Field(default=1, ge=1, description="key shards; >= the number of masters on Redis Cluster")
    max_connections: int = Field(
        default=16, ge=1, description="command connections per process; commands wait for a free one"
    )
    pool_timeout_seconds: float = Field(
        default=5.0, gt=0, description="how long a command waits for a free connection before failing (retried)"
    )
    durability: DurabilityConfig = Field(default_factory=DurabilityConfig)

    @model_validator(mode="after")
    def _mode_settings(self) -> RedisConfig:
        if self.mode == "sentinel" and (not self.sentinel.addresses or not self.sentinel.service_name):
            raise ValueError("mode sentinel needs sentinel.addresses and sentinel.service_name")
        if self.mode != "sentinel" and (self.sentinel.addresses or self.sentinel.service_name):
            raise ValueError(f"sentinel.* is set but mode is {self.mode}: set mode: sentinel or remove them")
        return self


class DecisionKeysConfig(_Section):
    """Where the decision keys are (see bot/approvals/decision_keys.py and the README threat model).

    Both empty: ``serve`` with every role in one process (and ``console``) keep a generated key pair in
    ``<redis.state_dir>/keys/``; split roles must name the files.
    """

    signing_key_file: str | None = Field(
        default=None, description="Ed25519 private key (PEM); only where decisions are made: slack, agent"
    )
    public_key_files: list[str] = Field(
        default_factory=list, description="PEM files or directories of public keys the runner accepts"
    )
    valid_seconds: float = Field(default=3600, gt=0, description="an approved call must start within this")


class RunAs(_Section):
    uid: int = Field(ge=0)
    gid: int = Field(ge=0)


class RunnerConfig(_Section):
    run_as: RunAs | None = Field(
        default=None, description="start tools as this uid/gid (the runner needs CAP_SETUID/CAP_SETGID or root)"
    )


class Config(_Section):
    """The whole configuration file."""

    applications: list[ApplicationConfig] = Field(default_factory=list)
    tool_search: bool = True
    sensitive_env_vars: list[str] = Field(default_factory=list)
    execution: ExecutionConfig = Field(default_factory=ExecutionConfig)
    redis: RedisConfig = Field(default_factory=RedisConfig)
    decisions: DecisionKeysConfig = Field(default_factory=DecisionKeysConfig)
    runner: RunnerConfig = Field(default_factory=RunnerConfig)
    approval: ApprovalPolicy = Field(default_factory=ApprovalPolicy)
    agent: AgentSettings = Field(default_factory=AgentSettings)
    slack: SlackSettings = Field(default_factory=SlackSettings)
    incidents: IncidentSettings = Field(default_factory=IncidentSettings)
    shutdown_grace_seconds: float = Field(default=30.0, ge=0, description="SIGTERM: let running calls finish")
    log_level: str = "INFO"
    source: str = Field(default="<defaults>", exclude=True)

    @model_validator(mode="after")
    def _intake_listener(self) -> Config:
        if self.incidents.enabled and self.incidents.listen == "slack" and self.slack.mode != "http":
            raise ValueError("incidents.listen: slack needs slack.mode: http (Socket Mode has no HTTP server); "
                             "use listen: own")
        return self

    @field_validator("sensitive_env_vars")
    @classmethod
    def _names(cls, value: list[str]) -> list[str]:
        for name in value:
            if not name or "=" in name:
                raise ValueError(f"not an environment variable name: {name!r}")
        return value


def _format_validation(path: str, exc: ValidationError, overrides: Mapping[str, Any] | None = None) -> str:
    lines = []
    for err in exc.errors():
        key = ".".join(str(p) for p in err["loc"]) or "<root>"
        variable = variable_for(err["loc"], overrides or {})
        where = f"environment {variable}" if variable else path
        if err["type"] == "extra_forbidden":
            hint = unknown_key_hint(Config, err["loc"])
            lines.append(f"{where}: {key}: unknown key" + (f"; {hint}" if hint else ""))
        else:
            lines.append(f"{where}: {key}: {err['msg']}")
    return "\n".join(lines)


def parse_config(data: Any, source: str = "<config>") -> Config:
    """Validate the file's settings with every ``FISK_CHATOPS__...`` environment override laid on top."""
    if data is None:
        data = {}
    if not isinstance(data, dict):
        raise ConfigError(f"{source}: <root>: expected a mapping of settings, got {type(data).__name__}")
    try:
        overrides = environment_overrides(Config)
    except ValueError as exc:  # a variable naming no key, or a JSON value that does not parse
        raise ConfigError(str(exc)) from None
    try:
        config = Config.model_validate(deep_merge(data, overrides))
    except ValidationError as exc:
        raise ConfigError(_format_validation(source, exc, overrides)) from None
    config.source = source
    return config


class _UniqueKeyLoader(yaml.SafeLoader):
    """``yaml.SafeLoader`` that refuses a key written twice in one mapping. Plain YAML keeps the last one without
    a word, so a setting added above the example's own line for it (``anyone_may_approve: true``) was undone."""

    def construct_mapping(self, node: yaml.MappingNode, deep: bool = False) -> dict[Any, Any]:
        seen: dict[Any, yaml.Node] = {}
        for key_node, _ in node.value:
            if key_node.tag == "tag:yaml.org,2002:merge":
                continue
            key = self.construct_object(key_node, deep=True)
            if isinstance(key, str) and key in seen:
                raise yaml.constructor.ConstructorError(
                    None, None,
                    f"{key!r} is written twice in this mapping (first on line {seen[key].start_mark.line + 1}); "
                    "keep one",
                    key_node.start_mark,
                )  # fmt: skip
            seen[key] = key_node
        return super().construct_mapping(node, deep=deep)


def parse_yaml(text: str) -> Any:
    """The configuration file's YAML as plain data, refusing a key written twice (``yaml.YAMLError``)."""
    return yaml.load(text, Loader=_UniqueKeyLoader)  # a SafeLoader: plain data only


def load_config(path: str | os.PathLike[str] | None = None) -> Config:
    """Load the YAML file at ``path`` (or $FISK_CHATOPS_CONFIG); no file at all means the defaults."""
    chosen = path or os.environ.get(CONFIG_ENV)
    if not chosen:
        return parse_config({}, "<defaults>")
    file = Path(chosen)
    try:
        text = file.read_text(encoding="utf-8")
    except OSError as exc:
        raise ConfigError(f"{file}: cannot read: {exc.strerror}") from None
    try:
        data = parse_yaml(text)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f"line {mark.line + 1}" if mark is not None else "<root>"
        raise ConfigError(f"{file}: {where}: invalid YAML: {getattr(exc, 'problem', exc)}") from None
    config = parse_config(data, str(file))
    base = file.parent
    for app in config.applications:
        if not os.path.isabs(app.binary) and os.sep in app.binary:
            app.binary = str((base / app.binary).resolve())
        elif os.sep not in app.binary:
            # A bare name is looked up on PATH once, here, so introspection, the digest and execution all use one
            # absolute path (never a file of that name in whatever directory the process runs in).
            app.binary = shutil.which(app.binary) or app.binary
    return config


def config_for_binary(binary: str) -> Config:
    """A configuration with one application and nothing else (the CLI's ``--app PATH``)."""
    return parse_config({"applications": [{"binary": str(Path(binary).resolve())}]}, f"--app {binary}")
