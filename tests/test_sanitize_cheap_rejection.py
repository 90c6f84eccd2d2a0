"""The cheap refusals (``bot/sanitize/cheap_rejection.py``): ordinary output dense with refused candidates passes the
density budget, every cheap refusal is one the full judgement makes too, and dense hostile text still fails closed.
"""

from __future__ import annotations

import itertools
import os
import random
import re
import subprocess
import sys
from pathlib import Path

import pytest

from bot.sanitize import sanitize_output
from bot.sanitize.assignment_screen import _ASSIGNMENT_HEAD
from bot.sanitize.automata import CONTEXT_PASS
from bot.sanitize.cheap_rejection import PARSED_CHECKS, refuse_head, refuse_parsed
from bot.sanitize.judge import judge
from bot.sanitize.value_spans import quoted_span
from tests.corpora.benign_mixes import FRESH_CHECK, MIXES

ROOT = Path(__file__).resolve().parents[1]
DENSE_MARKER = "[REDACTED:dense_candidates]"

@pytest.mark.parametrize("flavor,size,seed,paragraphs", MIXES, ids=[f"{m[0]}-{m[1] >> 10}K-{m[2]}" for m in MIXES])
def test_long_ordinary_outputs_pass_unchanged_in_a_fresh_process(
        flavor: str, size: int, seed: int, paragraphs: bool) -> None:
    """As a runner's first call sees them (a process that has cleaned nothing before: no verdict remembered)."""
    result = subprocess.run([sys.executable, "-c", FRESH_CHECK, flavor, str(size), str(seed), str(int(paragraphs))],
                            capture_output=True, text=True, timeout=120, cwd=ROOT, env=dict(os.environ), check=True)
    assert result.stdout == "0 True"


# Names, separators, values and what follows them: refused shapes (placeholders, booleans, paths, readable names,
# aliases, code) beside accepted ones (passwords, generated tokens, glued tails), in every context the refusals read.
_NAMES = ("password", "db_password", "DB_PASSWORD", "token", "api_key", "secret", "auth", "JWT_SECRET", "clientSecret",
          '"password"', '"token"', "'secret'", "--db-password", "pass")
_SEPARATORS = (":", ": ", "=", " = ", "= ", ":=", ":  ", "    :", ":\n    ", ":\n  ")
_VALUES = ("***", "true", "null", "(sensitive value)", "(known after apply)", "[MASKED]", "${{ secrets.X }}",
           "${DB_PASSWORD}", "$(kubectl get secret x)", "changeme", "<set to the key>", "/etc/ssl/k.pem", "/home/ops",
           "*pw", "&creds", "!Ref DbPassword", "see the vault", "db-credentials", "orders/payment-gateway",
           "default-token-x2k4p", "oidc", "ldap,local", "os.environ[\"X\"]", "settings.SECRET_KEY", "get_token()",
           "hunter2", "Xk9mQ2vL8pR4tZ", "a1b2c3d4e5f6a7b8", "Tr0ub4dor&3x", "***;Xk9mQ2vL8", "true,Xk9mQ2",
           "ab;cdefghij", "x", "12", "secret", "sha256", "arn:aws:secretsmanager:eu-west-1:1:secret:x", "//host/x",
           ":from_slice(k)", "\"[MASKED]\"", "'***'", "\"db-credentials\"", "\"Xk9mQ2vL8pR4\"", "\"hunter2\"",
           "| \n      Xk9mQ2vL8", "|\n  hunter2x")
_BEFORE = ("", "  ", "x ", "{", "- ", "+", "arn:aws:x:", "  \"a\": 1, ")
_AFTER = ("", "\n", ",", ")", "}", " and more words", ";x9Kq", " # note", "\n  next: 1")


def _texts(count: int, seed: int) -> list[bytes]:
    rng = random.Random(seed)
    combos = list(itertools.product(_NAMES, _SEPARATORS, _VALUES))
    rng.shuffle(combos)
    return [f"{rng.choice(_BEFORE)}{name}{sep}{value}{rng.choice(_AFTER)}".encode()
            for name, sep, value in combos[:count]]


def _judged(data: bytes, start: int) -> tuple[str | None, bool] | None:
    """The full judgement of the candidate the context pass parses at ``start`` (None: no parse there)."""
    match = CONTEXT_PASS.parsers[data[start]](data, start)
    if match is None:
        return None
    index = CONTEXT_PASS.branch_of[match.lastgroup]  # type: ignore[index]
    begin, end = quoted_span(data, match, index)
    return judge(CONTEXT_PASS.detectors[index], match, index, data[begin:end])


def test_every_cheap_refusal_is_a_refusal_of_the_full_judgement() -> None:
    """Sound by construction is checked here: over ~5,000 generated lines, wherever ``refuse_head`` (before the
    parse) or ``refuse_parsed`` (after it) refuses a candidate, the assignment's own parse and ``judge`` refuse it
    too; and a refusal to remember is one judge would let the loop remember."""
    refused = checked = 0
    assignment_parse = CONTEXT_PASS.assignment_parser
    assert assignment_parse is not None
    for data in _texts(5000, 11):
        for start in range(1, len(data)):
            head = _ASSIGNMENT_HEAD.match(data, start)
            if head is not None and (verdict := refuse_head(data, head, len(data) - 1)) is not None:
                refused += 1
                match = assignment_parse.match(data, start)
                if match is not None:
                    index = CONTEXT_PASS.branch_of[match.lastgroup]  # type: ignore[index]
                    begin, end = quoted_span(data, match, index)
                    kind, context_free = judge(CONTEXT_PASS.detectors[index], match, index, data[begin:end])
                    assert kind is None, (data, start, kind)
                    assert context_free or verdict != 1, (data, start)
                    checked += 1
            match = CONTEXT_PASS.parsers[data[start]](data, start)
            if match is not None:
                index = CONTEXT_PASS.branch_of[match.lastgroup]  # type: ignore[index]
                check = CONTEXT_PASS.detectors[index].check
                if check in PARSED_CHECKS and (verdict := refuse_parsed(data, check, match, index, len(data))) \
                        is not None:
                    kind, context_free = _judged(data, start) or (None, False)
                    assert kind is None, (data, start, kind)
                    assert context_free or verdict != 1, (data, start)
                    refused += 1
    assert refused > 2000 and checked > 1000  # the generator reaches the refusals, not only their guards


def test_dense_cheaply_refused_text_still_fails_closed_and_secrets_around_it_are_found() -> None:
    """Refused values each different on every line (nothing remembered), one every 30-40 bytes: the refusals are
    charged, so such text meets the budget and is cut from there (a marker, never a shown value); a password inside
    the run before the cut and one after the cut line are still hidden."""
    lines = [f"  db_password = (sensitive value {i:x})\n" for i in range(40000)]
    lines[20] = "  db_password = hunter2-Prod!\n"
    text = "".join(lines) + "export GITHUB_TOKEN=ghp_A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8\n"
    out = sanitize_output(text.encode(), output_limit=1 << 30).text
    assert DENSE_MARKER in out and "hunter2-Prod!" not in out and "ghp_" not in out
    assert out.startswith("".join(lines[:20]))  # the free allowance: refused lines shown as they are
    for piece in out.split("\n"):  # what is kept is whole lines of the input, a redaction, or the marker
        assert piece == "" or piece + "\n" in text or "[REDACTED:" in piece


@pytest.mark.parametrize("line", [
    "password: ***;Xk9mQ2vL8pR4\n",  # a key line's plain value runs on past ";" (judged whole: hidden)
    "  token: true,Xk9mQ2vL8pR4tZ\n",
    "-e DB_PASSWORD=x;Xk9mQ2vL8pR4 ",  # an argv's glued tail
    "password: |\n  hunter2xyz\n",  # a block scalar: the value is on the next line
    "secret := Xk9mQ2vL8pR4tZ\n",  # ":=": the parse's separator, not the head's
    'api_key = "Xk9mQ2vL8pR4tZ"\n',  # a quoted literal after a spaced "="
    "JWT_SECRET: supersecret\n",  # an environment variable's secret, whatever it looks like
])
def test_values_that_read_on_or_are_taken_are_never_refused_cheaply(line: str) -> None:
    """After the same head with a refused value earlier in the text (remembered where it may be), the shapes the
    full judgement takes (what it reads past the first run, a block scalar, ``:=``, a literal, an environment
    variable's secret) are still hidden."""
    before = line.split(":")[0].split("=")[0].strip() + ": ***\n"
    text = before * 3 + line + before
    out = sanitize_output(text.encode(), output_limit=1 << 30).text
    secret = re.search(r"Xk9mQ2vL8pR4|hunter2xyz|supersecret", line)
    assert secret is not None and secret.group() not in out, out


@pytest.mark.parametrize(("line", "refused"), [
    ('x password: "changeme"\n', True),  # a placeholder
    ('x password: "aes-256-gcm"\n', True),  # an algorithm a setting names
    ('x password: "/run/secrets/db_password"\n', True),  # a path
    ('x "password": "***"\n', True),
    ('x password: "[MASKED]1"\n', False),  # anything else under a password's name: the judgement's
    ('x "db_password": "hunter2-Prod!"\n', False),
])
def test_a_quoted_value_under_a_password_name_is_refused_cheaply_only_as_before(line: str, refused: bool) -> None:
    """A quoted value under a password's name is left to the judgement at once unless it is trivial, an algorithm or
    a path (``cheap_rejection._refused``'s screen): those three are still refused without it."""
    data = line.encode()
    head = _ASSIGNMENT_HEAD.match(data, 1)
    assert head is not None
    assert (refuse_head(data, head, len(data) - 1) is not None) is refused
