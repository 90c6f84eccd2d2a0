"""``serve``: start the roles of one process, serve until SIGTERM, drain.

Start-up fails fast and clearly (bad configuration, unreachable Redis, wrong Slack tokens); SIGTERM drains: stop
taking new work, let running calls finish within ``shutdown_grace_seconds``, record any call cut off as
``interrupted``.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import signal
from typing import TYPE_CHECKING

from bot.cancelling import cancel_and_wait
from bot.config_secrets import Secrets
from bot.config_view import AnyConfig, full_config
from bot.fisk.environment import is_credential_name
from bot.hardening import drop_credentials, harden
from bot.health import HealthServer
from bot.memory import return_free_heap, trim_periodically
from bot.roles.checks import check_credentials, check_model_access
from bot.roles.core import DECIDING_ROLES, Core
from bot.roles.loops import count_final_states, pool_collector, queue_collector, trim_bus_streams, watch_binaries
from bot.roles.workers import agent_worker, on_call_front_end, runner_worker, slack_front_end, slack_readiness

if TYPE_CHECKING:
    from anthropic import AsyncAnthropic

    from bot.slack.app import SlackFrontEnd

log = logging.getLogger(__name__)

async def serve(config: AnyConfig, roles: set[str], *, health_host: str = "0.0.0.0", health_port: int = 8080,
                stop_event: asyncio.Event | None = None) -> None:
    """Run ``roles`` until SIGTERM/SIGINT (or ``stop_event``)."""
    stop = stop_event or asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        with contextlib.suppress(NotImplementedError, RuntimeError):
            loop.add_signal_handler(sig, stop.set)
    secrets = Secrets()
    check_credentials(config, roles, secrets)
    harden(lambda name: is_credential_name(name, config.sensitive_env_vars))
    core = await Core.open(config, roles, secrets)
    health = HealthServer(health_host, health_port, collectors=[queue_collector(core), pool_collector(core)])

    async def redis_ready() -> tuple[bool, str]:
        # The slack role pings on its reserved acks connections: a burst that keeps the command pool busy must
        # not take the pod out of its Service, and what readiness promises is that requests can be recorded.
        await core.redis.acker.ping()
        return True, core.redis.target

    health.checks["redis"] = redis_ready
    tasks: list[asyncio.Task[None]] = []
    front: SlackFrontEnd | None = None
    model: AsyncAnthropic | None = None
    try:
        if "agent" in roles:
            model = await check_model_access(core)  # the checked client is the agent's
        front = slack_front_end(core) if "slack" in roles else None
        if front is not None:
            info = await front.start()
            log.info("slack connected as %s", info.get("user_id"))
            health.checks["slack"] = slack_readiness(front)
        oncall = on_call_front_end(core) if front is not None else None
        incidents = full_config(config, "the slack role").incidents if front is not None else None
        # Every port is bound before any role starts work, so a busy port stops start-up with one line. The
        # health port last: /readyz must not answer (and a Service send requests here) while the Slack endpoint
        # is not listening yet.
        if oncall is not None and incidents is not None and incidents.enabled and incidents.listen == "own":
            await oncall.listen()
        if front is not None and front.settings.mode == "http":
            if oncall is not None and incidents is not None and incidents.enabled and incidents.listen == "slack":
                oncall.mount(front.http_app())
            await front.listen_http()
        await health.start()
        if front is not None:
            tasks.append(asyncio.create_task(front.run(stop)))
            tasks.append(asyncio.create_task(oncall.run(stop)))  # type: ignore[union-attr]
        if "agent" in roles:
            tasks.append(asyncio.create_task(agent_worker(core, client=model).run(stop)))
        if "runner" in roles:
            tasks.append(asyncio.create_task(runner_worker(core).run(stop)))
            tasks.append(asyncio.create_task(count_final_states(core, stop)))
        tasks.append(asyncio.create_task(watch_binaries(core, stop)))
        tasks.append(asyncio.create_task(trim_bus_streams(core, stop)))
        tasks.append(asyncio.create_task(trim_periodically(stop)))  # what each call's output cleaning freed
        if not roles & DECIDING_ROLES:
            # A runner has connected and built its child environments: it needs no credential from the
            # environment any more (its Redis client keeps the URL it connected with).
            drop_credentials(lambda name: is_credential_name(name, config.sensitive_env_vars))
        return_free_heap()  # start-up's temporaries are freed: give their pages back before serving
        log.info("serving roles %s; health on port %s", ",".join(sorted(roles)), health.port)
        done, _ = await asyncio.wait([*tasks, asyncio.create_task(stop.wait())],
                                     return_when=asyncio.FIRST_COMPLETED)
        for task in done:
            if task in tasks and task.exception() is not None:
                stop.set()
                raise task.exception()  # type: ignore[misc]
        stop.set()
        # Roles drain within the grace period; whatever still hangs after it (a connect retrying for ever) is
        # cancelled so SIGTERM always ends the process.
        await asyncio.wait(tasks, timeout=config.shutdown_grace_seconds + 5)
    finally:
        stop.set()
        await cancel_and_wait(tasks)  # one cancel() each could be lost (3.11) and the process would never end
        if front is not None:  # a start-up failure after auth.test (a busy port) never ran the front end
            from bot.slack.client import close_client

            await close_client(front.client)
        if model is not None:
            await model.close()
        await health.stop()
        await core.close()
