"""A marker that starts or ends inside a multi-byte character must not make sanitizing raise.

Found by `tokenq`'s differential run: 22 of 1,500 generated texts with invalid UTF-8 next to an unclosed quoted
``secret="`` value made ``sanitize_output`` raise ``UnicodeDecodeError`` (on 6de274d and 7ba728e too), and a call's
whole output would have been lost to a tool that prints such bytes."""

from __future__ import annotations

import random
from pathlib import Path

from bot.sanitize import redact, sanitize_output
from bot.sanitize.characters import whole_characters

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


# Where a detector's value stops at its bound (256 bytes and about) a multi-byte character may straddle the stop.
_OPENERS = ["'secret=\"", 'secret="', 'token="', 'password="', "password=", "DB_PASSWORD=", "export API_TOKEN=",
            "Authorization: Bearer ", "password: ", ";Password=", "https://u:", "sk-ant-", "ghp_"]
_CHARACTERS = ["é", "日本", "😀"]


def test_a_marker_never_ends_inside_a_character() -> None:
    """Found for this test (``vendors``): ``'secret="`` then 254 "x" and "é": the quoted value's span ended between
    the two bytes of "é", and the output showed U+FFFD for a character the tool printed. Spans are widened to whole
    characters where they are replaced (``characters.whole_characters``), not patched up by the decoder."""
    assert redact("'secret=\"" + "x" * 254 + "é tail\n") == ("'secret=\"[REDACTED:secret] tail\n", 1)
    for opener in _OPENERS:
        for length in range(240, 260):
            for character in _CHARACTERS:
                text = opener + "Kq8sLp2m" + "x" * length + character + " tail\n"
                shown, _ = redact(text)
                assert "\ufffd" not in shown, (opener, length, character, shown)


def test_whole_characters_widens_to_the_characters_a_span_touches() -> None:
    data = "aé日😀b".encode()  # a, é (2 bytes), 日 (3), 😀 (4), b
    assert whole_characters(data, 2, 5) == (1, 6)  # from inside é to inside 日: both whole
    assert whole_characters(data, 7, 8) == (6, 10)  # inside 😀
    assert whole_characters(data, 2, 3, floor=2) == (2, 3)  # never before what was already replaced
    assert whole_characters(data, 0, 1) == (0, 1) and whole_characters(data, 10, 11) == (10, 11)
