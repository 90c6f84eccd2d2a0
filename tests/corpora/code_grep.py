"""``grep -rn password src/`` over a large code base, generated: every line a different secret-named expression.

Benign output that is a candidate on every line. The test that it passes whole (tests/test_sanitize_code.py) and
the bench that times it (bench/bench_sanitize.py) read the same lines from here, so they measure one shape."""

from __future__ import annotations

import random

CODE_GREP_SHAPES = (
    "src/{m}/{f}.py:{n}:    password = settings.{u}_PASSWORD",
    'src/{m}/{f}.py:{n}:    token = self._client.fetch_token(scope="{f}")',
    'src/{m}/{f}.py:{n}:    api_key = os.environ["{u}_API_KEY"]',
    'src/{m}/{f}.py:{n}:        secret = request.headers.get("X-{c}-Secret")',
    "src/{m}/{f}.go:{n}:\t\tPassword: cfg.{c}.Password,",
    "web/src/{f}.ts:{n}:const {f}ApiKey = process.env.{u}_API_KEY;",
    "src/{m}/{f}.py:{n}:    if {f}_token is None:",
    "src/{m}/{f}.py:{n}:def verify_{f}_password(password: str, hashed: str) -> bool:",
)


def code_grep_line(i: int, rng: random.Random) -> str:
    """Line ``i``: its shape in turn, with a random name so that no two lines are alike (no memo helps)."""
    name = "".join(rng.choice("abcdefghijklmnop") for _ in range(6))
    return CODE_GREP_SHAPES[i % len(CODE_GREP_SHAPES)].format(
        m=("auth", "billing", "api")[i % 3], f=name, n=i % 400 + 1, u=name.upper(), c=name.capitalize())
