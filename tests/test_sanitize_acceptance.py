"""Found by the acceptance check of issue #11 (fresh secrets through ``fisk-chatops exec``): a YAML block
mapping's plain value runs to its line's end, so a password holding ``&``, ``;``, ``,``, ``)``, ``}`` or ``]``
no longer shows its tail; the delimiters still end a value where the format uses them (mid-line, flow
mappings, query strings)."""

from __future__ import annotations

import pytest

from bot.sanitize import redact

YAML_PLAIN_VALUES = [
    # kubectl get deploy -o yaml: a container's env pair, the value unquoted
    ("  - name: DB_PASSWORD\n    value: Tr0ub4dor&3x\n  - name: LOG_LEVEL\n", "&3x", "    value: [REDACTED:"),
    ("password: Tr0ub4dor&3x\n", "&3x", "password: [REDACTED:"),
    ("  db_password: Xk9m)Tail99ab  # rotated 2026-11\n", "Tail99ab", "  db_password: [REDACTED:"),
    ("redis.password: Xk9m}TailLong1\n", "TailLong1", "redis.password: [REDACTED:"),
    ("  - password: Qz7w;Lp0]sEcond\n", "sEcond", "  - password: [REDACTED:"),
]


@pytest.mark.parametrize(("text", "tail", "head"), YAML_PLAIN_VALUES, ids=[str(i) for i in range(5)])
def test_a_yaml_plain_password_is_hidden_to_its_lines_end(text: str, tail: str, head: str) -> None:
    cleaned, count = redact(text)
    assert count == 1 and tail not in cleaned and head in cleaned, cleaned


def test_a_yaml_value_keeps_its_comment_and_the_next_line() -> None:
    cleaned, _ = redact("  db_password: Xk9m)Tail99ab  # rotated\n  user: app\n")
    assert cleaned.endswith("]  # rotated\n  user: app\n"), cleaned


@pytest.mark.parametrize("text", [
    "x = {password: Xk9mQ2vL8, user: bob}\n",  # a flow mapping: "," ends the value
    "GET /login?password=Xk9mQ2vL8&user=bob 200\n",  # a query string: "&" ends it
    "Server=db;Password=Xk9mQ2vL8;Encrypt=True\n",  # a connection string: ";" ends it
])
def test_delimiters_still_end_a_value_mid_line(text: str) -> None:
    cleaned, count = redact(text)
    assert count == 1 and "Xk9mQ2vL8" not in cleaned and ("bob" in cleaned or "Encrypt=True" in cleaned), cleaned
