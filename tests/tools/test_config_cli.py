"""Configuration errors name file, key and problem; the CLI works as a new user runs it."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any, get_origin

import pytest
from pydantic import BaseModel

from bot.config import Config, ConfigError, Secrets, load_config
from bot.config_env import environment_overrides
from bot.wiring import load_catalog
from tests.support.fisk_app import make_script

CLI = [sys.executable, "-m", "bot.cli"]


def run_cli(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*CLI, *args], capture_output=True, text=True, timeout=60,
                          env={**os.environ, **(env or {})}, cwd=Path(__file__).resolve().parents[2])


def write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "config.yaml"
    path.write_text(text)
    return path


def test_config_errors_name_file_key_and_problem(tmp_path: Path) -> None:
    path = write(tmp_path, "applications:\n  - binary: /x\n    timeout_seconds: -1\n")
    with pytest.raises(ConfigError) as info:
        load_config(path)
    assert f"{path}: applications.0.timeout_seconds: Input should be greater than 0" in str(info.value)
    path = write(tmp_path, "applications:\n  - binary: /x\n    colour: blue\n")
    with pytest.raises(ConfigError, match=r"applications\.0\.colour: unknown key; valid keys here: alias, binary,"):
        load_config(path)
    path = write(tmp_path, "applications: [\n")
    with pytest.raises(ConfigError, match=r"config.yaml: line \d+: invalid YAML"):
        load_config(path)
    with pytest.raises(ConfigError, match="cannot read"):
        load_config(tmp_path / "missing.yaml")


def test_mistyped_keys_get_did_you_mean_at_every_depth(tmp_path: Path) -> None:
    path = write(tmp_path, "applications: [{binary: /x, timeout_second: 3}]\nagent: {max_token: 5}\n"
                           "slack: {channels: {C1: {includ: {tools: [x]}}}}\ntool_serch: false\n")
    with pytest.raises(ConfigError) as info:
        load_config(path)
    assert str(info.value).splitlines() == [
        f"{path}: applications.0.timeout_second: unknown key; did you mean 'timeout_seconds'?",
        f"{path}: agent.max_token: unknown key; did you mean 'max_tokens'?",
        f"{path}: slack.channels.C1.includ: unknown key; did you mean 'include'?",
        f"{path}: tool_serch: unknown key; did you mean 'tool_search'?",
    ]
    assert "source" not in str(load_config_error(tmp_path, "sourc: x\n"))  # internal fields are not keys


def load_config_error(tmp_path: Path, text: str) -> ConfigError:
    with pytest.raises(ConfigError) as info:
        load_config(write(tmp_path, text))
    return info.value


def test_invalid_rule_regex_names_the_rule(tmp_path: Path, opsctl: Path) -> None:
    path = write(tmp_path, f"applications:\n  - binary: {opsctl}\n    exclude:\n      tools: ['[bad']\n")
    with pytest.raises(ConfigError, match=r"applications\[0\]\.exclude: invalid tool regex '\[bad'"):
        load_catalog(load_config(path))


def test_two_applications_with_alias(tmp_path: Path, opsctl: Path) -> None:
    path = write(tmp_path, f"""
applications:
  - binary: {opsctl}
    include: {{tags: ["impact:ro"]}}
  - binary: {opsctl}
    alias: stage
    include: {{tools: ["^incident_"]}}
    exclude: {{tags: [""]}}
""")
    catalog = load_catalog(load_config(path))
    assert catalog.names == ["service_status", "service_logs", "auth_user_list", "db_query",
                             "stage_incident_open", "stage_incident_note", "stage_incident_resolve"]


def test_duplicate_names_are_a_configuration_error(tmp_path: Path, opsctl: Path) -> None:
    path = write(tmp_path, f"applications:\n  - binary: {opsctl}\n  - binary: {opsctl}\n")
    with pytest.raises(ConfigError, match="also a tool of opsctl"):
        load_catalog(load_config(path))


def test_cli_tools_json_is_the_messages_api_parameter(opsctl: Path) -> None:
    result = run_cli("tools", "--app", str(opsctl), "--json")
    assert result.returncode == 0, result.stderr
    data = json.loads(result.stdout)
    assert list(data) == ["tools"]
    names = [t["name"] for t in data["tools"]]
    assert names[-1] == "tool_search_tool_bm25" and "db_drop" not in names and len(names) == 15


def test_cli_tools_table(opsctl: Path) -> None:
    result = run_cli("tools", "--app", str(opsctl))
    assert result.returncode == 0
    line = next(x for x in result.stdout.splitlines() if x.startswith("service_status"))
    assert "ai:no_defer,impact:ro" in line and " no " in line


def test_cli_explain(opsctl: Path, tmp_path: Path) -> None:
    result = run_cli("explain", "--app", str(opsctl), "service_restart", '{"service":"web","force":true}')
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout) == {"argv": [str(opsctl), "service", "restart", "--force", "--", "web"]}
    for tool, args, message in [
        ("db_drop", "{}", "denied by tag ai:deny"),
        ("rm_rf", "{}", "not a selected tool (`fisk-chatops tools` lists them)"),
        ("service-status", "{}", "not a selected tool; did you mean 'service_status'?"),
        ("service status", "{}", "not a selected tool; did you mean 'service_status'?"),
        ("service_restart", '{"service":"web","colour":1}', 'unknown property "colour"'),
        ("service_restart", "{oops", "invalid JSON"),
    ]:
        result = run_cli("explain", "--app", str(opsctl), tool, args)
        assert result.returncode == 2 and message in result.stderr and result.stdout == ""


def test_cli_explain_executes_nothing_but_introspection(tmp_path: Path, fixtures_dir: Path) -> None:
    marker = tmp_path / "ran"
    body = (f"import sys\nif sys.argv[1:] == ['--fisk-introspect']:\n"
            f"    sys.stdout.write(open({str(fixtures_dir / 'opsctl.introspect.json')!r}).read())\n"
            f"else:\n    open({str(marker)!r}, 'w').write('x')\n")
    app = make_script(tmp_path, "opsctl", body)
    result = run_cli("explain", "--app", str(app), "service_status", "{}")
    assert result.returncode == 0 and json.loads(result.stdout)["argv"][1:] == ["service", "status"]
    assert not marker.exists()


def test_cli_without_configuration_says_so() -> None:
    result = run_cli("tools", env={"FISK_CHATOPS_CONFIG": ""})
    assert result.returncode == 2 and "no fisk application configured" in result.stderr


def test_application_env_cannot_hand_a_credential_back(tmp_path: Path) -> None:
    path = write(tmp_path, "applications:\n  - binary: /x\n    env: {SLACK_BOT_TOKEN: xoxb-1, REGION: eu}\n")
    with pytest.raises(ConfigError, match=r"applications\.0\.env: .*SLACK_BOT_TOKEN is one of the bot's credential"):
        load_config(path)


def leaf_paths(model: type[BaseModel], prefix: tuple[str, ...] = ()) -> dict[tuple[str, ...], str]:
    """Every key of the settings tree (walking into nested sections; lists and mappings are leaves), with a
    value of its shape as an environment variable would give it."""
    paths = {}
    for name, field in model.model_fields.items():
        if field.exclude:
            continue
        annotation = field.annotation
        if isinstance(annotation, type) and issubclass(annotation, BaseModel):
            paths.update(leaf_paths(annotation, (*prefix, name)))
        else:
            origin = get_origin(annotation)
            paths[(*prefix, name)] = "[]" if origin is list else "{}" if origin is dict else "x"
    return paths


def test_every_key_is_read_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    paths = leaf_paths(Config)
    assert ("slack", "mode") in paths and ("agent", "max_tokens") in paths and ("applications",) in paths
    for path, text in paths.items():
        monkeypatch.setenv("FISK_CHATOPS__" + "__".join(p.upper() for p in path), text)
    overrides = environment_overrides(Config)
    for path, text in paths.items():
        value: Any = overrides
        for part in path:
            value = value[part]
        assert json.dumps(value) == text if text != "x" else value == "x", path


def test_environment_overrides_the_file_key_by_key(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = write(tmp_path, "applications: [{binary: /x}]\nslack: {command: /ops, http_port: 4000}\n"
                           "agent: {max_tokens: 100}\n")
    monkeypatch.setenv("FISK_CHATOPS__SLACK__MODE", "http")
    monkeypatch.setenv("fisk_chatops__agent__max_tokens", "2048")  # any case
    monkeypatch.setenv("FISK_CHATOPS__TOOL_SEARCH", "false")
    monkeypatch.setenv("FISK_CHATOPS__APPROVAL__APPROVERS", '{"users": ["U1", "U2"]}')
    config = load_config(path)
    assert config.slack.mode == "http" and config.slack.command == "/ops" and config.slack.http_port == 4000
    assert config.agent.max_tokens == 2048 and config.tool_search is False
    assert config.approval.approvers.users == ["U1", "U2"]
    assert [a.binary for a in config.applications] == ["/x"]
    monkeypatch.setenv("FISK_CHATOPS__APPLICATIONS", '[{"binary": "/opt/fisk/bin/opsctl"}, {"binary": "/y"}]')
    assert [a.binary for a in load_config(path).applications] == ["/opt/fisk/bin/opsctl", "/y"]


def test_environment_errors_name_the_variable(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = write(tmp_path, "applications: [{binary: /x}]\n")
    monkeypatch.setenv("FISK_CHATOPS__SLACK__HTTP_PORT", "port-three-thousand")
    assert str(load_config_error(tmp_path, path.read_text())).startswith(
        "environment FISK_CHATOPS__SLACK__HTTP_PORT: slack.http_port: Input should be a valid integer")
    monkeypatch.delenv("FISK_CHATOPS__SLACK__HTTP_PORT")
    monkeypatch.setenv("FISK_CHATOPS__AGENT__MAX_TOKEN", "5")
    assert str(load_config_error(tmp_path, path.read_text())) == (
        "environment FISK_CHATOPS__AGENT__MAX_TOKEN: agent.max_token: unknown key; did you mean 'max_tokens'?")
    monkeypatch.delenv("FISK_CHATOPS__AGENT__MAX_TOKEN")
    monkeypatch.setenv("FISK_CHATOPS__TOOL_SERCH", "false")
    assert str(load_config_error(tmp_path, path.read_text())) == (
        "environment FISK_CHATOPS__TOOL_SERCH: unknown key; did you mean 'tool_search'?")
    monkeypatch.delenv("FISK_CHATOPS__TOOL_SERCH")
    monkeypatch.setenv("FISK_CHATOPS__APPLICATIONS", "[{binary: /x}")
    assert str(load_config_error(tmp_path, path.read_text())).startswith(
        "environment FISK_CHATOPS__APPLICATIONS: not valid JSON (")


def test_a_key_written_twice_is_refused_with_both_lines(tmp_path: Path) -> None:
    """YAML keeps the LAST of two equal keys without a word: adding `anyone_may_approve: true` at the top of the
    example's `approval:` block (as its comment suggests) was silently undone by its own `false` further down."""
    path = write(tmp_path, "approval:\n  anyone_may_approve: true\n  approvers: {users: []}\n"
                           "  anyone_may_approve: false\n")
    with pytest.raises(ConfigError) as info:
        load_config(path)
    assert str(info.value) == (f"{path}: line 4: invalid YAML: 'anyone_may_approve' is written twice in this mapping "
                               "(first on line 2); keep one")


def test_a_bare_binary_name_is_a_path_look_up_never_the_working_directory(
    tmp_path: Path, opsctl: Path, monkeypatch: pytest.MonkeyPatch,
) -> None:
    """`binary: opsctl` is resolved on PATH once, at load (introspection, digest and execution use one absolute
    path); a file of that name in the process's working directory is never taken for it."""
    monkeypatch.setenv("PATH", f"{opsctl.parent}{os.pathsep}{os.environ['PATH']}")
    config = load_config(write(tmp_path, f"applications:\n  - binary: {opsctl.name}\n"))
    assert config.applications[0].binary == str(opsctl)
    assert load_catalog(config).get("service_status") is not None

    monkeypatch.setenv("PATH", "/usr/bin:/bin")
    monkeypatch.chdir(opsctl.parent)  # ./opsctl exists here, but is not on PATH
    config = load_config(write(tmp_path, f"applications:\n  - binary: {opsctl.name}\n"))
    with pytest.raises(Exception, match="not found on PATH"):
        load_catalog(config)
    repo = str(Path(__file__).resolve().parents[2])
    result = subprocess.run([*CLI, "tools", "--app", opsctl.name], capture_output=True, text=True, timeout=60,
                            cwd=opsctl.parent, env={**os.environ, "PYTHONPATH": repo})
    assert result.returncode != 0 and "not found on PATH" in result.stderr and "Traceback" not in result.stderr


def test_secrets_come_from_the_environment_in_any_case_and_a_keyword_overrides(monkeypatch: Any) -> None:
    monkeypatch.setenv("SLACK_BOT_TOKEN", "xoxb-from-env")
    monkeypatch.setenv("redis_url", "redis://lower-case:6379/0")
    monkeypatch.setenv("SOMETHING_ELSE", "ignored")
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    secrets = Secrets()
    assert secrets.slack_bot_token == "xoxb-from-env"
    assert secrets.redis_url == "redis://lower-case:6379/0"
    assert secrets.anthropic_api_key is None
    assert Secrets(slack_bot_token="xoxb-given").slack_bot_token == "xoxb-given"
    assert not hasattr(secrets, "something_else")
