"""A Docker config's ``auth`` is base64 of ``user:password``: hidden however weak the password, where the generic
rule for an ``auth`` value (hidden when it looks generated) showed ``dXNlcjpwYXNz`` (``user:pass``) whole."""

from __future__ import annotations

import base64

import pytest

from bot.sanitize import sanitize_output
from bot.sanitize.shapes import basic_credentials


def _b64(text: str) -> str:
    return base64.b64encode(text.encode()).decode()


WEAK = [_b64(pair) for pair in ("user:pass", "admin:admin", "ci:hunter2", "bot:changeme", "a:b1")]


@pytest.mark.parametrize("value", WEAK)
@pytest.mark.parametrize("template", [
    '{{"auths":{{"registry.example.com":{{"auth":"{v}"}}}}}}\n',
    '{{\n  "auths": {{\n    "registry.example.com": {{\n      "auth": "{v}"\n    }}\n  }}\n}}\n',
    "auths:\n  registry.example.com:\n    auth: {v}\n",
])
def test_a_weak_docker_auth_is_hidden(template: str, value: str) -> None:
    text = template.format(v=value)
    out = sanitize_output(text.encode()).text
    assert value not in out and "[REDACTED:auth]" in out, out


@pytest.mark.parametrize("line", [
    "auth: oidc\n", '"auth": "basic"\n', "auth: none\n", "auth: kerberos\n",
    "auth: ldap\n", '  "auth": "sso"\n',
])
def test_an_auth_that_is_no_credential_pair_stays(line: str) -> None:
    assert sanitize_output(line.encode()).text == line


def test_basic_credentials_reads_only_printable_pairs() -> None:
    assert basic_credentials(_b64("user:pass"))
    assert not basic_credentials(_b64("user:"))  # no password
    assert not basic_credentials(_b64(":pass"))  # no user
    assert not basic_credentials(_b64("session"))
    assert not basic_credentials(base64.b64encode(b"u:\x00\x01").decode())
    assert not basic_credentials("not base64!")
    assert not basic_credentials("oidc")
