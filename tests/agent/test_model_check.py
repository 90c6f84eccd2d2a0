"""The start-up check of the Anthropic key and base URL: one authenticated models-list request against the
fake Messages API, and a sentence naming the URL and the HTTP status when it fails."""

from __future__ import annotations

from pathlib import Path

import pytest

from bot.agent.model import ModelAccessError, check_access, make_client
from bot.config import Secrets, parse_config
from bot.roles import Core, StartupError, agent_worker, check_model_access
from tests.agent import harness
from tests.support.fake_anthropic import FakeAnthropic
from tests.support.redis_server import free_port


async def test_right_key_passes_with_one_request() -> None:
    with FakeAnthropic(api_key="good") as fake:
        await check_access(make_client(harness.settings(), api_key="good", base_url=fake.base_url))
        (request,) = fake.requests
    assert request.method == "GET" and request.path == "/v1/models?limit=1"
    assert "good" in (request.headers.get("x-api-key"), request.headers.get("authorization", "").split()[-1])
    assert "anthropic-version" in request.headers
    assert fake.message_requests == []


async def test_wrong_key_names_url_status_and_fix() -> None:
    with FakeAnthropic(api_key="good") as fake, pytest.raises(ModelAccessError) as caught:
        await check_access(make_client(harness.settings(), api_key="bad", base_url=fake.base_url))
    assert str(caught.value) == (
        f"the Anthropic API refused the start-up check: GET {fake.base_url}/v1/models answered HTTP 401"
        " (invalid x-api-key); check ANTHROPIC_API_KEY"
    )


async def test_base_url_with_v1_is_explained() -> None:
    with FakeAnthropic() as fake, pytest.raises(ModelAccessError) as caught:
        await check_access(make_client(harness.settings(), api_key="k", base_url=fake.base_url + "/v1"))
    message = str(caught.value)
    assert f"GET {fake.base_url}/v1/v1/models answered HTTP 404" in message
    assert "ANTHROPIC_BASE_URL must be the API root" in message


async def test_unreachable_base_url_is_named() -> None:
    url = f"http://127.0.0.1:{free_port()}"
    with pytest.raises(ModelAccessError) as caught:
        await check_access(make_client(harness.settings(), api_key="k", base_url=url))
    message = str(caught.value)
    assert message.startswith(f"cannot reach the Anthropic API at {url} (")
    assert message.endswith("check ANTHROPIC_BASE_URL and the network") and "\n" not in message


async def test_the_client_the_start_up_check_used_is_the_agents(
        tmp_path: Path, opsctl: Path, redis_url: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """One client per process: its connection pool and its TLS context with the system's CA certificates are
    made once (a second client kept ~0.6 MiB more in a combined ``serve``, bench/bench_rss.py)."""
    with FakeAnthropic(api_key="good") as fake:
        for name, value in (("REDIS_URL", redis_url), ("ANTHROPIC_API_KEY", "good"),
                            ("ANTHROPIC_BASE_URL", fake.base_url)):
            monkeypatch.setenv(name, value)
        config = parse_config({"applications": [{"binary": str(opsctl)}],
                               "redis": {"state_dir": str(tmp_path / "state")}})
        core = await Core.open(config, {"slack", "agent", "runner"}, Secrets())
        try:
            client = await check_model_access(core)
            assert not client.is_closed()  # handed on open
            assert agent_worker(core, client=client).agent.model.client is client
            assert agent_worker(core).agent.model.client is not client  # without one, the worker makes its own
            await client.close()
            monkeypatch.setenv("ANTHROPIC_API_KEY", "bad")
            with pytest.raises(StartupError, match="HTTP 401"):
                await check_model_access(Core(config, Secrets(), core.redis, core.catalogs, core.store))
        finally:
            await core.close()
