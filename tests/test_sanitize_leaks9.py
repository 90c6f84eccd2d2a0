# ruff: noqa: E501  (output lines as tools print them; splitting them would hide their shape)
"""accept4's open cases closed by leaks9 (``tests/test_sanitize_accept4.py``): its changed ordinary lines (a name that
says when or how a secret is used, ``pwdChangedTime``, ``KeyUsage``; a chart's NOTES line read as the value of the
``Credentials:`` line above it) and its leaks. Each secret is hidden, and the look-alikes beside it come out
byte-identical."""

from __future__ import annotations

import pytest

from bot.sanitize import sanitize_output

PW = "qAcRVmN1L2*B6e!"

SECRETS: dict[str, tuple[str, str]] = {
    # a value alone on the line after its name is still a YAML plain scalar
    "YAML value on the next line": ("password:\n  Zq9mW3xR7tY2\n", "Zq9mW3xR7tY2"),
    "JSON value on the next line": ('{"password":\n  "Zq9mW3xR7tY2",\n "user": "x"}\n', "Zq9mW3xR7tY2"),
    "a password's name ending in a describing word is still one when it ends in its secret's word": (
        "pwd_time_password: Zq9mW3xR7tY2\n", "Zq9mW3xR7tY2"),
    "echoed query of a key's material": ("$ aws kms describe-key --query 'KeyMetadata.SigningKey' --output text\n"
                                         "Zq9mW3xR7tY2uI8oP4aS\n", "Zq9mW3xR7tY2"),
}

LOOK_ALIKES = (
    # LDAP's operational attributes and KMS's metadata: when and how a password or a key is used
    "dn: uid=jdoe,ou=people,dc=corp,dc=acme\npwdChangedTime: 20261101100000Z\npwdFailureTime: 20261101100500Z\n",
    "passwordExpirationTime: 20270101000000Z\ntoken_expiry_date: 2027-01-01\nsecret_timestamp: 1767225600\n",
    "$ aws kms describe-key --key-id alias/app --query 'KeyMetadata.[KeyId,KeyState,KeyUsage]' --output text\n"
    "1234abcd-12ab-34cd-56ef-1234567890ab\tEnabled\tENCRYPT_DECRYPT\n",
    "$ aws kms describe-key --key-id alias/app --query 'KeyMetadata.KeySpec' --output text\nSYMMETRIC_DEFAULT\n",
    # a chart's NOTES: an echo line under "Credentials:" is its own line, not the heading's value
    'Credentials:\n    echo "Username      : user"\n    echo "Password      : $(kubectl get secret rabbitmq -o '
    'jsonpath="{.data.rabbitmq-password}" | base64 -d)"\n',
    "Secrets:\n  kubectl get secret db -o yaml\n",
)


@pytest.mark.parametrize("text,secret", SECRETS.values(), ids=list(SECRETS))
def test_the_secret_is_hidden(text: str, secret: str) -> None:
    shown = sanitize_output(text.encode()).text
    assert secret not in shown and "[REDACTED:" in shown, shown


@pytest.mark.parametrize("text", LOOK_ALIKES, ids=range(len(LOOK_ALIKES)))
def test_the_look_alike_is_byte_identical(text: str) -> None:
    assert sanitize_output(text.encode()).text == text
