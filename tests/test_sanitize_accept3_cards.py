"""The approval-card forms the third acceptance check of issue #11 left open (``CARD_OPEN`` in
``tests/corpora/leaks_accept3.py``): a client whose short flag takes a password (per tool, never for the same
letter elsewhere), gh's ``secret set --body`` and htpasswd's batch mode. The card shows a fingerprinted marker;
the argv that runs is not touched."""

from __future__ import annotations

import shlex

import pytest

from bot.sanitize import display_command_line, redact_argv

PW = "Zq7xK2mP9vL4wT8n"


@pytest.mark.parametrize("argv", [
    ("az", "login", "--service-principal", "-u", "0b8e-app", "-p", PW, "--tenant", "t-1"),
    ("az", "acr", "login", "--name", "reg", "-u", "ops", "-p", PW),
    ("oc", "login", "-u", "ops", "-p", PW, "https://api.ocp:6443"),
    ("gh", "secret", "set", "DB_PASSWORD", "--body", PW, "--repo", "acme/orders"),
    ("gh", "secret", "set", "DB_PASSWORD", "-b", PW),
    ("gh", "secret", "set", "DB_PASSWORD", f"--body={PW}"),
    ("htpasswd", "-b", "-B", "/etc/nginx/.htpasswd", "metrics", PW),
    ("htpasswd", "-nbB", "metrics", PW),
    ("htpasswd", "-C", "12", "-Bb", "/etc/nginx/.htpasswd", "metrics", PW),
    ("ldapsearch", "-x", "-D", "cn=admin,dc=acme,dc=example", "-w", PW, "-b", "dc=acme,dc=example"),
    ("ldapmodify", "-x", "-D", "cn=admin", "-w", PW, "-f", "change.ldif"),
    ("ldappasswd", "-x", "-D", "cn=admin", "-W", "-s", PW, "uid=jdoe,ou=people"),
    ("sqlcmd", "-S", "sql-prod", "-U", "sa", "-P", PW, "-Q", "SELECT 1"),
    ("bcp", "orders.dbo.t", "out", "t.dat", "-S", "sql", "-U", "sa", "-P", PW),
    ("cqlsh", "-u", "cassandra", "-p", PW, "cass-0"),
    ("mongosh", "--host", "db", "-u", "admin", "-p", PW),
    ("mongodump", "-u", "backup", "-p", PW, "--out", "/backup"),
    ("opsctl", "run", "--", "sqlcmd", "-U", "sa", "-P", PW),
    ("opsctl", "run", "--", "htpasswd", "-b", "f", "u", PW),
])
def test_a_clients_password_flag_is_shown_as_a_fingerprinted_marker(argv: tuple[str, ...]) -> None:
    shown, _ = display_command_line(argv)
    assert PW not in shown and "[REDACTED:" in shown and "#" in shown, shown
    assert PW not in " ".join(redact_argv(argv))


@pytest.mark.parametrize("argv", [
    ("docker", "run", "-p", "8080:80", "nginx"),  # a port
    ("ssh", "-p", "2222", "ops@bastion"),
    ("scp", "-P", "2222", "f", "ops@bastion:/tmp"),
    ("grep", "-w", "word", "app.log"),  # a whole-word match
    ("ps", "-w", "-e"),
    ("tar", "-P", "-cf", "etc.tar", "/etc"),  # absolute names
    ("az", "vm", "open-port", "-n", "web", "-g", "rg", "--port", "443"),
    ("az", "storage", "fs", "directory", "create", "-p", "logs", "-f", "fs"),  # no login: -p is a path
    ("gh", "pr", "create", "--title", "Fix", "--body", "Closes 12"),  # a description
    ("gh", "variable", "set", "REGION", "--body", "eu-west-1"),  # a variable, not a secret
    ("htpasswd", "-D", "/etc/nginx/.htpasswd", "metrics"),  # no batch mode: no password on the line
    ("htpasswd", "-c", "/etc/nginx/.htpasswd", "bob"),  # prompts for it
    ("ldapsearch", "-x", "-W", "-D", "cn=admin", "-b", "dc=acme"),  # -W prompts
    ("sqlcmd", "-S", "sql", "-E", "-p", "-Q", "SELECT 1"),  # -p prints statistics
    ("mongosh", "--port", "27017", "--host", "db"),
    ("ssh", "-p", "2222", "ops@bastion", "--", "ps", "-w"),
])
def test_the_same_letters_elsewhere_are_shown_whole(argv: tuple[str, ...]) -> None:
    assert display_command_line(argv) == (shlex.join(argv), False)
    assert redact_argv(argv) == list(argv)
