"""The shortcuts of the judged path (issue #11, a Docker config's ``"auth":"..."`` on every line): the context-free
verdict ``shapes.reads_position`` promises, and ``shapes.generated``'s ASCII path, each against what it replaced."""

from __future__ import annotations

import itertools
import random

from bot.sanitize import sanitize_output, shapes

_NAMES = ("auth", '"auth"', "token", '"token"', "api_key", "client_secret", "secret", "password", '"password"',
          "'passwd'", "db_password", "PASSWORD", "credentials", '"credentials', "signing_key", "authorization",
          "x_token_id", "name", "AccountKey", "passphrase")
_VALUES = ("YWJjOmRlZg==", "hunter2", "changeme", "true", "a1", "Winter2024", "correct-horse", "Xk9mQ2vL8pR4",
           "abcdefghIJKLMNOPqrst", "orders/payment-gateway", "/home/ops", "default-token-x2k4p", "HS256",
           "settings.DB_PASSWORD", "get_token()", "pässwört-Ünïcode9", "ÄÖÜäöüßÄÖÜäöüßx", "${DB_PASSWORD}", "<none>")


def _generated_before(value: str) -> bool:
    """``shapes.generated`` as it was before its ASCII path (the character tests in Python, one by one)."""
    bare = value.strip("\"'")
    if len(bare) < 8 or shapes.trivial(bare) or " " in bare or shapes._PROTOCOL_VERSION.fullmatch(bare):
        return False
    has_alpha = any(c.isalpha() for c in bare)
    if has_alpha and any(c.isdigit() or not c.isalnum() and c not in "-_./" for c in bare):
        return True
    mixed = any(c.isupper() for c in bare) and any(c.islower() for c in bare)
    return mixed and len(bare) >= 16 and not shapes._CAMEL_WORDS.fullmatch(bare)


def test_a_name_that_reads_no_position_gets_one_verdict_in_every_context() -> None:
    differing = 0
    for name, value, quoted, separator in itertools.product(_NAMES, _VALUES, (False, True), (":", "=")):
        sentences = (False,) if quoted else (False, True)  # judge: a quoted value is never a sentence
        verdicts = {shapes.accept_assignment(name, separator, value, at_line_start, sentence, quoted=quoted)
                    for at_line_start, sentence in itertools.product((False, True), sentences)}
        if not shapes.reads_position(name, quoted):
            assert len(verdicts) == 1, (name, value, quoted, separator, verdicts)
        differing += len(verdicts) > 1
    assert differing  # the grid holds contexts that do change a password's verdict (the promise is not vacuous)


def test_reads_position_names_the_password_like_names() -> None:
    assert not shapes.reads_position('"auth"', True) and not shapes.reads_position("token", False)
    assert shapes.reads_position("password", True) and shapes.reads_position('"password"', False)
    assert not shapes.reads_position('"password"', True)  # structured in either context, never a sentence


def test_generated_ascii_path_says_what_the_character_loop_said() -> None:
    rng = random.Random(11)
    values = [*_VALUES, *("".join(rng.choice(alphabet) for _ in range(rng.randrange(0, 24)))
                          for alphabet in ("aZ9-_./=+:@!# '\"é", "abZY-_./", "aZ9Ä") for _ in range(3000))]
    values += ["abcdefghIJKLMNOP", "AbcDefGhiJklMnoP", "abcdefgh/ijklmnop", "orders.payment-gateway",
               "ABCDEFGH-ijklmnop", "HTTP/1.1x"]
    for value in values:
        assert shapes.generated(value) == _generated_before(value), value


def test_docker_config_auth_values_stay_hidden_anywhere_on_their_line() -> None:
    text = '{"auths":{"r1":{"auth":"YWJjOmRlZg=="}}}\n  "auth": "dXNlcjpwYXNzMTIz"\nx {"password":"hunter2"} y\n'
    out = sanitize_output(text.encode()).text
    for secret in ("YWJjOmRlZg==", "dXNlcjpwYXNzMTIz", "hunter2"):
        assert secret not in out
