"""The JSON walk of flagged values (``bot/sanitize/flagged_json.py``, issue #11) on adversarial and realistic text,
two trees interleaved in one process (a text of nothing but tokens after a flag was the walk's worst case).

    python bench/bench_flagged_json.py OLD_TREE [NEW_TREE] [--rounds 5]

Prints, per input and size, each tree's median MB/s (CPU time, ``time.process_time``) and the ratio new/old, and
whether both trees' outputs are equal.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path
from types import ModuleType

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

_FLAG = b'{"sensitive": true, "value": ['


def _terraform_outputs(size: int) -> bytes:
    """``terraform output -json``, pretty-printed: sensitive maps and lists beside plain outputs, to ``size``."""
    outputs: dict[str, object] = {}
    index = 0
    while len(json.dumps(outputs, indent=2)) < size:
        outputs[f"db_{index}"] = {"sensitive": True, "type": ["map", "string"],
                                  "value": {"host": f"db{index}.internal", "password": f"pw-{index:08x}x9Q",
                                            "port": "5432", "user": "app"}}
        outputs[f"endpoints_{index}"] = {"sensitive": False, "type": ["list", "string"],
                                         "value": [f"https://svc{index}-{n}.example.com" for n in range(4)]}
        outputs[f"tokens_{index}"] = {"sensitive": True, "type": ["list", "string"],
                                      "value": [f"tok-{index}-{n}-Zx81kQ" for n in range(3)]}
        index += 1
    return json.dumps(outputs, indent=2).encode()


INPUTS: dict[str, Callable[[int], bytes]] = {
    "commas": lambda size: _FLAG + b"," * size,
    "strings": lambda size: _FLAG + b'"a",' * (size // 4),
    "brackets": lambda size: _FLAG + b"[" * (size // 2) + b"]" * (size // 2),
    "terraform": _terraform_outputs,
}


def _load(tree: str, name: str) -> ModuleType:
    spec = importlib.util.spec_from_file_location(name, Path(tree) / "bot/sanitize/flagged_json.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _marker(kind: str, secret: bytes) -> bytes:
    return f"[REDACTED:{kind}]".encode()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("old")
    parser.add_argument("new", nargs="?", default=str(ROOT))
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    trees = {"old": _load(args.old, "flagged_old"), "new": _load(args.new, "flagged_new")}
    print(f"{'input':<10} {'size':>8} {'old MB/s':>9} {'new MB/s':>9} {'new/old':>8}  equal")
    for name, make in INPUTS.items():
        for size in (64 * 1024, 1024 * 1024):
            data = make(size)
            times: dict[str, list[float]] = {"old": [], "new": []}
            outputs = {}
            for _ in range(args.rounds):
                for label, module in trees.items():  # interleaved: old, new, old, new, ...
                    began = time.process_time()
                    outputs[label] = module.redact_flagged_values(data, _marker)
                    times[label].append(time.process_time() - began)
            rates = {label: len(data) / 1e6 / max(statistics.median(spent), 1e-9) for label, spent in times.items()}
            print(f"{name:<10} {len(data):>8} {rates['old']:>9.1f} {rates['new']:>9.1f} "
                  f"{rates['new'] / rates['old']:>7.1f}x  {outputs['old'] == outputs['new']}")


if __name__ == "__main__":
    main()
