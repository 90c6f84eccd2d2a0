"""The two corpora of issue #11: every leak family is redacted, ordinary operations output is left byte-identical.

``tests/corpora/leaks.py`` holds one case per secret family as tools print it; ``tests/corpora/benign/`` holds
kubectl, nginx, JSON logs, git, systemctl, Prometheus, Terraform, digests, UUIDs, URLs without credentials and
prose that uses the words secret, token, password and key. ``bench/bench_sanitize.py`` prints the same counts.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from bot.runner import run_argv
from bot.sanitize import redact, sanitize_output
from tests.corpora.leaks import LEAKS, Leak

BENIGN = sorted((Path(__file__).parent / "corpora" / "benign").glob("*.txt"))


@pytest.mark.parametrize("leak", LEAKS, ids=[leak.family for leak in LEAKS])
def test_every_leak_family_is_redacted(leak: Leak) -> None:
    assert all(secret in leak.text for secret in leak.secrets), "a case whose secret is not in its text proves nothing"
    result = sanitize_output(leak.text.encode())
    for secret in leak.secrets:
        assert secret not in result.text, (leak.family, result.text)
    assert "[REDACTED:" in result.text and result.redactions >= 1


@pytest.mark.parametrize("path", BENIGN, ids=[p.stem for p in BENIGN])
def test_ordinary_output_passes_byte_identical(path: Path) -> None:
    raw = path.read_bytes()
    result = sanitize_output(raw, output_limit=1 << 20)
    assert (result.text.encode(), result.redactions) == (raw, 0)


@pytest.mark.parametrize(
    "text",
    [
        "normal text after the secrets: everything nominal",
        "key=value pairs parsed: 12",
        "api_key_rotation_days: 90",
        "Password: see the team vault entry",
        "  ~ db_password = (sensitive value)",
        '"cache_key":"user:profile"',
        "secretName: db-credentials",
        "token_type=bearer expires_in=3600",
        "sudo: deploy : TTY=pts/0 ; PWD=/home/deploy ; USER=root",
        "bash: pwd: too many arguments",
        "password_file: /run/secrets/db-password",
        "integrity sha512-Zq9mW3xR7tY2uI8oP4aS6dF1gH5jK0lZxC3vB7nM9qW2eR4tY6uI8oP0aS2dF4gH6jK8lZ1xC3vB5nM7qW9eR1==",
        '<add key="PasswordMinLength" value="12" />',
    ],
)
def test_words_that_only_talk_about_secrets_stay(text: str) -> None:
    assert redact(text) == (text, 0)


async def test_both_corpora_through_a_real_call(tmp_path: Path) -> None:
    """What ``fisk-chatops exec`` and the runner do: a child prints it, run_argv captures and sanitizes it."""
    benign = b"".join(p.read_bytes() for p in BENIGN)
    leaks = "\n".join(leak.text for leak in LEAKS).encode()
    printer = "import sys; sys.stdout.buffer.write(open(sys.argv[1], 'rb').read())"
    for data, expect_clean in ((benign, True), (leaks, False)):
        path = tmp_path / f"corpus-{expect_clean}.txt"  # this test's own directory, whoever else runs tests
        path.write_bytes(data)
        result = await run_argv([sys.executable, "-c", printer, str(path)], env={}, cwd=None, timeout=30,
                                output_limit=1 << 20)
        assert result.status == "finished"
        if expect_clean:
            assert result.output.encode() == benign and result.redactions == 0
        else:
            for leak in LEAKS:
                for secret in leak.secrets:
                    assert secret not in result.output, leak.family
