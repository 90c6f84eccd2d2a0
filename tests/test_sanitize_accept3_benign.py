"""Ordinary lines the third acceptance check of issue #11 found changed (``BENIGN_OPEN`` in
``tests/corpora/leaks_accept3.py``, now in its benign files), each pinned beside look-alikes whose secret in the
same position stays hidden: the rules name where a secret is read from, never a value."""

from __future__ import annotations

import pytest

from bot.sanitize import sanitize_output
from bot.sanitize.secret_argv import judge_argv

PW = "Zq7xK2mP9vL4wT8n"


def _clean(text: str) -> str:
    return sanitize_output(text.encode()).text


@pytest.mark.parametrize("line", [
    "        proxy_pass http://orders_api;\n",
    "        proxy_pass https://grafana.monitoring.svc:3000/;\n",
    "        fastcgi_pass unix:/run/php/php8.2-fpm.sock;\n",
    "        fastcgi_pass 127.0.0.1:9000;\n",
    "        uwsgi_pass uwsgi://app:3031;\n",
    "        grpc_pass grpc://orders:50051;\n",
    "        proxy_pass $upstream;\n",
    "    ssl_certificate_key /etc/nginx/tls/shop.key;\n",
    "LoadCredential=db-password:/etc/orders/credentials/db-password\n",
    "LoadCredentialEncrypted=tls-key:/etc/credstore.encrypted/tls-key\n",
    "vault kv put secret/orders/db password=@secrets/db_password.txt\n",
    "http POST api.example/login password=@/run/secrets/pw\n",
    "smtp_password: \"{{ lookup('community.hashi_vault.hashi_vault', 'secret=secret/data/smtp:password') }}\"\n",
    "STRIPE_SECRET_KEY=sk_test_...\n",
    "JWT_SECRET=<generate with: openssl rand -hex 32>\n",
    '{"auth":{"client_token":"hmac-sha256:' + "7d1c5f6a" * 8 + '","accessor":"hmac-sha256:' + "2f9e8d7c" * 8 + '"}}\n',
])
def test_a_secrets_location_or_an_examples_placeholder_comes_out_whole(line: str) -> None:
    assert _clean(line) == line


@pytest.mark.parametrize("line", [
    f"PROXY_PASS={PW}\n",  # a proxy's password in an environment, not nginx's directive
    f"proxy_pass: {PW}\n",
    f"        proxy_pass {PW};\n",  # no URL, no address: a generated value
    f"proxy_pass_password={PW}\n",
    f"        proxy_pass http://ops:{PW}@orders_api;\n",  # a URL's password is the URL detector's
    f"SetCredential=db-password:{PW}\n",  # systemd's inline value
    f"LoadCredential=db:{PW}\n",  # no path after the id
    f"password=@{PW}\n",  # a password that starts with "@"
    "password=@Xk9!qR7#tz\n",
    f"JWT_SECRET=<{PW}\n",
    f"STRIPE_SECRET_KEY=sk_test_{PW}...\n",  # a truncated key shows its start: still hidden
    f'{{"client_token":"hvs.{PW}{PW}"}}\n',
    f"    ssl_certificate_key {PW}/abc+def;\n",
])
def test_a_secret_in_the_same_position_stays_hidden(line: str) -> None:
    assert PW[:6] not in _clean(line), _clean(line)


def test_a_listing_of_secrets_names_is_no_request_for_their_values() -> None:
    """JMESPath's multiselect goes on into the names it picks: a list of names and dates is shown, a multiselect
    that picks a secret's value is still judged by that value's name."""
    listing = "aws secretsmanager list-secrets --query SecretList[].{Name:Name,Changed:LastChangedDate} --output table"
    assert judge_argv(listing.split()) is None
    for argv in ("aws secretsmanager list-secrets --query SecretList[].{Name:Name,Pw:SecretString}",
                 "aws ssm get-parameters --names x --query Parameters[].{Name:Name,Password:Value}",
                 "aws secretsmanager list-secrets --query SecretList[].[Name,SecretString]"):
        assert judge_argv(argv.split()) is not None, argv


def test_a_key_written_inline_after_ssl_certificate_key_stays_hidden() -> None:
    """The ";"-ended path is a file's name; a PEM block (or nginx's ``data:`` value) in the same place is the key."""
    body = "MIIEvQIBADANBgkqhkiG9w0BAQEFAASCBKcwggSjAgEAAoIBAQC7" + PW
    for line in (f'    ssl_certificate_key "-----BEGIN PRIVATE KEY-----\n{body}\n-----END PRIVATE KEY-----";\n',
                 f"    ssl_certificate_key data:-----BEGIN PRIVATE KEY-----{body}-----END PRIVATE KEY-----;\n"):
        assert PW[:6] not in _clean(line) and body[:12] not in _clean(line)
