"""A leak of the sensitive-assignment family found by the acceptance check of issue #11: a mid-line value cut at a
delimiter glued to the rest of it (an argv as ``ps`` prints it), hidden to the next blank (``judge._glued_end``).
(Names aligned with more than four blanks before their separator stay open: see the README's targets.)"""

from __future__ import annotations

import pytest

from bot.sanitize import redact

# ---- a delimiter glued on both sides is the value's ----------------------------------------------------------


def test_a_docker_run_password_cut_at_a_glued_semicolon_is_hidden_whole() -> None:
    line = "docker run -d -e MYSQL_ROOT_PASSWORD=z9<3zU;2pwBLY3cH -p 3306:3306 mysql:8.0"
    assert redact(line) == ("docker run -d -e MYSQL_ROOT_PASSWORD=[REDACTED:password] -p 3306:3306 mysql:8.0", 1)


@pytest.mark.parametrize("delimiter", [";", ",", "&", ")", "}", "]"])
def test_every_glued_delimiter_runs_the_value_to_the_next_blank(delimiter: str) -> None:
    line = f"root 812 0.3 /usr/bin/app -e DB_PASSWORD=Qv8x{delimiter}Lm2Tz9 --port 8080"
    assert redact(line) == ("root 812 0.3 /usr/bin/app -e DB_PASSWORD=[REDACTED:password] --port 8080", 1)


def test_a_glued_value_at_the_line_end_runs_to_it_and_the_next_line_stays() -> None:
    text = "ps: app -e API_TOKEN=Zt5kQ9wPx2;Kp8wQn3Vb\nnext line stays\n"
    assert redact(text) == ("ps: app -e API_TOKEN=[REDACTED:token]\nnext line stays\n", 1)


def test_the_glued_tail_stops_at_a_quote() -> None:
    line = '{"cmd": "docker run -e DB_PASSWORD=Qv8x;Lm2Tz9", "pid": 7}'
    assert redact(line) == ('{"cmd": "docker run -e DB_PASSWORD=[REDACTED:password]", "pid": 7}', 1)


@pytest.mark.parametrize(
    ("line", "shown"),
    [
        # a shell's ";" is followed by a blank: the next command stays
        ("sudo -u app env DB_PASSWORD=Qv8xLm2Tz9; echo done",
         "sudo -u app env DB_PASSWORD=[REDACTED:password]; echo done"),
        # a query string's parameter ends at "&": the next parameter is no part of it
        ("GET /cb?token=Xk9vQ2mL7pR4tZ8w&next=/home HTTP/1.1", "GET /cb?token=[REDACTED:token]&next=/home HTTP/1.1"),
        ("GET /cb?access_token=Xk9vQ2mL7pR4tZ8w&x HTTP/1.1", "GET /cb?access_token=[REDACTED:token]&x HTTP/1.1"),
        # a list's next pair (a connection string's, an argument list's) is no part of the value
        ("app --dsn Server=db01;ApiToken=Xk9vQ2mL7pR4;Database=app",
         "app --dsn Server=db01;ApiToken=[REDACTED:token];Database=app"),
        ("configure(secret_key=Xk9vQ2mL7pR4tZ8w,debug=1)", "configure(secret_key=[REDACTED:key],debug=1)"),
        # JSON's quoted values keep their quotes and what follows them
        ('{"password":"Xk9vQ2mL7p","a":1}', '{"password":"[REDACTED:password]","a":1}'),
    ],
)
def test_lists_and_commands_keep_their_delimiters(line: str, shown: str) -> None:
    assert redact(line) == (shown, 1)


@pytest.mark.parametrize(
    "line",
    [
        "key=value pairs parsed: 12",
        "PASSWORD_MIN=8;",
        "set PASSWORD_MIN=8;x=2",
        '{"password":"x","a":1}',
        "f(password=pw)",
        "login(password=pw),next()",
        "GET /reset?token=abc&page=2 HTTP/1.1",
    ],
)
def test_benign_lines_around_glued_delimiters_stay(line: str) -> None:
    assert redact(line) == (line, 0)
