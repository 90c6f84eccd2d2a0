"""Found by the acceptance check of issue #11 (fresh secrets through ``fisk-chatops exec``): a YAML block
mapping's plain value runs to its line's end, so a password holding ``&``, ``;``, ``,``, ``)``, ``}`` or ``]``
no longer shows its tail; the delimiters still end a value where the format uses them (mid-line, flow
mappings, query strings)."""

from __future__ import annotations

import pytest

from bot.sanitize import redact
from bot.sanitize.cap import Captured, sanitize_captured
from bot.sanitize.redact import build_redactor

YAML_PLAIN_VALUES = [
    # kubectl get deploy -o yaml: a container's env pair, the value unquoted
    ("  - name: DB_PASSWORD\n    value: Tr0ub4dor&3x\n  - name: LOG_LEVEL\n", "&3x", "    value: [REDACTED:"),
    ("password: Tr0ub4dor&3x\n", "&3x", "password: [REDACTED:"),
    ("  db_password: Xk9m)Tail99ab  # rotated 2026-11\n", "Tail99ab", "  db_password: [REDACTED:"),
    ("redis.password: Xk9m}TailLong1\n", "TailLong1", "redis.password: [REDACTED:"),
    ("  - password: Qz7w;Lp0]sEcond\n", "sEcond", "  - password: [REDACTED:"),
    # an ini/conf file (my.cnf, php.ini): blanks around "=", the value to the line's end
    ("[client]\npassword = Tr0ub4dor&3xTail\nuser = backup\n", "3xTail", "password = [REDACTED:"),
    ("  auth_password = Xk9m;Tail99ab\n", "Tail99ab", "  auth_password = [REDACTED:"),
]


@pytest.mark.parametrize(("text", "tail", "head"), YAML_PLAIN_VALUES, ids=[str(i) for i in range(7)])
def test_a_yaml_plain_password_is_hidden_to_its_lines_end(text: str, tail: str, head: str) -> None:
    cleaned, count = redact(text)
    assert count == 1 and tail not in cleaned and head in cleaned, cleaned


def test_a_yaml_value_keeps_its_comment_and_the_next_line() -> None:
    cleaned, _ = redact("  db_password: Xk9m)Tail99ab  # rotated\n  user: app\n")
    assert cleaned.endswith("]  # rotated\n  user: app\n"), cleaned


@pytest.mark.parametrize("text", [
    "x = {password: Xk9mQ2vL8, user: bob}\n",  # a flow mapping: "," ends the value
    "GET /login?password=Xk9mQ2vL8&user=bob 200\n",  # a query string: "&" ends it
    "Server=db;Password=Xk9mQ2vL8;Encrypt=True\n",  # a connection string: ";" ends it
])
def test_delimiters_still_end_a_value_mid_line(text: str) -> None:
    cleaned, count = redact(text)
    assert count == 1 and "Xk9mQ2vL8" not in cleaned and ("bob" in cleaned or "Encrypt=True" in cleaned), cleaned


SHARED_SECRETS = [
    # vault operator init: any threshold of the unseal (or recovery) key shares unseals Vault
    ("Unseal Key 1: 4fV9Xk2mQ8Lp0Rt6Wv8AbCdEfGhIjKlMnOpQrStUvWx3\nUnseal Key 2: Qm9zU2hhcmVkQWNjZXNzS2V5VmFs\n"
     "Initial Root Token: hvs.Xk2mQ8Lp0Rt6Wv8AbCdEfGhI\n\n"
     "Vault initialized with 5 key shares and a key threshold of 3.\n",
     ["4fV9Xk2mQ8Lp0Rt6Wv8", "Qm9zU2hhcmVkQWNj", "Xk2mQ8Lp0Rt6Wv8AbCd"], "Vault initialized with 5 key shares"),
    ("Recovery Key 3: 4fV9Xk2mQ8Lp0Rt6Wv8AbCdEfGhIjKlMnOpQrStUvWx3\n", ["4fV9Xk2mQ8Lp0Rt6Wv8"], "Recovery Key 3: "),
    # cat /var/lib/rancher/k3s/server/token: K10<CA hash>::<user>:<password>
    ("K10" + "c0ffee1234567890abcdef" * 2 + "c0ffee1234567890abcd::server:9f8e7d6c5b4a39281706f5e4d3c2b1a0\n",
     ["9f8e7d6c5b4a3928"], "\n"),
    # an OpenVPN tls-auth/tls-crypt static key: a shared secret whose armour does not say PRIVATE
    ("key-direction 1\n-----BEGIN OpenVPN Static key V1-----\ne5f6a7b8c9d0e1f2a3b4c5d6e7f8a9b0\n"
     "0f1e2d3c4b5a69788796a5b4c3d2e1f0\n-----END OpenVPN Static key V1-----\nverb 3\n",
     ["e5f6a7b8c9d0e1f2", "0f1e2d3c4b5a6978"], "key-direction 1\n"),
]


@pytest.mark.parametrize(("text", "secrets", "kept"), SHARED_SECRETS, ids=[str(i) for i in range(4)])
def test_unseal_keys_k3s_tokens_and_openvpn_static_keys_are_hidden(text: str, secrets: list[str], kept: str) -> None:
    cleaned, count = redact(text)
    assert count >= len(secrets) - 1 and kept in cleaned, cleaned
    assert [s for s in secrets if s in cleaned] == [], cleaned


def test_an_openvpn_static_key_whose_begin_the_capture_dropped_is_hidden_up_to_its_end() -> None:
    # the runner kept a head and a tail of a long output; the tail starts inside the key block
    tail = b"e5f6a7b8c9d0e1f2a3b4c5d6e7f8a9b0\n" * 4 + b"-----END OpenVPN Static key V1-----\nverb 3\n"
    captured = Captured(head=b"client\ndev tun\n", tail=tail, total_bytes=1 << 20)
    text = sanitize_captured(captured, build_redactor((), ()), 4096).text
    assert "e5f6a7b8c9d0" not in text and text.endswith("[REDACTED:private_key]\nverb 3\n"), text


COMMAND_LINES = [
    # shell history, CI logs and ps output print these command lines whole
    ("+ htpasswd -b /etc/nginx/.htpasswd admin Htp4ssw0rd\n", "Htp4ssw0rd", "htpasswd -b /etc/nginx/.htpasswd admin "),
    ("$ htpasswd -nbB admin Htp4ssw0rd\n", "Htp4ssw0rd", "$ htpasswd -nbB admin "),
    ("openssl enc -aes-256-cbc -salt -k EncPassw0rd -in db.sql -out db.sql.enc\n", "EncPassw0rd", "-in db.sql"),
    # a crypt(3) hash outside a user:hash line: useradd -p, chpasswd -e, an Ansible variable
    ("useradd -m -p '$6$rounds=5000$saltsalt$Xk2mQ8Lp0Rt6Wv8AbCdEfGhIjKlMnOpQrSt' bob\n", "Xk2mQ8Lp0Rt6Wv8", "' bob"),
    ("bob:$y$j9T$Xk2mQ8Lp0Rt6Wv8AbCdEf$Zq8Jm1nVb2Cx3Dz4Fa5GhZq8Jm1nVb2Cx3Dz4Fa5Gh:19000:0:99999:7:::\n",
     "Zq8Jm1nVb2Cx3", ":19000:0:99999:7:::"),
]


@pytest.mark.parametrize(("text", "secret", "kept"), COMMAND_LINES, ids=[str(i) for i in range(5)])
def test_htpasswd_openssl_k_and_crypt_hashes_are_hidden(text: str, secret: str, kept: str) -> None:
    cleaned, count = redact(text)
    assert count == 1 and secret not in cleaned and kept in cleaned, cleaned


@pytest.mark.parametrize("line", [
    "htpasswd -c /etc/nginx/.htpasswd admin\n",  # prompts for the password: nothing to hide
    "openssl s_client -connect db.internal:5432 -starttls postgres\n",
    "the plan costs $5$ per seat, $6 with support\n",
])
def test_the_command_lines_without_a_password_stay(line: str) -> None:
    assert redact(line) == (line, 0)
