"""Resident memory of each role and of a combined process holding many open conversations (not a test):
``python bench/bench_rss.py``.

1. Each role alone: ``serve --role runner``, ``--role agent``, ``--role slack`` (HTTP mode) started against one
   real Redis, the loopback fake Slack and Messages API; VmRSS once ``/readyz`` answers and a few seconds later.
2. One combined ``serve`` (every role in one process, as a small install runs it): ``--conversations`` signed
   ``/fisk`` commands, each of which the scripted model answers with one tool call that needs approval; once every
   approval card is posted (so that many conversations are open, each with a call waiting in Redis), VmRSS and
   the peak (VmHWM) of the process.
3. First, what each part of a runner's imports adds to VmRSS in a fresh interpreter (where the memory goes): what
   stays once the heap freed by the import is given back (``gc.collect`` + ``malloc_trim``, as ``serve`` does
   once started: ``bot/memory.py``), and in brackets what the import added before that (its temporaries: RE2's
   compiler, for one, frees most of what it allocates). Then the floor of a combined process: the modules it loads,
   imported again in a fresh interpreter, library by library (each with what it pulls in first), then the
   project's own; what the libraries keep before any project module is what no change here can go under.
4. What the sanitizer's RE2 automata add once they have cleaned output they had not seen (``--sanitizer-rounds``
   of ~130 KiB each, 80 = 10.4 MiB): RE2 builds its DFA states while it searches and keeps them, up to
   ``MAX_MEM_PER_AUTOMATON`` per automaton, so a runner's RSS grows with the variety of the output it cleans
   (which an idle role does not show) until that budget stops it.
5. A runner after work, as an operator reads it: ``serve --role runner`` executes ``--work-calls`` approved calls
   of the compiled bench tool, one after another, each printing 64 KiB it had not printed before (log lines with
   fresh ids and values; then random base64 and token-like words, the sanitizer's worst case); VmRSS after each
   kind, and again once the process has been idle past ``bot/memory.py``'s trim interval.

The scripted model, the fake Slack's card watcher and the ``/fisk`` request are ``bench_load.py``'s.
"""

from __future__ import annotations

import argparse
import asyncio
import base64
import json
import os
import random
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.bench_load import (  # noqa: E402
    APPROVER,
    FIXTURE,
    SECRET,
    WRAPPER,
    Model,
    SlackWatch,
    start_conversation,
)
from bench.support import (  # noqa: E402
    APPROVER as TOOL_APPROVER,
)
from bench.support import (  # noqa: E402
    ROOT,
    RedisProcess,
    Role,
    build_tool,
    realistic_output,
    signer,
    tool_proposal,
    wait_until,
)
from bench.support import write_config as tool_config  # noqa: E402
from bot.approvals.decision_keys import ensure_key_pair  # noqa: E402
from bot.approvals.policy import ApprovalPolicy  # noqa: E402
from bot.approvals.store import CallStore  # noqa: E402
from tests.support.fake_slack import FakeSlack  # noqa: E402
from tests.support.redis_server import free_port  # noqa: E402

#: What a runner process imports, in an order where each step adds its own part (``bot.cli`` last: the rest). A
#: runner imports no pydantic and no PyYAML: its configuration is validated by a child process
#: (``bot/config_view.py``), and its records, results and fisk models are dataclasses.
RUNNER_IMPORTS = ("asyncio", "ssl", "redis.asyncio", "hiredis", "re2", "bot.fisk.model", "bot.sanitize",
                  "bot.approvals.store", "bot.config_view", "bot.roles", "bot.cli")
#: What the agent and slack roles import on top of a runner's (the combined process holds all of it): pydantic and
#: the configuration's models first. They sign decisions with libsodium and read their key without cryptography
#: (bot/approvals/signing_key.py), so cryptography is not among them where libsodium is installed.
OTHER_ROLE_IMPORTS = ("pydantic", "yaml", "bot.config", "anthropic", "bot.agent", "slack_bolt", "aiohttp",
                      "bot.slack")
IMPORT_PROBE = """
import ctypes, gc, importlib, sys
def return_free_heap():  # as bot.memory does, without importing what bot.memory imports
    gc.collect()
    ctypes.CDLL('libc.so.6').malloc_trim(0)
def rss():
    with open('/proc/self/status') as f:
        return next(int(line.split()[1]) for line in f if line.startswith('VmRSS:')) / 1024
return_free_heap()
print(f'interpreter {rss():.1f} {rss():.1f}')  # with ctypes, which a runner imports anyway
for name in sys.argv[1:]:
    before = rss()
    importlib.import_module(name)
    added = rss() - before
    return_free_heap()
    print(f'{name} {rss() - before:+.1f} {added:+.1f}')
"""


def import_breakdown() -> None:
    """VmRSS added by each part of what a runner imports, then by what the other roles add, in a fresh
    interpreter."""
    done = subprocess.run([sys.executable, "-c", IMPORT_PROBE, *RUNNER_IMPORTS, *OTHER_ROLE_IMPORTS],
                          capture_output=True, text=True, cwd=ROOT, check=True)
    parts = [line.split(" ") for line in done.stdout.splitlines()]
    shown = [f"{name} {kept} ({added}) MiB" if i else f"{name} {kept} MiB"
             for i, (name, kept, added) in enumerate(parts)]
    runner = len(RUNNER_IMPORTS) + 1
    print("what a runner's imports add to VmRSS, in this order (fresh interpreter; what stays once freed heap is")
    print("given back, and in brackets before that):")
    print("  " + ", ".join(shown[:runner]))
    print("then what the agent and slack roles add:")
    print("  " + ", ".join(shown[runner:]))


# What ``bot.sanitize`` keeps (VmRSS once freed heap is given back, as in IMPORT_PROBE) after what a runner imports
# before it, and the RE2 instructions of the automata it compiled: the sanitizer's part of a runner, at one commit.
SANITIZER_AT_PROBE = """
import ctypes, gc, importlib, sys
def return_free_heap():
    gc.collect()
    ctypes.CDLL('libc.so.6').malloc_trim(0)
def rss():
    with open('/proc/self/status') as f:
        return next(int(line.split()[1]) for line in f if line.startswith('VmRSS:')) / 1024
for name in ('asyncio', 'ssl', 'redis.asyncio', 're2'):
    importlib.import_module(name)
import re2
return_free_heap()
before = rss()
import bot.sanitize
return_free_heap()
automata = [o for o in gc.get_objects() if isinstance(o, re2._Regexp)]
print(f'{rss() - before:.1f} {sum(o._regexp.ProgramSize() for o in automata)} {len(automata)}')
"""


def sanitizer_at(revisions: list[str]) -> None:
    """What ``bot.sanitize``'s import keeps at each of these commits (``git archive`` of its ``bot/`` into a
    temporary directory, imported in a fresh interpreter): where a runner's growth came from, commit by commit."""
    print("what bot.sanitize's import keeps, by commit (fresh interpreter after asyncio, ssl, redis.asyncio and re2;")
    print("freed heap given back), with its RE2 automata's instructions:")
    for revision in revisions:
        when = subprocess.run(["git", "log", "-1", "--format=%h %cd", "--date=format:%m-%d %H:%M", revision],
                              capture_output=True, text=True, cwd=ROOT, check=True).stdout.strip()
        with tempfile.TemporaryDirectory() as tmp:
            archive = subprocess.run(["git", "archive", revision, "bot"], capture_output=True, cwd=ROOT, check=True)
            subprocess.run(["tar", "-x", "-C", tmp], input=archive.stdout, check=True)
            done = subprocess.run([sys.executable, "-c", SANITIZER_AT_PROBE], capture_output=True, text=True, cwd=tmp,
                                  env={**os.environ, "PYTHONPATH": tmp}, check=True)
        kept, instructions, automata = done.stdout.split()
        print(f"  {when}: {kept} MiB, {int(instructions):,} instructions in {automata} RE2 automata")


#: What a combined ``serve`` imports: each role's modules (their builders import them when the role starts), and
#: what the first model request, the first Slack request and the first log line import at run time.
COMBINED_IMPORTS = ("bot.cli", "bot.roles", "bot.agent.loop", "bot.agent.model", "bot.agent.worker", "bot.slack.app",
                    "bot.slack.client", "bot.incidents.service", "bot.incidents.settings", "bot.logs", "httpcore2",
                    "h11", "anyio._backends._asyncio", "opentelemetry.propagate", "truststore",
                    "slack_bolt.listener_matcher.async_builtins")
#: The libraries of a combined process, in the order they are charged (each with what it pulls in first)
LIBRARIES = ("redis", "pydantic", "re2", "yaml", "anthropic", "aiohttp", "slack_sdk", "slack_bolt")
FLOOR_PROBE = """
import ctypes, gc, importlib, sys
def return_free_heap():
    gc.collect()
    ctypes.CDLL('libc.so.6').malloc_trim(0)
def rss():
    with open('/proc/self/status') as f:
        return next(int(line.split()[1]) for line in f if line.startswith('VmRSS:')) / 1024
names = sys.stdin.read().split()
def load(chosen):
    for name in names:
        if chosen(name):
            try:
                importlib.import_module(name)
            except Exception:  # a module that only imports in its package's context: its package loads it
                pass
    return_free_heap()
return_free_heap()
print(f'interpreter|{rss():.1f}')
groups = [('stdlib', lambda n: n.split('.')[0] in sys.stdlib_module_names)]
groups += [(lib, lambda n, lib=lib: n == lib or n.startswith(lib + '.')) for lib in sys.argv[1:]]
groups += [('other libraries', lambda n: not n.startswith('bot.') and n != 'bot'), ('the project', lambda n: True)]
for name, chosen in groups:
    before = rss()
    load(chosen)
    print(f'{name}|{rss() - before:+.1f}|{rss():.1f}|{len(sys.modules)}')
"""


def library_floor(flags: tuple[str, ...] = ()) -> None:
    """What a combined process's libraries keep before any of the project's modules is imported: the modules a
    combined ``serve`` loads (``COMBINED_IMPORTS`` in one interpreter), imported again in a fresh one, library by
    library, then the project's own. The libraries' total is the floor no change in this project can go under.
    ``flags`` are the fresh interpreter's options (``--floor-only`` also prints the floor under ``-OO`` and
    ``-X no_debug_ranges``, the interpreter-wide cuts the README weighs and does not take)."""
    listed = subprocess.run([sys.executable, "-c", "import importlib, sys\nfor n in sys.argv[1:]:\n"
                             "    importlib.import_module(n)\nprint('\\n'.join(sorted(sys.modules)))",
                             *COMBINED_IMPORTS], capture_output=True, text=True, cwd=ROOT, check=True).stdout
    names = [name for name in listed.split() if name != "__main__"]
    done = subprocess.run([sys.executable, *flags, "-c", FLOOR_PROBE, *LIBRARIES], input="\n".join(names),
                          capture_output=True, text=True, cwd=ROOT, check=True)
    rows = [line.split("|") for line in done.stdout.splitlines()]
    interpreter = rows[0][1]
    parts = rows[1:]
    libraries = next(row for row in parts if row[0] == "other libraries")
    project = parts[-1]
    started = f" started with {' '.join(flags)}" if flags else ""
    print(f"what a combined process's {len(names)} modules keep, in a fresh interpreter{started} (each group with")
    print("what it pulls in first; freed heap given back):")
    print(f"  interpreter {interpreter} MiB, " + ", ".join(f"{row[0]} {row[1]}" for row in parts[:-1]) + " MiB")
    print(f"  libraries alone: {libraries[2]} MiB ({libraries[3]} modules); with the project's own modules "
          f"{project[1]} MiB: {project[2]} MiB")


SANITIZER_PROBE = """
import base64, ctypes, random, sys
from bot.memory import return_free_heap
from bot.sanitize import redact
def rss():
    with open('/proc/self/status') as f:
        return next(int(line.split()[1]) for line in f if line.startswith('VmRSS:')) / 1024
class MallInfo2(ctypes.Structure):  # glibc's mallinfo2(): what malloc hands out (RE2's C++ heap among it)
    _fields_ = [(name, ctypes.c_size_t) for name in
                'arena ordblks smblks hblks hblkhd usmblks fsmblks uordblks fordblks keepcost'.split()]
libc = ctypes.CDLL('libc.so.6')
libc.mallinfo2.restype = MallInfo2
def malloc_in_use():
    return libc.mallinfo2().uordblks / 2**20
rng = random.Random(13)
heads = ['token=', 'password: ', 'key_id=', 'https://user:pw@host', 'AKIA', 'eyJ', 'secret', 'sk-', '=', '\\n', 'id ']
return_free_heap()
start, heap, cleaned = rss(), malloc_in_use(), 0
for step in range(1, int(sys.argv[1]) + 1):
    blob = base64.b64encode(rng.randbytes(48 << 10)).decode()
    words = ' '.join(rng.choice(heads) + base64.b64encode(rng.randbytes(rng.randint(1, 40))).decode()
                     for _ in range(2000))
    redact(blob)
    redact(words)
    cleaned += len(blob) + len(words)
    if step in (1, 2) or step % 20 == 0:
        return_free_heap()
        print(f'{cleaned / 2**20:.1f} {rss() - start:.1f} {malloc_in_use() - heap:.1f}')
"""

# The same text, each growth of malloc's in-use bytes charged to the automaton whose RE2 search it happened in
# (the search's own Match, wrapped): which automata hold the states and work queues.
AUTOMATA_PROBE = """
import base64, ctypes, random, sys
from collections import Counter
from bot.memory import return_free_heap
from bot.sanitize.automata import CONTEXT_PASS, TOKEN_PASS
from bot.sanitize import redact
class MallInfo2(ctypes.Structure):
    _fields_ = [(name, ctypes.c_size_t) for name in
                'arena ordblks smblks hblks hblkhd usmblks fsmblks uordblks fordblks keepcost'.split()]
libc = ctypes.CDLL('libc.so.6')
libc.mallinfo2.restype = MallInfo2
grown, searches = Counter(), Counter()
def charged(name, match):
    def search(*args):
        before = libc.mallinfo2().uordblks
        found = match(*args)
        grown[name] += libc.mallinfo2().uordblks - before
        searches[name] += 1
        return found
    return search
regexps = {}
for pass_name, detector_pass in (('token', TOKEN_PASS), ('context', CONTEXT_PASS)):
    for i, automaton in enumerate(detector_pass.finders):
        for attribute, regexp in (('_scan', automaton.search), ('_verify', automaton.finder),
                                  ('_searched', automaton.searched)):
            if regexp is not None:
                name = f'{pass_name}[{i}]{attribute.replace("_verify", "_finder")}'
                regexps[name] = regexp
                object.__setattr__(automaton, attribute, charged(name, getattr(automaton, attribute)))
rng = random.Random(13)
heads = ['token=', 'password: ', 'key_id=', 'https://user:pw@host', 'AKIA', 'eyJ', 'secret', 'sk-', '=', '\\n', 'id ']
return_free_heap()
for step in range(int(sys.argv[1])):
    redact(base64.b64encode(rng.randbytes(48 << 10)).decode())
    redact(' '.join(rng.choice(heads) + base64.b64encode(rng.randbytes(rng.randint(1, 40))).decode()
                    for _ in range(2000)))
for name, size in grown.most_common():
    if size >= 1 << 17:
        print(f'{name} {size / 2**20:.1f} {searches[name]} {regexps[name]._regexp.ProgramSize()}')
"""


def sanitizer_growth(rounds: int, by_automaton: bool) -> None:
    """VmRSS the sanitizer's automata add while they clean text they have not seen (random base64, and lines of
    assignments and token prefixes with random values), in a fresh interpreter; beside it what malloc hands out
    (glibc's in-use bytes: RE2's programs, DFA states and work queues are C++ heap, so the two rising together
    says where the growth is). With ``by_automaton``, the same text again, each growth charged to the automaton
    that searched when it happened."""
    done = subprocess.run([sys.executable, "-c", SANITIZER_PROBE, str(rounds)], capture_output=True, text=True,
                          cwd=ROOT, check=True)
    steps = [line.split(" ") for line in done.stdout.splitlines()]
    from bot.sanitize.automata import MAX_MEM_PER_AUTOMATON

    print("the sanitizer's RE2 automata, while cleaning unseen text (fresh interpreter, after the import;")
    print(f"RE2 budget {MAX_MEM_PER_AUTOMATON >> 20} MiB per automaton): VmRSS added (malloc in use added)")
    print("  " + ", ".join(f"{cleaned} MiB cleaned +{added} (+{heap}) MiB" for cleaned, added, heap in steps))
    if not by_automaton:
        return
    done = subprocess.run([sys.executable, "-c", AUTOMATA_PROBE, str(rounds)], capture_output=True, text=True,
                          cwd=ROOT, check=True)
    print("  malloc in use added while each automaton searched (MiB, searches, instructions), 0.1 MiB or more:")
    print("  " + ", ".join(f"{name} {size} ({searches}, {instructions})"
                           for name, size, searches, instructions in (line.split(" ")
                                                                      for line in done.stdout.splitlines())))


def mapped_split(role: Role) -> str:
    """Anonymous memory (the process's own heap and objects) against file-backed pages (shared libraries, which
    other processes on the node map too)."""
    fields = {}
    for line in Path(f"/proc/{role.process.pid}/smaps_rollup").read_text().splitlines()[1:]:
        name, value = line.split(":", 1)
        fields[name] = int(value.split()[0]) / 1024
    return f"anonymous {fields['Anonymous']:.1f} MiB, file-backed {fields['Rss'] - fields['Anonymous']:.1f} MiB"


def mapped_files(role: Role, top: int = 6) -> str:
    """The shared libraries and extension modules with the most resident pages (file-backed: their code and
    read-only data, paged in from the page cache as they run)."""
    resident: dict[str, int] = {}
    mapping = ""
    for line in Path(f"/proc/{role.process.pid}/smaps").read_text().splitlines():
        fields = line.split()
        if "-" in fields[0] and len(fields) >= 5 and ":" in fields[3]:  # a mapping's header line
            mapping = Path(fields[5]).name.split(".cpython-")[0] if len(fields) > 5 and "/" in fields[5] else ""
        elif fields[0] == "Rss:" and mapping:
            resident[mapping] = resident.get(mapping, 0) + int(fields[1])
    biggest = sorted(resident.items(), key=lambda item: -item[1])[:top]
    return ", ".join(f"{name} {kib / 1024:.1f}" for name, kib in biggest)


def status_mib(role: Role, field: str) -> float:
    for line in Path(f"/proc/{role.process.pid}/status").read_text().splitlines():
        if line.startswith(f"{field}:"):
            return int(line.split()[1]) / 1024
    raise RuntimeError(f"no {field} for {role.name}")


def write_config(work: Path, slack_port: int) -> Path:
    opsctl = work / "bin" / "opsctl"
    opsctl.parent.mkdir(exist_ok=True)
    opsctl.write_text(WRAPPER.format(fixture=FIXTURE, log=work / "executions.log"))
    opsctl.chmod(0o755)
    private, public = ensure_key_pair(work / "keys")
    config = work / f"config-{slack_port}.yaml"
    config.write_text(json.dumps({
        "applications": [{"binary": str(opsctl)}],
        "approval": {"approvers": {"users": [APPROVER]}},
        "decisions": {"signing_key_file": str(private), "public_key_files": [str(public)]},
        "agent": {"user_rate_limit_per_minute": 100000},
        "slack": {"mode": "http", "http_host": "127.0.0.1", "http_port": slack_port,
                  "rate_limit": {"per_user": 0, "per_channel": 0}},
        "redis": {"state_dir": str(work / "state")},  # not the tree's .state: see bench.support.write_config
        "shutdown_grace_seconds": 5,
        "log_level": "WARNING",
    }))
    return config


@contextmanager
def started(role: str, name: str, config: Path, env: dict[str, str], work: Path, tree: Path = ROOT) -> Iterator[Role]:
    process = Role(role, name, config, env, work / "logs", tree)
    try:
        wait_until(process.ready, 90, f"{name} ready", 0.2)
        yield process
    finally:
        process.stop()


def varied_output(rng: random.Random, size: int) -> bytes:
    """Random base64 and assignments or token prefixes with random values: text no automaton has seen."""
    heads = ["token=", "password: ", "key_id=", "https://user:pw@host", "AKIA", "eyJ", "secret", "sk-", "=", "id "]
    words = " ".join(rng.choice(heads) + base64.b64encode(rng.randbytes(rng.randint(1, 40))).decode()
                     for _ in range(size // 40))
    return (base64.b64encode(rng.randbytes(size // 3)).decode() + "\n" + words).encode()[:size]


def fresh_log_lines(n: int, size: int) -> bytes:
    """``realistic_output`` with this call's own ids and numbers, so no two calls print the same lines."""
    return realistic_output(size).replace(b"req-", f"req-{n:06x}".encode()).replace(b"web-", f"web{n % 13}-".encode())


async def work_calls(redis_url: str, work: Path, binary: Path, payload: Path, calls: int,
                     output: Callable[[int], bytes]) -> None:
    """Approve ``calls`` calls one after another (as the slack role would), each printing ``output(n)``, and wait
    for each to finish."""
    from redis.asyncio import Redis

    client = Redis.from_url(redis_url)
    store = CallStore(client, signer=signer(work))
    policy = ApprovalPolicy.model_validate({"approvers": {"users": [TOOL_APPROVER]}})
    proposal = tool_proposal(binary)
    try:
        for n in range(calls):
            payload.write_bytes(output(n))
            (record,) = await store.propose(f"rss:c{n}", [proposal], policy, "UREQ")
            await store.approve(record.id, TOOL_APPROVER, [], policy, argv_hash=record.argv_hash, known=record)
            deadline = time.monotonic() + 30
            while (await store.get(record.id)).state != "finished":
                if time.monotonic() > deadline:
                    raise TimeoutError(f"call {record.id} did not finish in 30 s")
                await asyncio.sleep(0.005)
    finally:
        await client.aclose()


def runner_after_work(redis_url: str, work: Path, calls: int, idle: float) -> None:
    binary = build_tool(work / "tool")
    payload = work / "payload.txt"
    config = tool_config(work, binary, name="runner-work.yaml")
    env = {**os.environ, "REDIS_URL": redis_url, "BENCH_PAYLOAD": str(payload)}
    rng = random.Random(13)
    print(f"a runner after work (serve --role runner; {calls} calls of each kind, 64 KiB of new output each):")
    with started("runner", "runner-work", config, env, work) as process:
        print(f"  ready {status_mib(process, 'VmRSS'):6.1f} MiB, peak so far {status_mib(process, 'VmHWM'):6.1f} MiB"
              f" ({mapped_split(process)})")
        for kind, output in (("log lines", lambda n: fresh_log_lines(n, 64 << 10)),
                             ("random base64 and token-like words", lambda n: varied_output(rng, 64 << 10))):
            asyncio.run(work_calls(redis_url, work, binary, payload, calls, output))
            print(f"  after {calls} calls printing {kind}: {status_mib(process, 'VmRSS'):6.1f} MiB, "
                  f"peak {status_mib(process, 'VmHWM'):6.1f} MiB ({mapped_split(process)})")
        time.sleep(idle)
        print(f"  then idle {idle:.0f} s: {status_mib(process, 'VmRSS'):6.1f} MiB ({mapped_split(process)})")


def role_env(redis_url: str, slack: FakeSlack, model: Model) -> dict[str, str]:
    return {**os.environ, "REDIS_URL": redis_url, "SLACK_BOT_TOKEN": "xoxb-bench", "SLACK_SIGNING_SECRET": SECRET,
            "SLACK_API_URL": slack.api_url, "ANTHROPIC_API_KEY": "bench-key", "ANTHROPIC_BASE_URL": model.base_url}


def interpreter_settings(env: dict[str, str]) -> str:
    """The anthropic SDK a role started with ``env`` imports, and the interpreter settings that change memory."""
    sdk = subprocess.run([sys.executable, "-c", "import anthropic; print(anthropic.__version__)"], env=env,
                         capture_output=True, text=True, cwd=ROOT, check=True).stdout.strip()
    settings = [f"{name}={env[name]}" for name in ("PYTHONOPTIMIZE", "PYTHONNODEBUGRANGES", "DEFER_PYDANTIC_BUILD")
                if env.get(name)]
    return f"anthropic {sdk}" + "".join(f", {setting}" for setting in settings)


def roles_alone(redis_url: str, work: Path) -> None:
    with FakeSlack() as slack, Model(calls_per_conversation=1) as model:
        env = role_env(redis_url, slack, model)
        print("each role alone, idle (VmRSS when ready / 5 s later):")
        for role in ("runner", "agent", "slack"):
            with started(role, role, write_config(work, free_port()), env, work) as process:
                ready = status_mib(process, "VmRSS")
                time.sleep(5)
                print(f"  serve --role {role:<7} {ready:6.1f} MiB / {status_mib(process, 'VmRSS'):6.1f} MiB"
                      f" ({mapped_split(process)})")
                if role == "runner":
                    print(f"    its most resident files (MiB): {mapped_files(process)}")


def combined(redis_url: str, work: Path, conversations: int, timeout: float,
             settings: tuple[str, ...] = ()) -> None:
    """One ``serve`` with every role, ``conversations`` open (step 2). ``settings`` (``NAME=VALUE``) go to that
    process's environment only (``PYTHONOPTIMIZE=2`` would strip the bench's own docstrings too), and another SDK
    comes first on ``PYTHONPATH``: how the README weighs them."""
    with FakeSlack() as slack, Model(calls_per_conversation=1) as model:
        env = {**role_env(redis_url, slack, model), **dict(setting.split("=", 1) for setting in settings)}
        port = free_port()
        watch = SlackWatch(slack)
        with started("all", "combined", write_config(work, port), env, work) as process:
            idle = status_mib(process, "VmRSS")
            url = f"http://127.0.0.1:{port}/slack/events"
            t0 = time.monotonic()
            for n in range(conversations):
                start_conversation(url, slack, n)
            wait_until(lambda: len(watch.cards) >= conversations, timeout, f"{conversations} approval cards", 0.2)
            took = time.monotonic() - t0
            time.sleep(2)  # let the last turns settle
            print(f"combined serve (slack + agent + runner in one process), {conversations} open "
                  f"conversations (each with a call awaiting approval; cards posted in {took:.1f} s; "
                  f"{interpreter_settings(env)}):")
            print(f"  idle after start {idle:6.1f} MiB; with the conversations open "
                  f"{status_mib(process, 'VmRSS'):6.1f} MiB, peak {status_mib(process, 'VmHWM'):6.1f} MiB"
                  f" ({mapped_split(process)})")


def main(args: argparse.Namespace) -> None:
    if args.floor_only:
        for flags in ((), ("-OO",), ("-X", "no_debug_ranges")):
            library_floor(flags)
        return
    if args.sanitizer_at:
        sanitizer_at(args.sanitizer_at)
        return
    if args.sanitizer_only:
        sanitizer_growth(args.sanitizer_rounds, args.by_automaton)
        return
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        server = RedisProcess(work / "redis")
        try:
            if args.work_only:
                runner_after_work(server.url, work, args.work_calls, args.idle)
                return
            if args.combined_only:
                combined(server.url, work, args.conversations, args.timeout, tuple(args.role_env))
                return
            import_breakdown()
            library_floor()
            sanitizer_growth(args.sanitizer_rounds, args.by_automaton)
            roles_alone(server.url, work)
            combined(server.url, work, args.conversations, args.timeout)
            runner_after_work(server.url, work, args.work_calls, args.idle)
        finally:
            server.stop()


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--conversations", type=int, default=500)
    parser.add_argument("--timeout", type=float, default=300)
    parser.add_argument("--sanitizer-only", action="store_true", help="only step 4 (the sanitizer's growth)")
    parser.add_argument("--sanitizer-at", nargs="+", metavar="REV",
                        help="only what bot.sanitize's import keeps at each of these commits, and its RE2 instructions")
    parser.add_argument("--floor-only", action="store_true",
                        help="only the combined process's floor (step 3's second part), plain, with -OO and with"
                             " -X no_debug_ranges")
    parser.add_argument("--work-only", action="store_true", help="only step 5 (a runner after work)")
    parser.add_argument("--combined-only", action="store_true",
                        help="only step 2 (the combined process), e.g. with PYTHONOPTIMIZE=2 or another SDK on"
                             " PYTHONPATH")
    parser.add_argument("--role-env", action="append", default=[], metavar="NAME=VALUE",
                        help="with --combined-only: set in the combined process's environment only (repeatable)")
    parser.add_argument("--work-calls", type=int, default=150, help="calls of each kind in step 5")
    parser.add_argument("--idle", type=float, default=70, help="seconds step 5 waits idle before the last reading")
    parser.add_argument("--by-automaton", action="store_true",
                        help="step 4 also charges the growth to each automaton (a second fresh interpreter)")
    parser.add_argument("--sanitizer-rounds", type=int, default=80,
                        help="rounds of ~130 KiB of unseen text the sanitizer probe cleans (80: 10.4 MiB)")
    main(parser.parse_args())
