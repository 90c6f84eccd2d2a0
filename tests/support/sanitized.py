"""The two verdicts a sanitizer test gives on one text through the public ``sanitize_output``: every secret hidden
with every other line byte-identical, or the whole text byte-identical. Shared so each family's tests assert the
same thing and say only their texts."""

from __future__ import annotations

from bot.sanitize import sanitize_output


def assert_hidden(text: str, *secrets: str) -> None:
    """No secret is left, a redaction marker says so, and every line holding none of them comes out unchanged."""
    shown = sanitize_output(text.encode()).text
    assert [s for s in secrets if s in shown] == [] and "[REDACTED:" in shown, shown
    for before, after in zip(text.splitlines(), shown.splitlines(), strict=True):
        if not any(secret in before for secret in secrets):
            assert after == before, shown


def assert_whole(text: str) -> None:
    """A look-alike: the text comes out byte-identical."""
    assert sanitize_output(text.encode()).text == text
