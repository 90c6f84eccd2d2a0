"""The third acceptance check's own adversarial inputs for the sanitizer (issue #11, `accept3`), timed beside
``Bearer abcdefgh\\n`` in the same run.

    python bench/bench_accept3_speed.py [--repeat 5] [--only NAME ...]

Each input is built at 64 KiB and 1 MiB, every repeat on text not seen before (its counters start elsewhere),
after one warm-up call on other text. Printed per input: MB/s at 64 KiB and at 1 MiB (CPU time of
``sanitize_output`` with no cap, median of the repeats), time(1 MiB) / time(64 KiB) (16 is linear), and whether
it is below 20 MB/s or below Bearer's MB/s at the same size in this run. The load average is printed first and
last: the machine is shared.
"""

from __future__ import annotations

import argparse
import base64
import functools
import os
import random
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bot.sanitize import sanitize_output  # noqa: E402
from tests.corpora.accept3_long import certificate_bundle, journalctl, kubectl_describe_pods, terraform_plan  # noqa: E402

KIB64, MIB = 64 << 10, 1 << 20


def _repeat_units(unit: Callable[[int], str], size: int, start: int) -> bytes:
    parts: list[str] = []
    total, i = 0, start
    while total < size:
        piece = unit(i)
        parts.append(piece)
        total += len(piece)
        i += 1
    return "".join(parts).encode()[:size]


def _b64_stream(size: int, seed: int) -> str:
    r = random.Random(seed)
    return base64.b64encode(bytes(r.getrandbits(8) for _ in range(size * 3 // 4 + 3))).decode()


def _soup(size: int, seed: int) -> bytes:
    r = random.Random(seed)
    words = ("password", "token", "secret", "key=", "Bearer ", "://", "@", "eyJ", "-----BEGIN", "AccountKey=",
             "sig=", "Password=", "pwd", ":", "=", "\"", "AKIA", "ghp_", "xoxb-", "sk-", "Basic ", "data:", "auth")
    out: list[str] = []
    total = 0
    while total < size:
        w = r.choice(words) + (str(r.randrange(1000)) if r.random() < 0.3 else "")
        out.append(w)
        total += len(w)
    return "".join(out).encode()[:size]


# Realistic long outputs (no secret in them): the target is >= 50 MB/s.
REALISTIC: dict[str, Callable[[int, int], bytes]] = {
    "realistic: kubectl describe pods": lambda size, s: kubectl_describe_pods(size, s).encode()[:size],
    "realistic: journalctl": lambda size, s: journalctl(size, s).encode()[:size],
    "realistic: terraform plan": lambda size, s: terraform_plan(size, s).encode()[:size],
    "realistic: CA certificate bundle": lambda size, s: certificate_bundle(size, s).encode()[:size],
    # The same bundle in a ConfigMap's block scalar (``kubectl get cm kube-root-ca.crt -o yaml``): indented lines.
    "realistic: CA bundle in a ConfigMap": lambda size, s: _in_config_map(certificate_bundle(size, s), size),
}


def _in_config_map(bundle: str, size: int) -> bytes:
    lines = "".join(f"    {line}\n" for line in bundle.splitlines())
    return f"apiVersion: v1\ndata:\n  ca.crt: |\n{lines}kind: ConfigMap\n".encode()[:size]

# name -> builder(size, start): every builder returns exactly `size` bytes (or close), different for each start
INPUTS: dict[str, Callable[[int, int], bytes]] = {
    "Bearer abcdefgh\\n (reference)": lambda size, s: _repeat_units(lambda i: "Bearer abcdefgh\n", size, s),
    "plain log lines (no trigger)": lambda size, s: _repeat_units(
        lambda i: f"2026-12-02T01:00:{i % 60:02d}Z INFO worker {i} processed batch of {i % 97} items in {i % 13} ms\n",
        size, s),
    "'password=' no whitespace": lambda size, s: _repeat_units(lambda i: "password=", size, s),
    "'token' no whitespace": lambda size, s: _repeat_units(lambda i: "token", size, s),
    "one line of base64": lambda size, s: _b64_stream(size, s).encode()[:size],
    "base64 64-col lines, no PEM header": lambda size, s: "\n".join(
        (lambda t: [t[j:j + 64] for j in range(0, len(t), 64)])(_b64_stream(size, s))).encode()[:size],
    "base64 76-col lines (base64 FILE)": lambda size, s: "\n".join(
        (lambda t: [t[j:j + 76] for j in range(0, len(t), 76)])(_b64_stream(size, s))).encode()[:size],
    "hex dump lines (xxd -p)": lambda size, s: "\n".join(
        (lambda t: [t[j:j + 60] for j in range(0, len(t), 60)])(_b64_stream(size, s).encode().hex())).encode()[:size],
    "unterminated PEM (BEGIN + base64)": lambda size, s: ("-----BEGIN RSA PRIVATE KEY-----\n" + "\n".join(
        (lambda t: [t[j:j + 64] for j in range(0, len(t), 64)])(_b64_stream(size, s)))).encode()[:size],
    "'-----BEGIN PRIVATE KEY-----\\n' x N": lambda size, s: _repeat_units(
        lambda i: "-----BEGIN PRIVATE KEY-----\n", size, s),
    "near-candidates 'key=v{i} ' one line": lambda size, s: _repeat_units(lambda i: f"key=v{i} ", size, s),
    "env 'A{i}_PASSWORD=x{i}\\n'": lambda size, s: _repeat_units(lambda i: f"A{i}_PASSWORD=x{i}\n", size, s),
    "urls 'http://u{i}:p{i}@h{i} '": lambda size, s: _repeat_units(lambda i: f"http://u{i}:p{i}@h{i} ", size, s),
    "yaml Secret docs (many small)": lambda size, s: _repeat_units(
        lambda i: f"---\napiVersion: v1\nkind: Secret\nmetadata:\n  name: s{i}\ndata:\n  p{i}: YWJj{i % 10}\n",
        size, s),
    "kubectl List of Secret items": lambda size, s: ("apiVersion: v1\nitems:\n" + _repeat_units(
        lambda i: (f"- apiVersion: v1\n  data:\n    password: YWJj{i % 10}\n  kind: Secret\n"
                   f"  metadata:\n    name: s{i}\n"), size, s).decode()).encode()[:size],
    "echoed '$ vault kv get -field=password s{i}' + value": lambda size, s: _repeat_units(
        lambda i: f"$ vault kv get -field=password secret/s{i}\nv{i}\n", size, s),
    "'+ echo $DB_PASSWORD{i}' + value": lambda size, s: _repeat_units(
        lambda i: f"+ echo $DB_PASSWORD{i}\nx{i}\n", size, s),
    "json Secret docs one per line": lambda size, s: _repeat_units(
        lambda i: f'{{"kind":"Secret","metadata":{{"name":"s{i}"}},"data":{{"k{i}":"YWJj"}}}}\n', size, s),
    "docker auths one per line": lambda size, s: _repeat_units(
        lambda i: f'{{"auths":{{"r{i}.example":{{"auth":"dTp{i % 10}"}}}}}}\n', size, s),
    "'eyJhbGciOi.' x N": lambda size, s: _repeat_units(lambda i: "eyJhbGciOi.", size, s),
    "'Password=a{i};' one line": lambda size, s: _repeat_units(lambda i: f"Password=a{i};", size, s),
    "'AccountKey=' x N": lambda size, s: _repeat_units(lambda i: "AccountKey=", size, s),
    "'?sig=a{i}&' query soup": lambda size, s: _repeat_units(lambda i: f"?sig=a{i}&x=", size, s),
    "'mysql -pX{i} ' argv soup": lambda size, s: _repeat_units(lambda i: f"mysql -pX{i} ", size, s),
    "unterminated '\"password\":\"' + 1 line": lambda size, s: ('"password":"' + "a" * size).encode()[:size],
    "trigger soup (random, no blanks)": _soup,
    "NBSP/zero-width 'password\\xa0=\\u200bx{i} '": lambda size, s: _repeat_units(
        lambda i: f"password\u00a0=\u200bx{i} ", size, s),
    "ANSI 'password=' coloured lines": lambda size, s: _repeat_units(
        lambda i: f"\x1b[1mpassword\x1b[0m=\x1b[33mv{i}\x1b[0m\n", size, s),
    "table 'NAME PASSWORD TOKEN' rows": lambda size, s: _repeat_units(
        lambda i: ("NAME      PASSWORD      TOKEN      AGE\n" if i % 50 == 0
                   else f"n{i}      p{i}      t{i}      3d\n"), size, s),
    "psql '| password | a{i} |' rows": lambda size, s: _repeat_units(lambda i: f"| password | a{i} |\n", size, s),
    "deep JSON password keys": lambda size, s: _repeat_units(
        lambda i: '{"a":{"b":{"c":{"password":"v' + str(i) + '","token":"t' + str(i) + '"}}}}', size, s),
    "'@tcp(' DSN soup": lambda size, s: _repeat_units(lambda i: f"u{i}:p@tcp(h{i}:3306)/d ", size, s),
    "':' colon soup 'a:b:c:' one line": lambda size, s: _repeat_units(lambda i: f"a{i}:b:", size, s),
    "'secretKeyRef' describe env lines": lambda size, s: _repeat_units(
        lambda i: f"      P{i}_PASSWORD:  <set to the key 'password' in secret 's{i}'>  Optional: false\n", size, s),
}


def cpu(work: Callable[[], object]) -> float:
    t0 = time.process_time()
    work()
    return time.process_time() - t0


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--only", nargs="*", default=())
    args = parser.parse_args()
    INPUTS.update(REALISTIC)
    names = [n for n in INPUTS if not args.only or n.startswith("Bearer") or any(o in n for o in args.only)]
    print(f"load before: {os.getloadavg()}")
    sanitize_output(b"warm up: password=abc token=xyz https://u:p@h/\n" * 100, output_limit=1 << 30)
    results: dict[str, dict[int, float]] = {}
    for name in names:
        build = INPUTS[name]
        sanitize_output(build(8 << 10, 10_000_000), output_limit=1 << 30)  # warm this input's states on other text
        per_size: dict[int, float] = {}
        for size in (KIB64, MIB):
            repeat = args.repeat if size == KIB64 else max(3, args.repeat // 2)
            times = []
            for k in range(repeat):
                data = build(size, 1 + k * 1_000_003)
                times.append(cpu(functools.partial(sanitize_output, data, output_limit=1 << 30)))
            per_size[size] = statistics.median(times)
        results[name] = per_size
        print(f"  measured {name}", file=sys.stderr)
    bearer = results[names[0]]
    print(f"{'input':48} {'64K MB/s':>9} {'1M MB/s':>9} {'ratio':>6}  verdict")
    for name, t in results.items():
        mbs = {size: size / t[size] / 1e6 for size in t}
        ratio = t[MIB] / t[KIB64]
        flags = []
        if name.startswith("realistic") and min(mbs.values()) < 50:
            flags.append("<50MB/s(realistic)")
        if min(mbs.values()) < 20:
            flags.append("<20MB/s")
        if any(mbs[size] < size / bearer[size] / 1e6 for size in mbs) and name != names[0]:
            flags.append("<Bearer")
        if ratio > 20:
            flags.append("ratio>20")
        print(f"{name:48} {mbs[KIB64]:9.1f} {mbs[MIB]:9.1f} {ratio:6.1f}  {' '.join(flags) or 'ok'}")
    print(f"load after: {os.getloadavg()}")


if __name__ == "__main__":
    main()
