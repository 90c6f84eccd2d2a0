"""Benchmarks for bot/runner (a plain script, not a test). Run: .venv/bin/python bench/bench_execute.py

1. Per-call overhead of ``run_argv`` against a bare ``subprocess.run`` of the same short command, N calls of
   each, interleaved so machine noise hits both alike; prints medians and their ratio.
2. ``--secrets`` (or by default too): the hand-written redactor against detect-secrets' plugins on ~1 MB of
   log-like text with planted secrets; prints time per MB, the ratio, and how many planted secrets each finds.
   detect-secrets is optional (``pip install detect-secrets``); it is only measured when importable.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bot.fisk.environment import scrub_environment  # noqa: E402
from bot.runner import build_redactor, run_argv  # noqa: E402

COMMAND = ["/bin/echo", "hello", "world"]


async def bench_calls(n: int) -> None:
    """Median wall time of run_argv vs subprocess.run for the same command."""
    env = scrub_environment().env
    bare: list[float] = []
    ours: list[float] = []
    for _ in range(10):  # warm up both paths (imports, regex compilation, page cache)
        subprocess.run(COMMAND, stdin=subprocess.DEVNULL, capture_output=True, env=env, check=False)
        await run_argv(COMMAND, env=env, cwd=None, timeout=10)
    for _ in range(n):
        t0 = time.perf_counter()
        subprocess.run(COMMAND, stdin=subprocess.DEVNULL, capture_output=True, env=env, check=False)
        t1 = time.perf_counter()
        result = await run_argv(COMMAND, env=env, cwd=None, timeout=10)
        t2 = time.perf_counter()
        assert result.status == "finished" and result.output == "hello world\n", result
        bare.append(t1 - t0)
        ours.append(t2 - t1)
    mb, mo = statistics.median(bare), statistics.median(ours)
    print(f"calls: N={n} each, interleaved, command {' '.join(COMMAND)}")
    print(f"  subprocess.run median {mb * 1e3:.3f} ms")
    print(f"  run_argv       median {mo * 1e3:.3f} ms")
    print(f"  ratio run_argv/subprocess.run {mo / mb:.2f}  (overhead {1e3 * (mo - mb):+.3f} ms per call)")


def _corpus() -> tuple[str, list[str]]:
    """About 1 MB of log lines with a planted secret every 50 lines; returns the text and the secrets."""
    planted = [
        "xox" + "b-1234567890-1234567890123-AbCdEfGhIjKlMnOpQrStUvWx",
        "ghp" + "_AbCdEfGhIjKlMnOpQrStUvWxYz0123456789",
        "AKIA" + "IOSFODNN7EXAMPLE",
        "sk-" + "ant-api03-AbCdEfGhIjKlMnOpQrStUvWxYz0123456789_-AbCdEfGh",
        "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.SflKxwRJSMeKKF2QT4fwpMeJf36P",
        "gl" + "pat-AbCdEfGhIjKlMnOpQrSt",
        "S3cr3tPassw0rd",  # in a URL
        "hunter2hunter2",  # in password=
    ]
    carriers = [
        "token {}",
        "cloned with {}",
        "key id {}",
        "ANTHROPIC key {}",
        "session {}",
        "gitlab {}",
        "postgres://admin:{}@db.internal:5432/app",
        "password={}",
    ]
    lines: list[str] = []
    secrets: list[str] = []
    i = 0
    while sum(len(line) + 1 for line in lines) < 1_000_000:
        if i % 50 == 49:
            k = (i // 50) % len(planted)
            lines.append(f"2025-01-01T00:00:{i % 60:02d}Z WARN web-{i % 7} " + carriers[k].format(planted[k]))
            secrets.append(planted[k])
        else:
            lines.append(
                f"2025-01-01T00:00:{i % 60:02d}Z INFO web-{i % 7} GET /api/v1/items/{i} status=200 "
                f"latency={i % 97}ms bytes={i * 13 % 5000} request_id=req-{i:08x}"
            )
        i += 1
    return "\n".join(lines) + "\n", secrets


def bench_secrets(repeat: int) -> None:
    """Hand-written compiled redactor vs detect-secrets' plugins (detection only) on the same text."""
    text, secrets = _corpus()
    size_mb = len(text.encode()) / 1e6
    redactor = build_redactor()
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        redacted, count = redactor.redact(text)
        times.append(time.perf_counter() - t0)
    ours = min(times)
    ours_found = sum(1 for line in redacted.splitlines() if " WARN " in line and "[REDACTED:" in line)
    print(f"secrets: {size_mb:.2f} MB, {len(text.splitlines())} lines, {len(secrets)} planted secrets")
    print(f"  hand-written regex set: {ours * 1e3 / size_mb:.1f} ms/MB, redacted {ours_found}/{len(secrets)}")
    try:
        from detect_secrets.core.plugins.util import get_mapping_from_secret_type_to_class
        from detect_secrets.settings import default_settings
    except ImportError:
        print("  detect-secrets not installed: not measured")
        return
    with default_settings():
        plugins = [cls() for cls in get_mapping_from_secret_type_to_class().values()]
        lines = text.splitlines()
        t0 = time.perf_counter()
        flagged = set()
        for number, line in enumerate(lines, 1):
            for plugin in plugins:
                if plugin.analyze_line(filename="output.txt", line=line, line_number=number):
                    flagged.add(number)
        theirs = time.perf_counter() - t0
    planted_lines = [n for n, line in enumerate(lines, 1) if " WARN " in line]
    found = sum(1 for n in planted_lines if n in flagged)
    false_pos = len(flagged) - found
    print(
        f"  detect-secrets {len(plugins)} plugins (detect only, no redaction): {theirs * 1e3 / size_mb:.1f} ms/MB, "
        f"flagged {found}/{len(planted_lines)} planted lines, {false_pos} other lines"
    )
    print(f"  ratio detect-secrets/hand-written: {theirs / ours:.1f}x")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("-n", type=int, default=200, help="calls of each kind")
    parser.add_argument("--calls", action="store_true", help="only the per-call overhead benchmark")
    parser.add_argument("--secrets", action="store_true", help="only the secret detector comparison")
    args = parser.parse_args()
    both = not args.calls and not args.secrets
    if args.calls or both:
        asyncio.run(bench_calls(args.n))
    if args.secrets or both:
        bench_secrets(repeat=3)


if __name__ == "__main__":
    main()
