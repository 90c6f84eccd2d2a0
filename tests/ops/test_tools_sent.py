"""The tools the agent actually sends (captured by the fake Messages API) are exactly what ``tools --json``
prints, with tool search on and off: one setting, honoured everywhere."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.support.fake_anthropic import FakeAnthropic, text_reply

ROOT = Path(__file__).resolve().parents[2]


def without_cache_breakpoint(tools: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [{k: v for k, v in tool.items() if k != "cache_control"} for tool in tools]


@pytest.mark.parametrize("tool_search", [True, False])
def test_agent_sends_what_tools_json_prints(tmp_path: Path, opsctl: Path, redis_url: str, tool_search: bool) -> None:
    config = tmp_path / "config.yaml"
    config.write_text(f"applications: [{{binary: {opsctl}}}]\ntool_search: {str(tool_search).lower()}\n")
    printed = subprocess.run([sys.executable, "-m", "bot.cli", "tools", "--json", "--config", str(config)],
                             capture_output=True, text=True, cwd=ROOT, timeout=60, check=True)
    expected = json.loads(printed.stdout)["tools"]
    with FakeAnthropic() as fake:
        fake.script(text_reply("fine"))
        env = {**os.environ, "ANTHROPIC_API_KEY": "test-key", "ANTHROPIC_BASE_URL": fake.base_url,
               "REDIS_URL": redis_url}
        result = subprocess.run([sys.executable, "-m", "bot.cli", "console", "--config", str(config)],
                                input="is web ok?\n", capture_output=True, text=True, env=env, cwd=ROOT, timeout=90)
        assert result.returncode == 0, result.stderr
        (request,) = fake.message_requests
    sent = request["tools"]
    assert without_cache_breakpoint(sent) == expected
    assert "cache_control" in sent[-1]  # the one prompt-caching breakpoint, on the last tool
    deferred = [t["name"] for t in sent if t.get("defer_loading")]
    searching = any(t.get("type", "").startswith("tool_search_tool") for t in sent)
    if tool_search:
        assert len(sent) > 10 and deferred and searching
    else:
        assert not deferred and not searching
