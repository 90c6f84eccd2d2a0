"""Execute one tool call of the catalog: the single path from a call record to a CallResult.

Used by the runner worker for approved calls and by ``fisk-chatops exec`` for an operator's own terminal. For
an approved call, in this order:

1. (before this module: ``bot/approvals/execution.py`` verifies the signed decision and passes on the
   approved binary digest from it);
2. the tool name is looked up in the current catalog (never trusted) and the arguments go through the
   JSON-to-argv conversion again: the result must equal the approved argv, else ``failed_to_start``;
3. the binary is copied into a sealed in-memory file while hashing it; its digest must equal the approved
   one, else ``refused``; the process starts from that copy (``binary.py``).
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from bot.fisk.arguments import ArgumentsError
from bot.fisk.digest import short
from bot.fisk.environment import ScrubbedEnvironment, scrub_environment
from bot.runner.binary import BinarySnapshots, BinaryUnavailable
from bot.runner.execute import run_argv
from bot.runner.result import CallResult, CallStatus
from bot.sanitize import redact_argv
from bot.sanitize.secret_argv import NO_SHAPES, SecretArgvShapes
from bot.tools.catalog import Catalog
from bot.tools.tool import Tool


@dataclass(frozen=True)
class ExecutionLimits:
    """Operator-wide execution settings (a projection of the ``execution`` configuration section)."""

    max_timeout_seconds: float = 600.0
    kill_grace_seconds: float = 5.0
    output_limit_bytes: int = 65536
    redact_patterns: tuple[str, ...] = ()
    sensitive_env_vars: tuple[str, ...] = field(default_factory=tuple)
    run_as: tuple[int, int] | None = None
    # argv shapes the operator adds to the built-in ones whose output is a secret's value (execution.secret_output)
    secret_output: SecretArgvShapes = NO_SHAPES


class ChildEnvironments:
    """Each application's child environment, scrubbed once per process instead of once per call.

    A runner's own environment is fixed when it starts, so the scrub (every variable checked, the removed
    credentials kept for redaction) gives the same answer every time; a snapshot is taken here, when the runner
    is built. Whoever changes the process environment afterwards (tests) builds a new one.
    """

    def __init__(self, limits: ExecutionLimits, base_env: Mapping[str, str] | None = None) -> None:
        self._base = dict(os.environ if base_env is None else base_env)
        self._sensitive = limits.sensitive_env_vars
        self._scrubbed: dict[tuple[tuple[str, str], ...], ScrubbedEnvironment] = {}

    def for_tool(self, tool: Tool) -> ScrubbedEnvironment:
        key = tuple(tool.settings.env.items())
        scrubbed = self._scrubbed.get(key)
        if scrubbed is None:
            scrubbed = scrub_environment(self._base, self._sensitive, tool.settings.env)
            self._scrubbed[key] = scrubbed
        return scrubbed


async def execute_tool(
    tool: Tool,
    argv: list[str],
    limits: ExecutionLimits,
    base_env: Mapping[str, str] | None = None,
    environments: ChildEnvironments | None = None,
    executable_fd: int | None = None,
) -> CallResult:
    """Run an argv already produced by ``tool.render_argv`` with the tool's settings and the global limits.

    ``environments`` (a runner's, built once) supplies the scrubbed environment; without it the environment
    (``base_env`` or this process's) is scrubbed for this call.
    """
    if environments is not None:
        scrubbed = environments.for_tool(tool)
    else:
        scrubbed = scrub_environment(base_env, limits.sensitive_env_vars, tool.settings.env)
    return await run_argv(
        argv,
        env=scrubbed.env,
        cwd=tool.settings.working_dir,
        timeout=min(tool.settings.timeout_seconds, limits.max_timeout_seconds),
        kill_grace=limits.kill_grace_seconds,
        output_limit=limits.output_limit_bytes,
        secret_values=scrubbed.removed_values.values(),
        redact_patterns=limits.redact_patterns,
        executable_fd=executable_fd,
        run_as=limits.run_as,
        secret_output=limits.secret_output,
    )


def _not_run(argv: Iterable[str], reason: str, limits: ExecutionLimits, status: CallStatus) -> CallResult:
    display = redact_argv(list(argv), (), limits.redact_patterns)
    return CallResult(status=status, argv_display=display, error=reason)


async def execute_approved_call(
    catalog: Catalog,
    tool_name: str,
    arguments: str | bytes | Mapping[str, Any] | None,
    approved_argv: list[str],
    limits: ExecutionLimits,
    binaries: BinarySnapshots,
    approved_digest: str,
    environments: ChildEnvironments | None = None,
) -> CallResult:
    """Re-check everything at execution time, then run; refusals are results, never exceptions.

    ``approved_digest`` comes from the verified decision (never from the record alone): a binary whose bytes
    differ is ``refused``.
    """
    tool = catalog.get(tool_name)
    if tool is None:
        return _not_run(approved_argv, f"tool {tool_name!r} is not a currently selected tool", limits,
                        "failed_to_start")
    try:
        argv = tool.render_argv(arguments)
    except ArgumentsError as exc:
        return _not_run(approved_argv, f"arguments no longer valid: {exc.message}", limits, "failed_to_start")
    if argv != list(approved_argv):
        return _not_run(approved_argv, "the command line differs from the one approved; not run", limits,
                        "failed_to_start")
    try:
        snapshot = await binaries.open(tool.settings.binary)
    except BinaryUnavailable as exc:
        return _not_run(approved_argv, f"cannot read the binary: {exc.strerror}", limits, "failed_to_start")
    try:
        if snapshot.digest != approved_digest:
            return _not_run(
                approved_argv,
                f"the binary changed since approval (approved {short(approved_digest)}, now"
                f" {short(snapshot.digest)}); not run",
                limits, "refused",
            )
        return await execute_tool(tool, argv, limits, environments=environments, executable_fd=snapshot.fd)
    finally:
        os.close(snapshot.fd)
