"""Tool output built to be expensive to sanitize (issue #11), the same bytes in the tool and in the test.

A tool calls :func:`write_hostile` to print it; the test calls :func:`hostile_bytes` to get the very bytes the tool
printed, so it can sanitize them itself and compare with what the runner posted. Deterministic (seeded).

Each block is something the issue or a review found costly: the issue's ``"token" * 28000`` (41 s under the old
quadratic redactor), each trigger word repeated with no whitespace, long base64 runs, and lines dense with
candidates each detector must look at and judge (the slowest inputs of ``bench/bench_sanitize.py``, ~23 MB/s).
Every block ends with a line of :data:`PLANTED` secrets that must come out redacted, so they sit in both the
head and the tail the runner keeps.
"""

from __future__ import annotations

import base64
import random
from collections.abc import Iterator
from typing import BinaryIO

#: Trigger words, each repeated without whitespace into one long line.
TRIGGERS = ("token", "password", "secret", "aws", "key=", "token=", "password=", "Bearer ", "://", "eyJ", "xoxb-",
            "sk-", "-----BEGIN", "AccountKey=", "sig=", "authorization:", "@tcp(", "token_type=a ", "u:p@tcp(")
#: Lines that each hold a candidate to judge, every one different ({i} counts up), so no verdict is reused.
DENSE = ("Bearer abcdefgh\n", "password=a{i}\n", "m x_token_id=a{i}\n", "pass: x{i}\n")
#: Secrets of known formats, one of each per block: none may reach Slack or the model.
PLANTED = (
    "ghp_AbCdEfGhIjKlMnOpQrStUvWxYz0123456789",
    "xoxb-1234567890-1234567890123-AbCdEfGhIjKlMnOpQrStUvWx",
    "AKIAIOSFODNN7EXAMPLE",
)
_LINE = 64 << 10  # bytes of one repeated-trigger line or one dense run


def _blocks() -> Iterator[bytes]:
    rng = random.Random(11)
    counter = 0
    while True:
        yield ("token" * 28000 + "\n").encode()
        for word in TRIGGERS:
            yield (word * (_LINE // len(word)) + "\n").encode()
        yield base64.b64encode(rng.randbytes(3 * _LINE)) + b"\n"  # 4 * _LINE characters, no padding
        for unit in DENSE:
            lines = []
            size = 0
            while size < 2 * _LINE:
                lines.append(unit.replace("{i}", f"{counter:x}"))
                size += len(lines[-1])
                counter += 1
            yield "".join(lines).encode()
        github, slack, aws = PLANTED
        yield f"deploy key {github} slack {slack} aws_access_key_id={aws} end\n".encode()


def hostile_chunks(total: int) -> Iterator[bytes]:
    """The output, ``total`` bytes, in the chunks the tool writes."""
    left = total
    for block in _blocks():
        if left <= 0:
            return
        yield block[:left]
        left -= len(block)


def hostile_bytes(total: int) -> bytes:
    return b"".join(hostile_chunks(total))


def write_hostile(out: BinaryIO, total: int) -> None:
    for chunk in hostile_chunks(total):
        out.write(chunk)
    out.flush()
