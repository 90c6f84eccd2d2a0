"""A marker that starts or ends inside a multi-byte character must not make sanitizing raise.

Found by `tokenq`'s differential run: 22 of 1,500 generated texts with invalid UTF-8 next to an unclosed quoted
``secret="`` value made ``sanitize_output`` raise ``UnicodeDecodeError`` (on 6de274d and 7ba728e too), and a call's
whole output would have been lost to a tool that prints such bytes."""

from __future__ import annotations

import random
from pathlib import Path

from bot.sanitize import sanitize_output

_CUT = (Path(__file__).parent / "fixtures" / "sanitize_cut_character.bin").read_bytes()


def test_the_found_output_is_sanitized_without_an_exception() -> None:
    result = sanitize_output(_CUT)
    assert result.text.startswith("'secret=\"[REDACTED:")
    result.text.encode("utf-8")  # text Slack can take: no lone surrogate or broken byte left


def test_a_secret_beside_cut_characters_stays_hidden() -> None:
    secret = "Kq8sLp2mZx7TwR4v"
    data = _CUT + b"\npassword=" + secret.encode() + b"\n"
    assert secret not in sanitize_output(data).text


def test_generated_texts_with_invalid_utf8_never_raise() -> None:
    rng = random.Random(7)
    pieces = [b'secret="', b"token=", b"password: ", b"\xa9", b"\xe6", b"\x97\xa5", b"\xbd", b"x", b"9", b";", b",",
              b"&", b")", b"}", b"]", b" ", b"\\", b"=", b"'", "é".encode(), "日本".encode()]
    for _ in range(2000):
        data = b"'secret=\"" + b"".join(rng.choice(pieces) for _ in range(rng.randint(5, 240))) + rng.choice(pieces)
        sanitize_output(data).text.encode("utf-8")
