"""The Secret-manifest walk's budget against ordinary output (issue #11): how far below it a listing of Secrets is.

    python bench/bench_manifests.py [--size 1048576] [--repeat 5]

For generated ``kubectl get secrets -A`` output (``tests/corpora/secret_listings.py``: mixed Secrets, and Secrets
holding an application's environment, the densest ordinary case) as a YAML List, YAML documents and a JSON List:
``sanitize_output``'s MB/s (CPU time, median), and the most bytes per unit of ``bot/sanitize/structured.py``'s
budget at which the walk reads the whole text (found by bisection with no free units): the margin is that over
``BYTES_PER_UNIT`` (the walk may spend one unit per that many bytes), which must stay well above 1. "dense": the
``[REDACTED:dense_candidates]`` markers in the sanitized text, from any pass (the detector passes' own budget too).
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bot.sanitize import sanitize_output, structured  # noqa: E402
from tests.corpora.secret_listings import SHAPES, listings  # noqa: E402


def _marker(kind: str, secret: bytes) -> bytes:
    return f"[REDACTED:{kind}]".encode()


def bytes_per_unit(data: bytes) -> int:
    """The largest ``BYTES_PER_UNIT`` at which the walk, with no free units, reads all of ``data``."""
    saved = structured.FREE_UNITS, structured.BYTES_PER_UNIT
    low, high = 1, 4096
    try:
        structured.FREE_UNITS = 0
        while low < high:
            structured.BYTES_PER_UNIT = middle = (low + high + 1) // 2
            out, _ = structured.redact_secret_manifests(data, _marker, constant_marker=True)
            if structured.DENSE_KIND.encode() in out:
                high = middle - 1
            else:
                low = middle
    finally:
        structured.FREE_UNITS, structured.BYTES_PER_UNIT = saved
    return low


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--size", type=int, default=1 << 20)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    print(f"Secret listings, ~{args.size >> 10} KiB of YAML each; the walk may spend one unit per "
          f"{structured.BYTES_PER_UNIT} bytes (+{structured.FREE_UNITS})")
    print(f"{'listing':>34} {'bytes':>8} {'MB/s':>6} {'bytes/unit':>10} {'margin':>6} {'dense':>7}")
    for label, shapes in (("mixed", SHAPES), ("environment", ("environment",))):
        for form, data in listings(args.size, shapes=shapes).items():
            sanitize_output(data, output_limit=1 << 30)
            times = []
            for _ in range(args.repeat):
                start = time.process_time()
                shown = sanitize_output(data, output_limit=1 << 30).text
                times.append(time.process_time() - start)
            per_unit = bytes_per_unit(data)
            print(f"{label + ', ' + form:>34} {len(data):8} {len(data) / statistics.median(times) / 1e6:6.1f} "
                  f"{per_unit:10} {per_unit / structured.BYTES_PER_UNIT:5.1f}x {shown.count(structured.DENSE_KIND):7}")


if __name__ == "__main__":
    main()
