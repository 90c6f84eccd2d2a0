"""Process roles: what ``fisk-chatops serve`` runs, in one process or one role per process.

Every role talks to the others only through Redis, so ``--role slack|agent|runner`` processes can run on
different machines and scale on their own. ``core`` holds what roles share, ``checks`` the start-up checks,
``workers`` what each role runs (a role's own dependencies are imported only when that role starts: a runner
never loads anthropic or slack-bolt), ``loops`` the background loops, ``process`` the ``serve`` entry point.
"""

from bot.roles.checks import (
    check_credentials,
    check_model_access,
    model_credential_problems,
    require_model_credentials,
)
from bot.roles.core import (
    DECIDING_ROLES,
    ROLES,
    Core,
    StartupError,
    connection_bound,
    decision_keys,
    instance_name,
    reader_loops,
)
from bot.roles.loops import count_final_states, trim_bus_streams, watch_binaries
from bot.roles.process import serve
from bot.roles.workers import (
    agent_worker,
    make_executor,
    on_call_front_end,
    runner_worker,
    slack_front_end,
    slack_readiness,
)

__all__ = [
    "DECIDING_ROLES", "ROLES", "Core", "StartupError", "agent_worker", "check_credentials", "check_model_access",
    "connection_bound", "count_final_states", "decision_keys", "instance_name", "make_executor",
    "model_credential_problems", "on_call_front_end", "reader_loops", "require_model_credentials",
    "runner_worker", "serve", "slack_front_end", "slack_readiness", "trim_bus_streams", "watch_binaries",
]
