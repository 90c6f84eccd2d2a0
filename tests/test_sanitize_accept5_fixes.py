"""The cases accept5's check (``tests/test_sanitize_accept5.py``) left open and leaks12 closed, each beside the
look-alikes that must stay as they are: cards first (a program's password argument, an invisible character
inside a redacted secret), then ordinary lines that were redacted, then leaks."""

from __future__ import annotations

import shlex

import pytest

from bot.sanitize import display_command_line, redact_argv

PW = "Zq7xK2mP9vL4wT8n"


@pytest.mark.parametrize("argv", [
    ("rclone", "obscure", PW),
    ("rclone", "obscure", PW, "--config", "/etc/rclone.conf"),
    ("ssh-keygen", "-t", "ed25519", "-N", PW, "-f", "/tmp/deploy_key"),
    ("ssh-keygen", "-p", "-P", PW, "-N", "new" + PW, "-f", "k"),
    ("7z", "a", f"-p{PW}", "-mhe=on", "backup.7z", "data/"),
    ("7za", "x", f"-p{PW}", "backup.7z"),
    ("/usr/bin/7zz", "x", f"-p{PW}", "backup.7z"),
    ("opsctl", "run", "--", "7z", "a", f"-p{PW}", "b.7z"),
])
def test_a_programs_password_argument_is_a_fingerprinted_marker(argv: tuple[str, ...]) -> None:
    shown, warned = display_command_line(argv)
    assert PW not in shown and "[REDACTED:" in shown and "#" in shown and not warned, shown
    assert PW not in " ".join(redact_argv(argv))


@pytest.mark.parametrize("argv", [
    ("rclone", "copy", "src:", "dst:"),
    ("rclone", "config", "show"),
    ("rclone", "obscure", "-"),  # reads the password from stdin
    ("ssh-keygen", "-l", "-f", "/etc/ssh/ssh_host_ed25519_key.pub"),
    ("ssh-keygen", "-p", "-f", "k"),  # prompts
    ("7z", "a", "-p", "backup.7z", "data/"),  # -p alone prompts
    ("7z", "l", "backup.7z"),
    ("ssh", "-N", "-L", "8080:db:5432", "bastion"),  # -N means no command to ssh
    ("pg_dump", "-p", "5432", "orders"),  # -p is a port elsewhere
])
def test_the_same_arguments_of_other_programs_are_shown_whole(argv: tuple[str, ...]) -> None:
    assert display_command_line(argv) == (shlex.join(argv), False)
    assert redact_argv(argv) == list(argv)


def test_an_invisible_character_inside_a_redacted_secret_still_draws_the_warning() -> None:
    argv = ("env", f"DB_PASSWORD={PW}\u200b{PW}", "./migrate")
    shown, warned = display_command_line(argv)
    assert PW not in shown and "\u200b" not in shown and "\\u200b" not in shown and warned, shown
    assert display_command_line(("env", f"DB_PASSWORD={PW}", "./migrate"))[1] is False
    assert display_command_line(("printf", "a\tb"))[1] is True  # ASCII controls too
