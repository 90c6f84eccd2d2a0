"""The finder's name condition (``context_patterns._FINDER_NAME``) against ``secret_names.name_kind``: RE2 reports
only names in which a sensitive word is a word of its own, and must never drop a name that
``name_kind`` would accept."""

from __future__ import annotations

import itertools
import random

import re2

from bot.sanitize import redact
from bot.sanitize.context_patterns import _FINDER_NAME, _NAME
from bot.sanitize.secret_names import name_kind

_PREFIXES = ("", "db", "DB_", "my", "x", "X", "app.", "a-", "aaa", "Client", "o", "2", "srv_db_")
_WORDS = ("pass", "Pass", "PASS", "password", "Password", "PASSWORD", "passwd", "passphrase", "pwd", "PWD", "token",
          "Token", "TOKEN", "tokens", "TOKENS", "secret", "Secret", "SECRET", "secrets", "credential", "Credentials",
          "CREDENTIALS", "signature", "Signature", "key", "Key", "KEY", "api_key", "apiKey", "ApiKey", "APIKEY",
          "access-key", "secretKey", "auth", "Auth", "AUTH", "authtoken", "authKey", "sig", "pw")
_SUFFIXES = ("", "_x", "X", "x", "s", "Value", "_id", "2", ".b", "-c", "bbb", "_FILE", "Name", "_2", "-", "Hash",
             "_rotation_days", "ID")


def _names() -> list[str]:
    names = ["".join(parts) for parts in itertools.product(_PREFIXES, _WORDS, _SUFFIXES)]
    rng = random.Random(7)
    pieces = [*_PREFIXES, *_WORDS, *_SUFFIXES, "_", ".", "a", "Z", "9", "D", "N", "ature", "PW", "Sig"]
    for _ in range(30000):  # up to five pieces in any case: words glued, overlapping (pwDb, sigNature), repeated
        parts = [rng.choice(pieces) for _ in range(rng.randint(1, 5))]
        names.append("".join(p.upper() if rng.random() < 0.15 else p.capitalize() if rng.random() < 0.2 else p
                             for p in parts))
    return names


def test_every_name_that_name_kind_accepts_is_still_found() -> None:
    finder, bounded = re2.compile(_FINDER_NAME), re2.compile(_NAME)
    accepted = dropped = 0
    for name in _names():
        if bounded.fullmatch(name) is None:
            continue  # never a candidate, before or after
        if name_kind(name) is not None:
            accepted += 1
            assert finder.fullmatch(name) is not None, name
        elif finder.fullmatch(name) is None:
            dropped += 1
    assert accepted > 1000 and dropped > 500  # the condition drops names, and only ones name_kind refuses


def test_a_sensitive_word_inside_a_longer_word_is_no_candidate_but_a_secret_next_to_it_is_redacted() -> None:
    finder = re2.compile(_FINDER_NAME)
    for name in ("aaatokenbbb", "xsecretx", "TOKENx", "passwordless", "compassion", "keyboard"):
        assert finder.fullmatch(name) is None, name
    text = "aaatokenbbb=" * 50 + "a_token=Xk9mQ2vL8pR4 " + "aaatokenbbb=" * 50 + "\n"
    out, count = redact(text)
    assert "Xk9mQ2vL8pR4" not in out and count == 1
    assert out.replace("a_token=[REDACTED:token] ", "") == "aaatokenbbb=" * 100 + "\n"
