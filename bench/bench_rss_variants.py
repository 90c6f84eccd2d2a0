"""What candidate cuts would take off a ready runner's resident memory, and what a change did (not a test):
``python bench/bench_rss_variants.py [--tree OLD_TREE]``.

Issue #13 asks for ``serve --role runner`` at <= 50 MiB when ready. ``bench_rss.py`` says where a runner's memory
goes; this bench measures cuts that change how the libraries behave rather than the project's code, before anyone
writes them into the code: each variant starts the same ``serve --role runner`` (``bench_rss.py``'s configuration,
one real Redis) with a ``sitecustomize`` module on ``PYTHONPATH`` that makes the change before anything else is
imported, interleaved with the unchanged runner, ``--runs`` times each; it prints each variant's median VmRSS when
``/readyz`` answers and its difference from the unchanged runner's median.

``--tree DIR`` adds another source tree's runner (``git worktree add /tmp/old main``) to the same interleaving, so a
change is measured against the code before it in one run. Then what this tree's runner imported: no pydantic since
the runner reads a configuration validated by a child process (README, runner RSS), which the bench checks.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.bench_rss import started, status_mib, write_config  # noqa: E402
from bench.support import ROOT, RedisProcess, Role  # noqa: E402
from tests.support.redis_server import free_port  # noqa: E402

#: name -> the sitecustomize that makes the change (None: the runner as it is). The earlier variants that changed
#: how pydantic builds models are gone with pydantic itself: a runner no longer imports it.
VARIANTS: dict[str, str | None] = {
    "unchanged": None,
    # redis-py imports the OpenTelemetry metrics API when it is installed (anthropic installs it), for metrics
    # that are off unless configured.
    "OpenTelemetry hidden from redis-py": "import sys\nsys.modules['opentelemetry'] = None\n",
}

IMPORTED_PROBE = """
import asyncio, json, os, sys, tempfile
config = os.path.join(tempfile.mkdtemp(), "config.yaml")
with open(config, "w") as f:
    json.dump({"applications": [{"binary": "/bin/true"}]}, f)
asyncio.run = lambda coroutine, **_: coroutine.close()  # everything `serve` imports before its event loop runs
import bot.cli
bot.cli.main(["serve", "--config", config, "--role", "runner"])
import bot.roles.workers, bot.approvals.execution, bot.health, bot.memory
print(len(sys.modules), sum(1 for m in sys.modules if m.split(".")[0] in ("pydantic", "pydantic_core")))
"""


def imported(tree: Path) -> str:
    """How many modules ``serve --role runner`` of ``tree`` has imported when its loop would start, and how
    many of them are pydantic's."""
    done = subprocess.run([sys.executable, "-c", IMPORTED_PROBE], capture_output=True, text=True, cwd=tree,
                          env={**os.environ, "PYTHONPATH": str(tree)}, check=True)
    modules, pydantic = done.stdout.split()
    return f"{modules} modules, {pydantic} of them pydantic's"


def cpu_seconds(role: Role) -> float:
    """CPU the process has used, with that of the children it has waited for (a runner's validating child)."""
    fields = Path(f"/proc/{role.process.pid}/stat").read_text().rsplit(")", 1)[1].split()
    return sum(int(value) for value in fields[11:15]) / os.sysconf("SC_CLK_TCK")  # utime stime cutime cstime


def variants(runs: int, tree: Path | None) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        server = RedisProcess(work / "redis")
        try:
            paths: dict[str, str] = {}
            for i, (name, source) in enumerate(VARIANTS.items()):
                if source is not None:
                    directory = work / f"variant{i}"
                    directory.mkdir()
                    (directory / "sitecustomize.py").write_text(source)
                    paths[name] = str(directory)
            names = [*VARIANTS, *([f"the tree {tree}"] if tree is not None else [])]
            ready: dict[str, list[float]] = {name: [] for name in names}
            cpu: dict[str, list[float]] = {name: [] for name in names}
            wall: dict[str, list[float]] = {name: [] for name in names}
            for _ in range(runs):
                for name in names:
                    env = {**os.environ, "REDIS_URL": server.url}
                    runs_from = ROOT
                    if name in paths:
                        env["PYTHONPATH"] = os.pathsep.join(p for p in (paths[name], env.get("PYTHONPATH")) if p)
                    elif name not in VARIANTS and tree is not None:
                        runs_from, env["PYTHONPATH"] = tree, str(tree)
                    config = write_config(work, free_port())
                    start = time.monotonic()
                    with started("runner", "runner", config, env, work, runs_from) as process:
                        wall[name].append(time.monotonic() - start)  # to within started()'s 0.2 s polling
                        ready[name].append(status_mib(process, "VmRSS"))
                        cpu[name].append(cpu_seconds(process))
                    time.sleep(0.2)
            base = statistics.median(ready["unchanged"])
            print(f"serve --role runner of {ROOT} when ready, median of {runs} interleaved starts each (VmRSS; CPU")
            print("seconds it and its waited-for children had used by then; wall seconds from start to ready):")
            for name, values in ready.items():
                median = statistics.median(values)
                print(f"  {name:<40} {median:6.1f} MiB ({median - base:+.1f}; {', '.join(f'{v:.1f}' for v in values)});"
                      f" CPU {statistics.median(cpu[name]):.2f} s ({', '.join(f'{v:.2f}' for v in cpu[name])});"
                      f" wall {statistics.median(wall[name]):.1f} s")
        finally:
            server.stop()


def main(args: argparse.Namespace) -> None:
    tree = Path(args.tree).resolve() if args.tree else None
    variants(args.runs, tree)
    print(f"what serve --role runner imports: this tree {imported(ROOT)}"
          + (f"; {tree} {imported(tree)}" if tree is not None else ""))


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3, help="starts of each variant, interleaved")
    parser.add_argument("--tree", help="another source tree whose runner joins the interleaving (the code before)")
    main(parser.parse_args())
