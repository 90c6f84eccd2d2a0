"""A runner reads its configuration without pydantic (``bot/config_view.py``): ``bot.config`` validates the file in a
child process (``python -m bot.config_check``) and the runner reads the validated result into plain dataclasses.

The rules live in ``bot.config`` only. These tests hold the two paths together: every field of the runner's view is
``Config``'s field of the same name; both paths accept the same files and read the same values; both refuse the
same files with the same message (the runner's is ``bot.config``'s own); ``serve --role runner`` says what is wrong
with a bad file and exits 2; and a runner process never imports pydantic.
"""

from __future__ import annotations

import dataclasses
import json
import os
import subprocess
import sys
import types
import typing
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest
from pydantic import BaseModel

from bot.config import Config, ConfigError, load_config
from bot.config_view import RunnerConfig, full_config, load_runner_config, runner_config_from

ROOT = Path(__file__).resolve().parents[1]
EXAMPLE = ROOT / "config" / "fisk-chatops.yaml"

#: Files both paths accept: the example configuration, the defaults, and every runner section written out.
VALID = {
    "defaults": "applications: [{binary: /bin/true}]\n",
    "every runner section": """
applications:
  - binary: /bin/true
    alias: ops
    include: {tools: ['^service_'], tags: ['ai:readonly', '']}
    exclude: {tools: [restart]}
    global_flags: [context]
    timeout_seconds: 12.5
    working_dir: /tmp
    env: {TZ: UTC}
    max_concurrency: 2
  - binary: /bin/echo
sensitive_env_vars: [MY_TOKEN]
execution:
  max_timeout_seconds: 30
  kill_grace_seconds: 0
  output_limit_bytes: 2048
  redact_patterns: ['ACME-\\d{8}']
  secret_output: {commands: ['creds show'], field_options: [-f], query_options: [--select], reveal_options: [-d]}
redis:
  mode: sentinel
  username: bot
  tls: {enabled: true, ca_file: /ca.pem, cert_file: /c.pem, key_file: /k.pem}
  sentinel: {addresses: ['s1:26379', 's2:26379'], service_name: mymaster, username: sent, tls: true}
  state_dir: /var/lib/fc
  retention_seconds: 3600
  shards: 3
  max_connections: 5
  pool_timeout_seconds: 1.5
  durability: {replicas: 2, timeout_ms: 250, remember_replica_seconds: 0}
decisions: {public_key_files: [/keys/a.pub, /keys/b.pub], valid_seconds: 60}
runner: {run_as: {uid: 1000, gid: 1000}}
approval: {expire_after_seconds: 120}
shutdown_grace_seconds: 0
log_level: DEBUG
""",
    "cluster, automatic durability": "applications: [{binary: /bin/true}]\nredis: {mode: cluster, url: "
                                     "'redis://n1:7000/0'}\n",
}

#: Files both paths refuse, and what the message must say (it is the same message on both paths).
INVALID = {
    "a runner setting out of range": ("redis: {shards: 0}\n",
                                      "redis.shards: Input should be greater than or equal to 1"),
    "a negative timeout": ("applications: [{binary: /x, timeout_seconds: -1}]\n",
                           "applications.0.timeout_seconds: Input should be greater than 0"),
    "a mistyped key": ("applications: [{binary: /x, timeout_second: 3}]\n",
                       "applications.0.timeout_second: unknown key; did you mean 'timeout_seconds'?"),
    "sections that disagree": ("redis: {mode: sentinel}\n",
                               "mode sentinel needs sentinel.addresses and sentinel.service_name"),
    "another role's section": ("slack: {mode: pigeon}\n", "slack.mode: Input should be"),
    "a pattern RE2 refuses": ("execution: {redact_patterns: ['(?=x)']}\n", "execution.redact_patterns"),
    "a credential handed to a tool": ("applications: [{binary: /x, env: {SLACK_BOT_TOKEN: x}}]\n",
                                      "SLACK_BOT_TOKEN is one of the bot's credential variables"),
    "invalid YAML": ("applications: [\n", "invalid YAML"),
    "a key written twice": ("log_level: INFO\nlog_level: DEBUG\n", "'log_level' is written twice"),
}


def _expected_view(kind: Any, value: Any) -> Any:
    """What the runner's view should hold, read from the pydantic configuration attribute by attribute."""
    origin = typing.get_origin(kind)
    if isinstance(kind, type) and dataclasses.is_dataclass(kind):
        hints = typing.get_type_hints(kind)
        return kind(**{f.name: _expected_view(hints[f.name], getattr(value, f.name)) for f in dataclasses.fields(kind)})
    if origin in (types.UnionType, typing.Union):
        args = [a for a in typing.get_args(kind) if a is not type(None)]
        nested = next((a for a in args if isinstance(a, type) and dataclasses.is_dataclass(a)), None)
        return None if value is None else _expected_view(nested, value) if nested else value
    if origin is tuple:
        return tuple(_expected_view(typing.get_args(kind)[0], v) for v in value)
    return dict(value) if origin is dict else value


def _pydantic_type(annotation: Any) -> type[BaseModel] | None:
    for candidate in (annotation, *typing.get_args(annotation)):
        if isinstance(candidate, type) and issubclass(candidate, BaseModel):
            return candidate
    return None


def test_every_field_of_the_runners_view_is_the_configurations_field_of_that_name() -> None:
    """The view adds no setting of its own: each field, at every depth, names a field of ``Config``'s model."""

    def walk(view: type, model: type[BaseModel], where: str) -> int:
        hints, checked = typing.get_type_hints(view), 0
        for spec in dataclasses.fields(view):
            if spec.name == "source":  # not a setting: the file's name, for messages
                continue
            assert spec.name in model.model_fields, f"{where}{spec.name} is not a field of {model.__name__}"
            checked += 1
            nested_view = next((a for a in (hints[spec.name], *typing.get_args(hints[spec.name]))
                                if isinstance(a, type) and dataclasses.is_dataclass(a)), None)
            if nested_view is not None:
                nested_model = _pydantic_type(model.model_fields[spec.name].annotation)
                assert nested_model is not None, f"{where}{spec.name} is a section in the view only"
                checked += walk(nested_view, nested_model, f"{where}{spec.name}.")
        return checked

    assert walk(RunnerConfig, Config, "") > 40


def _write(tmp_path: Path, name: str, text: str) -> Path:
    path = tmp_path / f"{name.replace(' ', '-').replace(',', '')}.yaml"
    path.write_text(text)
    return path


def _both(path: Path) -> tuple[Any, Any]:
    """(what ``load_config`` gives, what a runner's ``load_runner_config`` gives): a value or the ConfigError."""
    results: list[Any] = []
    for load in (load_config, load_runner_config):
        try:
            results.append(load(path))
        except ConfigError as exc:
            results.append(exc)
    return results[0], results[1]


def test_both_paths_accept_the_same_files_and_read_the_same_values(tmp_path: Path) -> None:
    paths = [EXAMPLE, *(_write(tmp_path, name, text) for name, text in VALID.items())]
    with ThreadPoolExecutor(4) as pool:  # each runner path is a child interpreter: side by side
        pairs = list(pool.map(_both, paths))
    for path, (whole, view) in zip(paths, pairs, strict=True):
        assert isinstance(whole, Config) and isinstance(view, RunnerConfig), (path, whole, view)
        assert view == _expected_view(RunnerConfig, whole), path
    every = pairs[2][1]
    assert every.redis.durability.replicas == 2 and every.runner.run_as is not None
    assert every.applications[0].include.build("x").tags == ("ai:readonly", "")
    assert pairs[3][1].redis.durability.replicas == "auto"


def test_both_paths_refuse_the_same_files_with_the_same_message(tmp_path: Path) -> None:
    paths = {name: _write(tmp_path, name, text) for name, (text, _) in INVALID.items()}
    paths["a missing file"] = tmp_path / "missing.yaml"
    with ThreadPoolExecutor(4) as pool:
        pairs = dict(zip(paths, pool.map(_both, paths.values()), strict=True))
    for name, (whole, view) in pairs.items():
        assert isinstance(whole, ConfigError) and isinstance(view, ConfigError), (name, whole, view)
        assert str(view) == str(whole), name
        assert str(paths[name]) in str(view), name
        if name in INVALID:
            assert INVALID[name][1] in str(view), (name, str(view))


def test_environment_overrides_reach_both_paths(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = _write(tmp_path, "plain", VALID["defaults"])
    monkeypatch.setenv("FISK_CHATOPS__REDIS__SHARDS", "4")
    whole, view = _both(path)
    assert whole.redis.shards == view.redis.shards == 4
    monkeypatch.setenv("FISK_CHATOPS__REDIS__SHARDS", "0")
    whole, view = _both(path)
    assert isinstance(view, ConfigError) and str(view) == str(whole)
    assert "environment FISK_CHATOPS__REDIS__SHARDS: redis.shards" in str(view)


def test_a_view_cannot_start_the_other_roles_and_an_unreadable_result_is_an_error() -> None:
    view = runner_config_from(json.loads(
        subprocess.run([sys.executable, "-m", "bot.config_check", str(EXAMPLE)], capture_output=True, text=True,
                       cwd=ROOT, check=True, timeout=60).stdout))
    with pytest.raises(ConfigError, match="the agent role needs the whole configuration"):
        full_config(view, "the agent role")
    with pytest.raises(ConfigError, match="the validated configuration cannot be read"):
        runner_config_from({"applications": []})


def test_serve_role_runner_names_what_is_wrong_and_exits_2(tmp_path: Path) -> None:
    path = _write(tmp_path, "bad", INVALID["a runner setting out of range"][0])
    env = {k: v for k, v in os.environ.items() if not k.startswith("FISK_CHATOPS")}
    done = subprocess.run([sys.executable, "-m", "bot.cli", "serve", "--role", "runner", "--config", str(path),
                           "--health-port", "0"], capture_output=True, text=True, timeout=60, cwd=ROOT,
                          env={**env, "REDIS_URL": "redis://127.0.0.1:1/0"})
    assert done.returncode == 2
    assert done.stderr.strip() == (f"fisk-chatops: error: {path}: redis.shards: Input should be greater than or "
                                   "equal to 1")


RUNNER_PROBE = """
import asyncio, json, os, sys, tempfile
config = os.path.join(tempfile.mkdtemp(), "config.yaml")
with open(config, "w") as f:
    json.dump({"applications": [{"binary": "/bin/true"}]}, f)
asyncio.run = lambda coroutine, **_: coroutine.close()  # everything `serve` imports before its event loop runs
import bot.cli
assert bot.cli.main(["serve", "--config", config, "--role", "runner"]) == 0
import bot.roles.workers, bot.approvals.execution, bot.health, bot.memory  # what the running role imports
print(",".join(sorted(m for m in sys.modules if m.split(".")[0] in {"pydantic", "pydantic_core", "yaml"})))
"""


def test_serve_role_runner_imports_no_pydantic() -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("FISK_CHATOPS")}
    done = subprocess.run([sys.executable, "-c", RUNNER_PROBE], capture_output=True, text=True, cwd=ROOT,
                          timeout=60, env=env)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == ""


def setting_paths(model: type[BaseModel], prefix: str = "") -> list[str]:
    """Every setting of ``model`` as a dotted path, nested models walked (a list's item model too)."""
    paths = []
    for name, field in model.model_fields.items():
        paths.append(prefix + name)
        for kind in typing.get_args(field.annotation) or (field.annotation,):
            for inner in typing.get_args(kind) or (kind,):
                if isinstance(inner, type) and issubclass(inner, BaseModel):
                    paths += setting_paths(inner, f"{prefix}{name}.")
    return paths


def test_the_example_configuration_names_every_setting() -> None:
    """The README calls config/fisk-chatops.yaml a complete commented example: each setting appears, as a key or a
    commented line, so an operator finds it there."""
    text = EXAMPLE.read_text()
    missing = [path for path in setting_paths(Config)
               if f"{path.rsplit('.', 1)[-1]}:" not in text and f"{{{path.rsplit('.', 1)[-1]}," not in text]
    assert missing == []
