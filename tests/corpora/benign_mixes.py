"""Long ordinary outputs made of the benign corpus's own text, in several orders: what the density budget must pass.

Each file of ``tests/corpora/benign/`` passes byte-identical alone; printed together, many of them at once make one
output dense with candidates (the 46 KiB of ``DENSE_OPEN_FILES`` spent the budget before the cheap refusals of
``bot/sanitize/cheap_rejection.py``). A mix takes the files of one kind of output (a long ``kubectl describe``, a
``terraform plan``, a ``docker inspect`` with its environment), or the dense files, cut into units (whole files, or
their paragraphs: blocks between blank lines, so that no YAML block or multi-line record is torn apart), shuffles
them with a seed and repeats them, shuffled again, up to the size asked for. A unit is never cut, so the output is
a little longer than ``size``.
"""

from __future__ import annotations

import random
import re
from pathlib import Path

from tests.corpora.leaks_accept2 import DENSE_OPEN_FILES

BENIGN = Path(__file__).parent / "benign"
# Which files make each kind of output (a pattern on the file's name).
FLAVORS = {
    "kubectl describe": r"kubectl|kdescribe|serviceaccount|helm|kubeconfig|configmap|kubernetes|systemctl|journal",
    "terraform plan": r"terraform|tfplan|aligned|secret_names|prometheus",
    "docker inspect": r"docker|compose|env_settings|ps_aux|jsonlogs|ci_log|git_config",
}
DENSE = "dense files"  # DENSE_OPEN_FILES, the 26 files that made one 46 KiB output over budget
# (flavor, size, seed, paragraphs): a long kubectl describe, terraform plan and docker inspect output of 64 KiB to
# 1 MiB in several orders, and orders of the dense files that the budget cut before the cheap refusals (2-5 markers
# each in a fresh process). Checked by tests/test_sanitize_cheap_rejection.py and ``bench_sanitize.py --sections 3``.
MIXES: tuple[tuple[str, int, int, bool], ...] = (
    ("kubectl describe", 64 << 10, 1, False),
    ("kubectl describe", 1 << 20, 2, True),
    ("terraform plan", 64 << 10, 3, True),
    ("terraform plan", 1 << 20, 4, False),
    ("docker inspect", 64 << 10, 5, False),
    ("docker inspect", 256 << 10, 6, True),
    (DENSE, 48 << 10, 4, False),
    (DENSE, 64 << 10, 5, True),
)
# A fresh process's verdict on one mix (argv: flavor, size, seed, paragraphs 0/1): the number of markers in the
# output and whether it is byte-identical, "0 True" when it passes.
FRESH_CHECK = (
    "import sys; from bot.sanitize import sanitize_output; from tests.corpora.benign_mixes import benign_mix\n"
    "data = benign_mix(sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4] == '1')\n"
    "out = sanitize_output(data, output_limit=1 << 30).text.encode()\n"
    "sys.stdout.write(f'{out.count(b\"[REDACTED:\")} {out == data}')\n"
)


def _files(flavor: str) -> list[Path]:
    if flavor == DENSE:
        return [BENIGN / name for name in DENSE_OPEN_FILES]
    return sorted(path for path in BENIGN.glob("*.txt") if re.search(FLAVORS[flavor], path.stem))


def units(flavor: str, paragraphs: bool) -> list[bytes]:
    """The files of ``flavor``, each whole or cut into its paragraphs, every unit ending with a newline."""
    out: list[bytes] = []
    for path in _files(flavor):
        text = path.read_bytes()
        text = text if text.endswith(b"\n") else text + b"\n"
        out += [block + b"\n\n" for block in text.split(b"\n\n") if block.strip()] if paragraphs else [text]
    return out


def benign_mix(flavor: str, size: int, seed: int, paragraphs: bool = False) -> bytes:
    """At least ``size`` bytes of ``flavor``'s units, shuffled by ``seed`` and shuffled again at each repeat."""
    rng, base, out, total = random.Random(seed), units(flavor, paragraphs), [], 0
    while total < size:
        order = base[:]
        rng.shuffle(order)
        for unit in order:
            if total >= size:
                break
            out.append(unit)
            total += len(unit)
    return b"".join(out)
