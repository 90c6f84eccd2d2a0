"""The one execution path from (tool, JSON arguments) to a result, and ``fisk-chatops exec`` over it."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from bot.config import config_for_binary
from bot.runner.binary import BinarySnapshots
from bot.runner.call import ChildEnvironments, ExecutionLimits, execute_approved_call
from bot.runner.result import CallResult
from bot.tools.catalog import Catalog
from bot.wiring import load_catalog
from tests.support.fisk_app import make_fisk_app_doing

ROOT = Path(__file__).resolve().parents[1]
ENV_DUMP = "for k, v in sorted(os.environ.items()):\n    print(f'{k}={v}')"  # the child's whole environment


async def run_approved(catalog: Catalog, tool: str, args: str, argv: list[str], limits: ExecutionLimits) -> CallResult:
    """The runner path with the binary digest the catalog recorded (what a verified decision carries)."""
    digest = next(iter(catalog)).settings.binary_digest
    return await execute_approved_call(catalog, tool, args, argv, limits, BinarySnapshots(), digest)


def run_cli(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "bot.cli", *args], capture_output=True, text=True, timeout=60,
                          env={**os.environ, **(env or {})}, cwd=ROOT)


async def test_approved_call_runs_exactly_the_approved_argv(opsctl: Path) -> None:
    catalog = load_catalog(config_for_binary(str(opsctl)))
    args = '{"service":"web","lines":12.50}'
    argv = [str(opsctl), "service", "logs", "--lines=12.50", "--", "web"]
    result = await run_approved(catalog, "service_logs", args, argv, ExecutionLimits())
    assert result.status == "finished" and result.exit_code == 0
    assert result.output.splitlines() == argv[1:]


async def test_approved_call_refuses_a_different_argv_or_unknown_tool(opsctl: Path) -> None:
    catalog = load_catalog(config_for_binary(str(opsctl)))
    limits = ExecutionLimits()
    tampered = [str(opsctl), "service", "logs", "--", "api"]
    result = await run_approved(catalog, "service_logs", '{"service":"web"}', tampered, limits)
    assert result.status == "failed_to_start" and "differs from the one approved" in (result.error or "")
    result = await run_approved(catalog, "db_drop", '{"database":"x"}', [str(opsctl), "db", "drop"], limits)
    assert result.status == "failed_to_start" and "not a currently selected tool" in (result.error or "")
    result = await run_approved(catalog, "service_logs", '{"service":"web","x":1}', tampered, limits)
    assert result.status == "failed_to_start" and "no longer valid" in (result.error or "")


async def test_runner_environments_scrub_once_and_still_redact(tmp_path: Path, fixtures_dir: Path) -> None:
    """A runner's ChildEnvironments: credentials of its start-up environment never reach the child and are
    still redacted when the tool prints them some other way (here: passed back through its app env)."""
    app = make_fisk_app_doing(tmp_path, fixtures_dir / "opsctl.introspect.json", "envdump", ENV_DUMP +
                              "\nprint('leaked', os.environ.get('ECHOED', ''))")
    token = "xoxb-111-222-abcdefabcdef"
    config = config_for_binary(str(app))
    config.applications[0].env["ECHOED"] = "db-" + "correct-horse-battery"
    catalog = load_catalog(config)
    limits = ExecutionLimits(sensitive_env_vars=("DB_PASSWORD",))
    environments = ChildEnvironments(limits, {"PATH": os.environ["PATH"], "SLACK_BOT_TOKEN": token,
                                              "DB_PASSWORD": "correct-horse-battery"})
    argv = [str(app), "service", "status"]
    digest, binaries = next(iter(catalog)).settings.binary_digest, BinarySnapshots()
    first = await execute_approved_call(catalog, "service_status", "{}", argv, limits, binaries, digest, environments)
    second = await execute_approved_call(catalog, "service_status", "{}", argv, limits, binaries, digest, environments)
    for result in (first, second):
        assert result.status == "finished" and result.exit_code == 0, result
        assert token not in result.output and "SLACK_BOT_TOKEN" not in result.output
        assert "correct-horse-battery" not in result.output and "leaked db-[REDACTED" in result.output
        assert "LLMFORMAT=1" in result.output
    assert first.output == second.output


def test_exec_prints_the_result_and_exits_0_whatever_the_exit_code(opsctl: Path) -> None:
    result = run_cli("exec", "--app", str(opsctl), "service_status", '{"service":"web"}',
                     env={"OPSCTL_EXIT_CODE": "3"})
    assert result.returncode == 0, result.stderr
    data = json.loads(result.stdout)
    assert data["status"] == "finished" and data["exit_code"] == 3
    assert data["output"] == "service\nstatus\n--\nweb\nopsctl: exiting with code 3\n"
    assert data["argv_display"] == [str(opsctl), "service", "status", "--", "web"]


def test_exec_invalid_input_exits_2_and_runs_nothing(opsctl: Path) -> None:
    for tool, args in [("db_drop", "{}"), ("service_status", '{"nope":1}'), ("service_restart", "{}")]:
        result = run_cli("exec", "--app", str(opsctl), tool, args)
        assert result.returncode == 2 and result.stdout == "" and "error:" in result.stderr


def test_exec_child_environment_has_no_credentials(tmp_path: Path, fixtures_dir: Path) -> None:
    app = make_fisk_app_doing(tmp_path, fixtures_dir / "opsctl.introspect.json", "envdump", ENV_DUMP)
    config = tmp_path / "c.yaml"
    config.write_text(
        f"applications: [{{binary: {app}, env: {{EXTRA_SETTING: 'on'}}}}]\nsensitive_env_vars: [DB_PASSWORD]\n"
    )
    secrets = {
        "SLACK_BOT_TOKEN": "xoxb-111-222-abcdefabcdef", "SLACK_APP_TOKEN": "xapp-1-A1-222-abcdef",
        "SLACK_SIGNING_SECRET": "8f742231b10e8888abcd99yyyzzz85a5", "ANTHROPIC_API_KEY": "sk-ant-api03-secretsecret",
        "ANTHROPIC_AUTH_TOKEN": "bearer-secret-value-123", "REDIS_URL": "redis://:redispass123@db:6379/0",
        "DB_PASSWORD": "correct-horse-battery",
    }
    result = run_cli("exec", "--config", str(config), "service_status", "{}", env=secrets)
    assert result.returncode == 0, result.stderr
    output = json.loads(result.stdout)["output"]
    for name, value in secrets.items():
        assert f"{name}=" not in output and value not in output
    assert "LLMFORMAT=1" in output and "EXTRA_SETTING=on" in output
