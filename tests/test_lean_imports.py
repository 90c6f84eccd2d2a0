"""Each role loads only its own dependencies: a runner process never imports the Anthropic SDK or slack-bolt
(together ~50 MiB of RSS and thousands of modules it has no use for), nor aiohttp (its health endpoint is
served by asyncio itself), nor prometheus_client (``bot/metric_types.py`` writes the exposition)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

PROBE = """
import sys
import bot.cli, bot.roles, bot.config
from bot.roles import runner_worker, make_executor
heavy = sorted(m for m in sys.modules if m.split('.')[0] in {'anthropic', 'slack_bolt', 'slack_sdk', 'httpx', 'aiohttp',
                                                             'prometheus_client'}
               or m.startswith(('bot.agent.loop', 'bot.agent.model', 'bot.slack.app')))
print(','.join(heavy))
"""


def test_runner_imports_neither_anthropic_nor_slack() -> None:
    done = subprocess.run([sys.executable, "-c", PROBE], capture_output=True, text=True, cwd=ROOT, timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == ""


SERVE_PROBE = """
import asyncio, json, os, sys, tempfile
config = os.path.join(tempfile.mkdtemp(), "config.yaml")
with open(config, "w") as f:
    json.dump({"applications": [{"binary": "/bin/true"}]}, f)
asyncio.run = lambda coroutine, **_: coroutine.close()  # everything `serve` imports before its event loop runs
import bot.cli
assert bot.cli.main(["serve", "--config", config, "--role", "runner"]) == 0
print(",".join(sorted(m for m in sys.modules
                      if m.split(".")[0] in {"anthropic", "slack_bolt", "slack_sdk", "httpx", "aiohttp",
                                             "pydantic_settings", "prometheus_client"}
                      or m.startswith("cryptography.hazmat"))))
"""


def test_serve_role_runner_command_loads_no_other_roles_dependencies() -> None:
    # `serve` names the Slack start-up error it reports: from the settings module, not the client (slack_sdk)
    # nor pydantic-settings (no FISK_CHATOPS__ variable to read) nor cryptography's OpenSSL (a runner only verifies)
    env = {k: v for k, v in os.environ.items() if not k.upper().startswith("FISK_CHATOPS__")}
    done = subprocess.run([sys.executable, "-c", SERVE_PROBE], capture_output=True, text=True, cwd=ROOT, timeout=60,
                          env=env)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == ""


def test_slack_package_names_still_resolve_on_first_use() -> None:
    probe = "import sys, bot.slack as s; assert 'slack_bolt' not in sys.modules; s.SlackFrontEnd; " \
            "assert 'slack_bolt' in sys.modules; print(s.parse_conversation.__module__)"
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, cwd=ROOT, timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "bot.slack.settings"


def test_approvals_package_names_resolve_on_first_use_without_loading_the_policy() -> None:
    """``bot.approvals`` re-exports its public names lazily: importing the store (as a runner does) loads neither
    the approval policy nor the audit reader (pydantic models), and every public name still resolves."""
    probe = (
        "import importlib, sys, bot.approvals as a, bot.approvals.store, bot.approvals.worker\n"
        "assert 'bot.approvals.policy' not in sys.modules and 'bot.approvals.audit' not in sys.modules\n"
        "assert sorted(a.__all__) == sorted(a._HOMES)\n"
        "for name in a.__all__:\n"
        "    assert getattr(a, name) is getattr(importlib.import_module('bot.approvals.' + a._HOMES[name]), name)\n"
        "print('pydantic' in sys.modules)\n"
    )
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, cwd=ROOT, timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "True"  # the policy and audit entries are pydantic models, loaded when named
