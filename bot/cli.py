"""The ``fisk-chatops`` command: inspection commands for operators and the process roles."""

from __future__ import annotations

import argparse
import asyncio
import difflib
import importlib.metadata
import json
import os
import shutil
import sys
from collections.abc import Callable, Sequence
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import TYPE_CHECKING, Any

from bot.config_secrets import Secrets
from bot.config_view import AnyConfig, ConfigError, load_runner_config, redis_topology
from bot.fisk.arguments import ArgumentsError
from bot.fisk.introspect import IntrospectionError
from bot.listen import ListenError
from bot.redis_factory import open_redis
from bot.redis_url import RedisUnavailable
from bot.runner.call import execute_tool
from bot.tools.catalog import Catalog
from bot.tools.params import build_tool_params
from bot.tools.tool import Tool
from bot.wiring import execution_limits, load_catalog, text_redactor

if TYPE_CHECKING:  # bot.config is imported where a whole configuration is loaded: `serve --role runner` reads a
    # validated view of it instead (bot/config_view.py) and imports no pydantic
    from bot.approvals.audit import AuditEntry
    from bot.config import Config

EXIT_USAGE = 2
EXIT_BROKEN_PIPE = 141  # what a shell reports for a command killed by SIGPIPE (128 + 13), as `git log | head`
DESCRIPTION = (
    "A Slack chatops bot whose tools are the commands of fisk applications, every call approved by a human. "
    "Inspect the tools (tools, explain), run one call (exec), run the bot (serve) or talk to it in the "
    "terminal (console), and read what happened (audit, timeline)."
)
CONFIG_HELP = "YAML configuration file (default: $FISK_CHATOPS_CONFIG)"


def version() -> str:
    try:
        return importlib.metadata.version("fisk-chatops")
    except importlib.metadata.PackageNotFoundError:  # running from a source tree that was never installed
        return "unknown"


class CliError(Exception):
    """An error the user can fix; printed on stderr, exit 2."""


def _add_source(parser: argparse.ArgumentParser) -> None:
    group = parser.add_mutually_exclusive_group()
    group.add_argument("--config", help=CONFIG_HELP)
    group.add_argument("--app", help="a single fisk application binary, instead of a configuration file")


def _config(args: argparse.Namespace) -> Config:
    from bot.config import config_for_binary, load_config

    if getattr(args, "app", None):
        binary = args.app
        if "/" not in binary:  # a bare name is a PATH look-up, as in a shell: never a file in this directory
            found = shutil.which(binary)
            if found is None:
                raise CliError(f"--app {binary}: not found on PATH (give its path, e.g. ./{binary})")
            binary = found
        return config_for_binary(binary)
    return load_config(args.config)


def _catalog(args: argparse.Namespace) -> tuple[Config, Catalog]:
    config = _config(args)
    if not config.applications:
        raise CliError(f"{config.source}: applications: no fisk application configured (use --config or --app)")
    return config, load_catalog(config)


def cmd_tools(args: argparse.Namespace) -> int:
    config, catalog = _catalog(args)
    params = build_tool_params(list(catalog), tool_search=config.tool_search)
    if args.json:
        print(json.dumps({"tools": params}, indent=2, ensure_ascii=False))
        return 0
    deferred = {p["name"] for p in params if p.get("defer_loading")}
    rows = [("NAME", "TAGS", "DEFERRED", "DESCRIPTION")]
    for tool in catalog:
        first = tool.description.splitlines()[0] if tool.description else ""
        rows.append((tool.name, ",".join(tool.tags) or "-", "yes" if tool.name in deferred else "no", first))
    widths = [max(len(r[i]) for r in rows) for i in range(3)]
    for row in rows:
        print("  ".join(c.ljust(w) for c, w in zip(row[:3], widths, strict=True)) + "  " + row[3])
    if any(p.get("type") == "tool_search_tool_bm25_20251119" for p in params):
        print(f"\n{len(catalog)} tools; tool search on (BM25), ai:no_defer tools sent directly")
    else:
        print(f"\n{len(catalog)} tools; sent directly")
    return 0


def cmd_explain(args: argparse.Namespace) -> int:
    _, catalog = _catalog(args)
    tool = _tool(catalog, args.tool)
    print(json.dumps({"argv": tool.render_argv(args.arguments)}, ensure_ascii=False))
    return 0


def _tool(catalog: Catalog, name: str) -> Tool:
    tool = catalog.get(name)
    if tool is None:
        if name in catalog.denied:
            raise CliError(f"unknown tool {name!r}: denied by tag ai:deny")
        # a newcomer types the command path (`service status`, `service-status`): name the tool they meant
        close = difflib.get_close_matches(name.replace(" ", "_").replace("-", "_"), catalog.names, n=1)
        hint = f"; did you mean {close[0]!r}?" if close else ""
        raise CliError(f"unknown tool {name!r}: not a selected tool{hint} (`fisk-chatops tools` lists them)")
    return tool


def cmd_exec(args: argparse.Namespace) -> int:
    config, catalog = _catalog(args)
    tool = _tool(catalog, args.tool)
    argv = tool.render_argv(args.arguments)
    result = asyncio.run(execute_tool(tool, argv, execution_limits(config)))
    print(json.dumps(result.as_json(), indent=2, ensure_ascii=False))
    return 1 if result.status == "failed_to_start" else 0


def _parse_since(text: str | None) -> datetime | None:
    """``--since`` takes an ISO time (UTC if no zone) or an age like 30s, 10m, 2h, 7d."""
    if not text:
        return None
    units = {"s": 1, "m": 60, "h": 3600, "d": 86400}
    if text[-1:] in units and text[:-1].isdigit():
        return datetime.now(UTC) - timedelta(seconds=int(text[:-1]) * units[text[-1]])
    try:
        moment = datetime.fromisoformat(text)
    except ValueError:
        raise CliError(f"--since: expected an ISO time or an age like 10m, got {text!r}") from None
    return moment if moment.tzinfo else moment.replace(tzinfo=UTC)


def redis_url_for(config: AnyConfig) -> str | None:
    return Secrets().redis_url or config.redis.url


async def _read_audit(config: Config, since: datetime | None, limit: int, call_id: str | None) -> list[AuditEntry]:
    from bot.approvals.audit import read_audit

    handle = await open_redis(redis_url_for(config), redis_topology(config), state_dir=config.redis.state_dir)
    try:
        return await read_audit(handle.client, since, limit, call_id=call_id, shards=config.redis.shards)
    finally:
        await handle.close()


def cmd_audit(args: argparse.Namespace) -> int:
    from bot.approvals.audit import format_audit_table
    from bot.config import load_config

    config = load_config(args.config)
    entries = asyncio.run(_read_audit(config, _parse_since(args.since), args.limit, args.call))
    if args.json:
        print(json.dumps([e.model_dump(mode="json") for e in entries], indent=2))
    else:
        print(format_audit_table(entries))
    return 0


async def _timeline(config: Config, conversation: str, since: datetime | None, fmt: str, tz: str | None) -> str:
    from bot.incidents.store import IncidentStore
    from bot.incidents.timeline import build_timeline, render_markdown, zone

    handle = await open_redis(redis_url_for(config), redis_topology(config), state_dir=config.redis.state_dir)
    try:
        timeline = await build_timeline(handle.client, IncidentStore(handle.client), conversation,
                                        since=since.timestamp() if since else None, redactor=text_redactor(config))
    finally:
        await handle.close()
    if not timeline.entries:
        raise CliError(f"nothing is recorded for the thread {conversation}")
    return json.dumps(timeline.as_json(), indent=2) if fmt == "json" else render_markdown(timeline, zone(tz))


def cmd_timeline(args: argparse.Namespace) -> int:
    from bot.config import load_config
    from bot.slack.settings import conversation_key

    channel, sep, ts = args.thread.partition(":")
    if not sep or not channel or not ts:
        raise CliError(f"--thread: expected CHANNEL:TS (e.g. C0123ABCD:1700000000.000100), got {args.thread!r}")
    config = load_config(args.config)
    print(asyncio.run(_timeline(config, conversation_key(channel, ts), _parse_since(args.since), args.format,
                                args.tz)))
    return 0


def cmd_serve(args: argparse.Namespace) -> int:
    from bot.logs import configure_logging
    from bot.roles import ROLES, StartupError, serve

    config: AnyConfig
    if args.role == "runner":  # validated in a child process: a runner imports no pydantic (config_view.py)
        config = load_runner_config(args.config)
    else:
        from bot.config import load_config

        config = load_config(args.config)
    configure_logging(config.log_level, sensitive_env_vars=config.sensitive_env_vars,
                      redact_patterns=config.execution.redact_patterns)
    roles = set(ROLES) if args.role == "all" else {args.role}
    if not config.applications:
        raise CliError(f"{config.source}: applications: no fisk application configured")
    refusals: tuple[type[Exception], ...] = (StartupError,)
    if "slack" in roles:  # the settings module names it without loading slack_sdk
        from bot.slack.settings import SlackStartupError

        refusals += (SlackStartupError,)
    try:
        asyncio.run(serve(config, roles, health_host=args.health_host, health_port=args.health_port))
    except refusals as exc:
        raise CliError(str(exc)) from None
    return 0


def cmd_keygen(args: argparse.Namespace) -> int:
    from bot.approvals.decision_keys import PRIVATE_KEY_FILE, ensure_key_pair, load_private_key
    from bot.approvals.decisions import key_id_of

    directory = Path(args.directory)
    if (directory / PRIVATE_KEY_FILE).exists():
        raise CliError(f"{directory / PRIVATE_KEY_FILE} exists already; choose another directory to rotate")
    private, public = ensure_key_pair(directory)
    print(f"private key {private} (slack and agent only), public key {public} (runners),"
          f" key id {key_id_of(load_private_key(private).public_key())}")
    return 0


def cmd_console(args: argparse.Namespace) -> int:
    from bot.config import load_config
    from bot.console import run_console
    from bot.logs import configure_logging
    from bot.roles import StartupError

    config = load_config(args.config)
    configure_logging("WARNING", sensitive_env_vars=config.sensitive_env_vars,
                      redact_patterns=config.execution.redact_patterns)
    if not config.applications:
        raise CliError(f"{config.source}: applications: no fisk application configured")
    try:
        asyncio.run(run_console(config))
    except StartupError as exc:
        raise CliError(str(exc)) from None
    except KeyboardInterrupt:
        pass
    return 0


def build_parser(extra: Sequence[Callable[[Any], None]] = ()) -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="fisk-chatops", description=DESCRIPTION)
    parser.add_argument("--version", action="version", version=f"%(prog)s {version()}",
                        help="print the version and exit")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND", title="commands",
                                help="fisk-chatops COMMAND --help shows its options")

    tools = sub.add_parser("tools", help="list the tools the model would see")
    _add_source(tools)
    tools.add_argument("--json", action="store_true", help='print {"tools": [...]} as sent to the Messages API')
    tools.set_defaults(func=cmd_tools)

    explain = sub.add_parser("explain", help="print the argv a tool call would run, running nothing")
    _add_source(explain)
    explain.add_argument("tool", help="the tool's name, as the tools command lists it")
    explain.add_argument("arguments", nargs="?", default="{}", help="JSON object of arguments")
    explain.set_defaults(func=cmd_explain)
    execute = sub.add_parser("exec", help="run one tool call now, without approval (your own terminal)")
    _add_source(execute)
    execute.add_argument("tool", help="the tool's name, as the tools command lists it")
    execute.add_argument("arguments", nargs="?", default="{}", help="JSON object of arguments")
    execute.set_defaults(func=cmd_exec)
    serve_p = sub.add_parser("serve", help="run the bot: every role, or one with --role")
    serve_p.add_argument("--config", help=CONFIG_HELP)
    serve_p.add_argument("--role", choices=["all", "slack", "agent", "runner"], default="all",
                         help="run one role only (needs REDIS_URL shared by the other roles); default: all")
    serve_p.add_argument("--health-host", default="0.0.0.0",
                         help="address of /healthz, /readyz and /metrics (default: %(default)s)")
    serve_p.add_argument("--health-port", type=int, default=8080,
                         help="port of /healthz, /readyz and /metrics; 0 picks a free one (default: %(default)s)")
    serve_p.set_defaults(func=cmd_serve)

    keygen = sub.add_parser("keygen", help="make a decision signing key pair (private key mode 0600)")
    keygen.add_argument("directory", help="where to write decision-signing.key and decision-signing.pub")
    keygen.set_defaults(func=cmd_keygen)

    console = sub.add_parser("console", help="a terminal conversation with approvals as prompts (local use)")
    console.add_argument("--config", help=CONFIG_HELP)
    console.set_defaults(func=cmd_console)

    audit = sub.add_parser("audit", help="read the audit trail of call transitions")
    audit.add_argument("--config", help="YAML configuration file (for the Redis settings)")
    audit.add_argument("--since", help="ISO time or age (10m, 2h, 7d); default: the latest entries")
    audit.add_argument("--limit", type=int, default=100, help="at most this many entries (default: %(default)s)")
    audit.add_argument("--call", help="only this call id")
    audit.add_argument("--json", action="store_true", help="print the entries as a JSON array instead of a table")
    audit.set_defaults(func=cmd_audit)

    timeline = sub.add_parser("timeline", help="print a thread's incident timeline (Markdown or JSON)")
    timeline.add_argument("--config", help="YAML configuration file (for the Redis settings)")
    timeline.add_argument("--thread", required=True, help="CHANNEL:TS of the thread's first message")
    timeline.add_argument("--format", choices=["md", "json"], default="md",
                          help="Markdown (md) or JSON (default: %(default)s)")
    timeline.add_argument("--since", help="ISO time or age (10m, 2h, 7d): only entries from then on")
    timeline.add_argument("--tz", help="also show times in this IANA zone (e.g. Europe/Paris)")
    timeline.set_defaults(func=cmd_timeline)
    for add in extra:
        add(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        code = int(args.func(args))
        sys.stdout.flush()  # inside the try: a reader that went away is noticed here, not at interpreter exit
        return code
    except (CliError, ConfigError, IntrospectionError, ArgumentsError, RedisUnavailable, ListenError) as exc:
        print(f"fisk-chatops: error: {exc}", file=sys.stderr)
        return EXIT_USAGE
    except BrokenPipeError:
        # `fisk-chatops tools --json | head`: the reader has what it wanted. Point stdout at /dev/null so the
        # interpreter's final flush cannot fail again, and exit quietly.
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
        return EXIT_BROKEN_PIPE


if __name__ == "__main__":
    sys.exit(main())
