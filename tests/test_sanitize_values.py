"""The runner's credential values (``Redactor.values``): a text holding none of a few values is not scanned for them
(``Redactor.value_bytes``), and that changes no output."""

from __future__ import annotations

import dataclasses
import random

from bot.sanitize import build_redactor

_VALUES = ["xoxb-1234567890-AbCdEfGhIjKl", "redis://:S3cr3tRedisPassw0rd@redis:6379/0", "pässwörd-Ünïcode-1234",
           "0123456789abcdef0123456789abcdef", "0123456789abcdef"]


def test_a_few_values_are_asked_for_first_and_redacted_as_the_scan_alone_redacts_them() -> None:
    asked = build_redactor(_VALUES)
    assert len(asked.value_bytes) == len(_VALUES)
    scanned = dataclasses.replace(asked, value_bytes=())  # every text scanned, as before
    rng = random.Random(3)
    pieces = [*_VALUES, "x", " ", "\n", "pässwörd", "0123456789", "redis://", "é", "日本"]
    texts = ["".join(rng.choice(pieces) for _ in range(rng.randint(0, 30))) for _ in range(400)]
    texts += ["", "no credential here\n", _VALUES[2], "a" + _VALUES[1] + _VALUES[3]]
    hidden = 0
    for text in texts:
        result = asked.redact(text)
        assert result == scanned.redact(text), text
        assert not any(value in result[0] for value in _VALUES), result
        hidden += result[1]
    assert hidden > 400
    assert asked.redact("nothing: " + "y" * 5000) == ("nothing: " + "y" * 5000, 0)


def test_many_values_are_scanned_for_without_asking_each() -> None:
    values = [f"credential-value-{i:02d}-Xk9mQ2vL" for i in range(12)]
    redactor = build_redactor(values)
    assert redactor.value_bytes == ()
    text = " ".join(values[::-1])
    cleaned, count = redactor.redact(text)
    assert count == 12 and "credential-value" not in cleaned


def test_a_value_holding_bytes_that_are_not_utf8_is_built_and_hidden_as_printed_and_as_carried() -> None:
    """``os.environ`` holds undecodable bytes as lone surrogates (surrogateescape): building the redactor raised
    UnicodeEncodeError on such a credential value. A child printing it writes the raw bytes (decoded to U+FFFD on
    output); an argv carries the surrogates themselves."""
    from bot.sanitize import sanitize_output

    value = b"Sup3r\xffS3cret\xfe-value".decode("utf-8", "surrogateescape")
    redactor = build_redactor([value])
    printed = sanitize_output(b"password is Sup3r\xffS3cret\xfe-value here\n", secret_values=[value]).text
    assert "S3cret" not in printed and "[REDACTED" in printed, printed
    carried, count = redactor.redact(f"--password {value} --x")
    assert count == 1 and "S3cret" not in carried, carried
    unpaired = "ab\ud800cdefgh-credential"  # a surrogate no undecodable byte made: kept as carried
    assert build_redactor([unpaired]).redact(f"x {unpaired} y")[1] == 1
