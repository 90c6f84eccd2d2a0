"""What candidate cuts would take off a ready runner's resident memory (not a test):
``python bench/bench_rss_variants.py``.

Issue #13 asks for ``serve --role runner`` at <= 50 MiB when ready. ``bench_rss.py`` says where a runner's memory
goes; this bench measures cuts that change how the libraries behave rather than the project's code, before anyone
writes them into the code: each variant starts the same ``serve --role runner`` (``bench_rss.py``'s configuration,
one real Redis) with a ``sitecustomize`` module on ``PYTHONPATH`` that makes the change before anything else is
imported, interleaved with the unchanged runner, ``--runs`` times each; it prints each variant's median VmRSS when
``/readyz`` answers and its difference from the unchanged runner's median.

Then a fresh interpreter estimates what a runner without pydantic would import: the modules ``bot.cli`` imports,
except pydantic (with pydantic-core, annotated-types, typing-inspection) and the project's own modules, then
``bot.sanitize`` (the project's largest part, which needs no pydantic). The project's other modules and the start-up
(about +1.5 MiB together without their pydantic models, see ``bench_rss.py``'s breakdown) come on top of it.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.bench_rss import started, status_mib, write_config  # noqa: E402
from bench.support import ROOT, RedisProcess  # noqa: E402
from tests.support.redis_server import free_port  # noqa: E402

#: name -> the sitecustomize that makes the change (None: the runner as it is).
VARIANTS: dict[str, str | None] = {
    "unchanged": None,
    # Every model built on first validation instead of at class creation: what a runner never validates
    # (audit entries, grants, the slack and incident sections' own validators) is never built.
    "pydantic models deferred (defer_build)": "import pydantic\n"
                                              "pydantic.BaseModel.model_config['defer_build'] = True\n",
    # Field(pattern=...) compiled by Python's re instead of pydantic-core's Rust regex (each one a few tens of KiB).
    # Not equivalent: Python's "$" also matches before a final newline.
    "pydantic patterns on Python's re": "import pydantic\n"
                                        "pydantic.BaseModel.model_config['regex_engine'] = 'python-re'\n",
    # redis-py imports the OpenTelemetry metrics API when it is installed (anthropic installs it), for metrics
    # that are off unless configured.
    "OpenTelemetry hidden from redis-py": "import sys\nsys.modules['opentelemetry'] = None\n",
}

WITHOUT_PYDANTIC_PROBE = """
import ctypes, gc, importlib, json, sys
names = json.loads(sys.argv[1])
def rss():
    gc.collect()
    ctypes.CDLL('libc.so.6').malloc_trim(0)
    with open('/proc/self/status') as f:
        return next(int(line.split()[1]) for line in f if line.startswith('VmRSS:')) / 1024
for name in names:
    try:
        importlib.import_module(name)
    except ImportError:  # a module that only another platform's code path imports
        pass
libraries = rss()
importlib.import_module('bot.sanitize')
print(f'{libraries:.1f} {rss():.1f} {len(names)}')
"""
PYDANTIC_FAMILY = ("pydantic", "pydantic_core", "annotated_types", "typing_inspection")


def without_pydantic() -> None:
    listed = subprocess.run([sys.executable, "-c", "import bot.cli, json, sys; print(json.dumps(list(sys.modules)))"],
                            capture_output=True, text=True, cwd=ROOT, check=True)
    names = [name for name in json.loads(listed.stdout)
             if name.split(".")[0] not in ("bot", *PYDANTIC_FAMILY) and not name.startswith("__")]
    done = subprocess.run([sys.executable, "-c", WITHOUT_PYDANTIC_PROBE, json.dumps(names)],
                          capture_output=True, text=True, cwd=ROOT, check=True)
    libraries, with_sanitize, count = done.stdout.split()
    print("a runner's imports without pydantic (fresh interpreter, freed heap given back): the", count,
          "other modules bot.cli imports")
    print(f"  {libraries} MiB, then bot.sanitize {with_sanitize} MiB (the project's other modules and start-up on top)")


def variants(runs: int) -> None:
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
            ready: dict[str, list[float]] = {name: [] for name in VARIANTS}
            for _ in range(runs):
                for name in VARIANTS:
                    env = {**os.environ, "REDIS_URL": server.url}
                    if name in paths:
                        env["PYTHONPATH"] = os.pathsep.join(p for p in (paths[name], env.get("PYTHONPATH")) if p)
                    with started("runner", "runner", write_config(work, free_port()), env, work) as process:
                        ready[name].append(status_mib(process, "VmRSS"))
                    time.sleep(0.2)
            base = statistics.median(ready["unchanged"])
            print(f"serve --role runner when ready, median of {runs} interleaved starts each (VmRSS):")
            for name, values in ready.items():
                median = statistics.median(values)
                print(f"  {name:<40} {median:6.1f} MiB ({median - base:+.1f}; {', '.join(f'{v:.1f}' for v in values)})")
        finally:
            server.stop()


def main(args: argparse.Namespace) -> None:
    variants(args.runs)
    without_pydantic()


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3, help="starts of each variant, interleaved")
    main(parser.parse_args())
