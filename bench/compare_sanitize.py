"""Byte-identical outputs of two sanitizer trees: the check that a speed change (issue #11) changed no output.

    python bench/compare_sanitize.py OLD_TREE [NEW_TREE] [--lines 4000]

Both trees sanitize the same inputs, in the same order, each in a process of its own (``sanitize_output``, cap
off): the leak and benign corpora of this tree, generated environment, diff, ini and YAML lines (one per text and
in dense blocks that spend the density budget), every adversarial input of ``bench_sanitize`` at 8 and 64 KiB
with two seeds, real tool output (accept3's long outputs, accept4's long mixes) and CA bundles with candidates
planted at the edges of their base64 bodies (``pem_edges``). The order matters: the verdict memos and remembered
names live for the process, and what a candidate costs in the density budget depends on them, so both processes
see the same history. Prints the number of inputs and of differing outputs (exit status 1 when any differs), with
the first few differences.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import random
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

# What a generated line is made of: names (sensitive or not, upper or lower case), what opens the line (a diff's
# marker, a quote, export, a YAML list item, indentation), the separator (environment "=", ini " = ", aligned
# blanks, YAML ":") and values of every shape the judges tell apart (short, trivial, generated, code expressions,
# delimiters, quotes, brackets, anchors, comments, non-ASCII, blanks and control characters).
_NAMES = ("DB_PASSWORD", "PASSWORD", "password", "db_password", "API_KEY", "api_key", "JWT_SECRET", "SECRET",
          "client_secret", "AUTH_TOKEN", "token", "token_type", "TOKEN_TYPE", "secret_id", "SECRET_ID", "passwd",
          "MY_PASS", "signing_key", "key", "key_id", "PASSWORD_FILE", "password_hash", "pwd", "OLDPWD",
          "secretName", "credentials", "AccountKey", "auth", "authorization", "x_token_id", "next_token",
          "DB_HOST", "name", "value", "PATH", "a" * 45 + "_token", "ENCRYPTION_KEY", "app_key", "passphrase")
_OPENERS = ("", "", "", "+", "-", "-  ", "> ", ">> ", "export ", "declare -x ", "- ", "  ", "    ", "\t", "+  ",
            "+- ", "setenv ", "ENV ", " ", "x ")
_SEPARATORS = ("=", "=", "=", " = ", ": ", ":", " " * 10 + "= ", "  :  ", "= ", " =", "?=", ":=", "\t=\t", "==")
_VALUES = ("a1f3", "ab", "x", "", "hunter2", "true", "changeme", "<redacted>", "${DB_PASSWORD}", "1234", "1234567",
           "12345678901", "Xk9mQ2vL8pW4nR7s", "correct horse battery", "ab;cd", "a;", "a, b and c", "ab&cd;ef",
           "os.environ[\"X\"]", "settings.DB_PASSWORD", "get_token()", "var.db_password", "*pw", "&pw hunter2",
           "!!str s3cr3t", "\"quoted value\"", "'single q'", "\"unclosed", "p4s;w0rd", "12)xYz9Kq", "T8(ewCIS)|&G9",
           "/home/ops", "~/.pgpass", "base64:QUFBQUFB", "Zm9vYmFy==", "vault,aws", "ldap,local", "é;a", "日;x",
           "pässwörd1", "val\vue", "trailing   ", "with # comment", "x\r", "a" * 300, "b" * 255 + ";c",
           "{{ .Values.pw }}", "$(cat /run/secrets/x)", "null", "None", "str", "Optional[str] = None",
           "sk-" + "A" * 40, "ghp_" + "a1B2" * 9, "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxIn0.c2lnbmF0dXJl")


def generated_lines(count: int, seed: int = 11) -> list[str]:
    """``count`` lines of environment listings, diffs, ini and YAML files, built at random from the parts above
    (a value is sometimes mutated, so that no two lines need be alike)."""
    rng = random.Random(seed)
    lines = []
    for i in range(count):
        value = rng.choice(_VALUES)
        if value and rng.random() < 0.5:
            spot = rng.randrange(len(value) + 1)
            value = value[:spot] + rng.choice("aZ9_-;,&)}]\"' #:=$.(/@") + f"{i:x}" + value[spot:]
        lines.append(rng.choice(_OPENERS) + rng.choice(_NAMES) + rng.choice(_SEPARATORS) + value)
    return lines


# What ``pem_edges`` plants around and inside a certificate's base64 body: tokens made of base64 bytes, names whose
# value may start on the next line (the body's first line), padding, comments, blanks, carriage returns.
_PLANTS = ("AKIAIOSFODNN7EXAMPLE", "AccountKey=", "AccountKey =", "Authorization:", "authorization: basic",
           "password:", "password =", "Private-Lines: 4", "aws_secret_access_key =", "aws", "Bearer", "token=",
           "DB_PASSWORD=hunter2x", "ghp_" + "a1B2" * 9, "SK" + "0123456789abcdef" * 2, "Q" * 86 + "==", "==", "=",
           "# comment", "", "\r", "  indented", "mysql -u root -p", "-----END CERTIFICATE-----", "key:", "\"pw\": \"",
           "-----BEGIN CERTIFICATE-----", "dapi" + "0123456789abcdef" * 2, "AIza" + "A" * 35, "-p", "secret\\n")


def pem_edges(size: int, seed: int) -> bytes:
    """A CA bundle of ``size`` bytes whose blocks have a plant (``_PLANTS``) before, after or inside them: on the
    line before the BEGIN line or glued to its end, as a body line (first, last or between), glued to a body line's
    start or end, after the END line; the block indented or not. ``any_candidate``'s region split must find what
    the whole scan finds."""
    rng = random.Random(seed)
    alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"
    parts: list[str] = []
    total = 0
    while total < size:
        body = "".join(rng.choice(alphabet) for _ in range(rng.randint(400, 1800)))
        lines = [body[i : i + 64] for i in range(0, len(body), 64)]
        before, begin, end, after = "# Root CA", "-----BEGIN CERTIFICATE-----", "-----END CERTIFICATE-----", ""
        for _ in range(rng.randint(0, 2)):
            plant = rng.choice(_PLANTS)
            spot = rng.randrange(7)
            if spot == 0:
                before = plant
            elif spot == 1:
                begin += plant
            elif spot == 2:
                lines.insert(rng.choice((0, len(lines), rng.randrange(len(lines) + 1))), plant)
            elif spot == 3:
                where = rng.randrange(len(lines))
                lines[where] = plant + lines[where]
            elif spot == 4:
                where = rng.choice((0, len(lines) - 1, rng.randrange(len(lines))))
                lines[where] += plant
            elif spot == 5:
                end = plant + end
            else:
                after = plant
        indent = rng.choice(("", "", "    ", "  "))  # (a PEM in a YAML block scalar is indented)
        text = "\n".join(indent + line for line in (before, begin, *lines, end, after))
        parts.append(text + rng.choice(("\n", "\n", "\r\n", "")))
        total += len(text) + 1
    return "".join(parts).encode()[:size]


def real_outputs() -> list[bytes]:
    """accept3's long outputs at 64 KiB (two seeds each), accept4's long mixes cut to 128 KiB, and ``pem_edges``."""
    from tests.corpora.accept3_long import certificate_bundle, journalctl, kubectl_describe_pods, terraform_plan
    from tests.corpora.accept4 import measure

    texts = [make(64 << 10, seed).encode()[: 64 << 10] for seed in (1, 2)
             for make in (kubectl_describe_pods, journalctl, terraform_plan, certificate_bundle)]
    by = {p.name: p for p in measure.BENIGN}
    texts += [measure.long_mix(128 << 10, measure.BENIGN, measure.LEAKS, 4096),
              measure.long_mix(128 << 10, [by["kubectl.txt"], by["infra.txt"]], measure.PLATFORM, 8192),
              measure.long_mix(128 << 10, [by["apps_ci.txt"], by["hosts.txt"]], measure.APPS, 16384)]
    texts += [pem_edges(size, seed) for size in (8 << 10, 64 << 10) for seed in range(12)]
    return texts


def inputs(line_count: int) -> list[bytes]:
    """Every input, in the order both trees sanitize them."""
    from bench.bench_sanitize import BENIGN, TRIGGERS, adversarial, realistic
    from tests.corpora.leaks import LEAKS
    from tests.corpora.leaks_accept import ACCEPT_OPEN

    texts = [leak.text.encode() for leak in (*LEAKS, *ACCEPT_OPEN)]
    texts += [path.read_bytes() for path in BENIGN]
    lines = generated_lines(line_count)
    rng = random.Random(5)
    for start in range(0, len(lines), 3):  # a few lines a text, with their ends varied
        ending = rng.choice(("\n", "\r\n", "", "\n\n"))
        texts.append((ending.join(lines[start : start + 3]) + ending).encode())
    for size in (8 << 10, 64 << 10):  # dense blocks: the density budget runs out, and its marker shows where
        block = "\n".join(lines).encode()
        texts += [block[offset : offset + size] for offset in range(0, min(len(block), 4 * size), size)]
    kinds = (*TRIGGERS, "base64", "base64 :@._-", "name runs", "name runs: describing", "name runs: secret",
             "name runs: long", "code grep")
    for kind in kinds:
        for size in (8 << 10, 64 << 10):
            texts += [adversarial(kind, size, seed) for seed in (0, 101)]
    texts += [realistic(64 << 10, seed) for seed in (5, 6)]
    return texts + real_outputs()


# The child: sanitize each input (all of them twice: the second time with the memos warm), write the outputs.
_EMIT = """
import json, sys
from pathlib import Path
sys.path.insert(0, sys.argv[1])
from bot.sanitize import sanitize_output
texts = json.loads(Path(sys.argv[2]).read_text())
results = []
for _ in range(2):
    for text in texts:
        done = sanitize_output(text.encode("utf-8", "surrogateescape"), output_limit=1 << 30)
        results.append([done.text, done.redactions])
Path(sys.argv[3]).write_text(json.dumps(results))
"""


def _run(tree: Path, inputs_path: str, outputs_path: str) -> list[list[object]]:
    env = dict(os.environ, PYTHONPATH=str(tree))
    subprocess.run([sys.executable, "-c", _EMIT, str(tree), inputs_path, outputs_path], env=env, cwd=tree, check=True)
    return json.loads(Path(outputs_path).read_text())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("old", help="the tree to compare with (e.g. a worktree of main)")
    parser.add_argument("new", nargs="?", default=str(ROOT), help="the changed tree (default: this one)")
    parser.add_argument("--lines", type=int, default=4000, help="generated lines (default 4000)")
    args = parser.parse_args()
    texts = [t.decode("utf-8", "surrogateescape") for t in inputs(args.lines)]
    with tempfile.TemporaryDirectory() as tmp:
        inputs_path = str(Path(tmp) / "inputs.json")
        Path(inputs_path).write_text(json.dumps(texts))
        old = _run(Path(args.old), inputs_path, str(Path(tmp) / "old.json"))
        new = _run(Path(args.new), inputs_path, str(Path(tmp) / "new.json"))
    differ = [i for i, (a, b) in enumerate(zip(old, new, strict=True)) if a != b]
    digest = hashlib.sha256(json.dumps(new).encode()).hexdigest()[:12]
    redactions = sum(int(r[1]) for r in new)
    print(f"{len(old)} outputs ({len(texts)} inputs, twice), {redactions} redactions, outputs sha256 {digest}: "
          f"{len(differ)} differ")
    for i in differ[:5]:
        text = texts[i % len(texts)]
        print(f"--- input {i % len(texts)} (pass {i // len(texts) + 1}): {text[:200]!r}")
        a, b = old[i][0], new[i][0]
        at = next((k for k in range(min(len(a), len(b))) if a[k] != b[k]), min(len(a), len(b)))
        print(f"    old {old[i][1]} redactions: ...{a[max(0, at - 80) : at + 120]!r}")
        print(f"    new {new[i][1]} redactions: ...{b[max(0, at - 80) : at + 120]!r}")
    sys.exit(1 if differ else 0)


if __name__ == "__main__":
    main()
