"""Tool output built to be expensive to sanitize (issue #11), the same bytes in the tool and in the test.

A tool calls :func:`write_hostile` to print it; :func:`sanitize_twice`, in a process of its own, gives what a runner's
sanitizer makes of the very same bytes, for the test to compare with what the runner posted. Deterministic (seeded).

Each block is something the issue or a review found costly: the issue's ``"token" * 28000`` (41 s under the old
quadratic redactor), each trigger word repeated with no whitespace, long base64 runs, and lines dense with
candidates each detector must look at and judge (the slowest inputs of ``bench/bench_sanitize.py``, ~23 MB/s).
Every block ends with a line of :data:`PLANTED` secrets that must come out redacted, so they sit in both the
head and the tail the runner keeps.
"""

from __future__ import annotations

import base64
import json
import random
import sys
from collections.abc import Iterator
from pathlib import Path
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


def sanitize_twice(total: int, output_limit: int, directory: Path) -> None:
    """What a fresh runner's sanitizer makes of the output (``first.txt``), and what it makes of it next time
    (``second.txt``), with the redaction counts in ``counts.json``: run in a process of its own (``python -m
    tests.support.hostile_output TOTAL LIMIT DIR``) with the runner's environment.

    Why fresh, and why twice: the sanitizer's density budget charges a remembered verdict less than a new one, so
    where a dense run's ``[REDACTED:dense_candidates]`` marker starts depends on what the process judged before;
    a runner that ran one such call sanitizes the next one a little differently (both fail closed)."""
    from bot.fisk.environment import scrub_environment  # here: the tool that imports this module stays light
    from bot.runner.output import OutputCapture
    from bot.sanitize import build_redactor, sanitize_captured

    redactor = build_redactor(scrub_environment(None, ()).removed_values.values(), ())  # as the runner's
    data = hostile_bytes(total)
    counts = {}
    for name in ("first", "second"):
        capture = OutputCapture.for_output_limit(output_limit)
        capture.feed(data)
        result = sanitize_captured(capture.captured(), redactor, output_limit)
        (directory / f"{name}.txt").write_text(result.text)
        counts[name] = {"redactions": result.redactions, "truncated": result.truncated}
    (directory / "counts.json").write_text(json.dumps(counts))


if __name__ == "__main__":
    sanitize_twice(int(sys.argv[1]), int(sys.argv[2]), Path(sys.argv[3]))
