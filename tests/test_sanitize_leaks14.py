# ruff: noqa: E501  (output lines as tools print them; splitting them would hide their shape)
"""The leak families ``leaks14`` closed (issue #11, eight of accept5's open cases, each closed as the shape an
operator meets from several tools, not as the one string): records of a name and its value side by side (Ansible's
loop items, ``infisical export``, jq's ``to_entries``, AWS tags, YAML lists). Each case goes through the sanitizer's
public ``sanitize_output`` and must lose every secret and keep every line without one byte-identical; each
look-alike must come out byte-identical."""

from __future__ import annotations

import pytest

from bot.sanitize import sanitize_output

PW = "Zq7xK2mP9vL4wT8n"
TOKEN = "k3X9qLm2Wp8ZrT5vYc7NbQ4d"
B64 = "c2VjcmV0LWtleS12YWx1ZS0xMjM0NTY3ODkw"


def _hidden(text: str, *secrets: str) -> None:
    shown = sanitize_output(text.encode()).text
    assert [s for s in secrets if s in shown] == [] and "[REDACTED:" in shown, shown
    for before, after in zip(text.splitlines(), shown.splitlines(), strict=True):
        if not any(secret in before for secret in secrets):
            assert after == before, shown


def _whole(text: str) -> None:
    assert sanitize_output(text.encode()).text == text


# --- records of a name and its value: the name is a field's value, the secret its sibling field's -----------------

RECORDS = {
    "ansible loop item": f"changed: [web01.prod] => (item={{'key': 'SECRET_KEY', 'value': '{B64}'}})\n"
                         "ok: [web01.prod] => (item={'key': 'DEBUG', 'value': 'false'})\n",
    "infisical export": f'[\n  {{"key": "RESEND_API_KEY", "value": "re_{TOKEN}"}},\n'
                        '  {"key": "FEATURE_FLAGS", "value": "checkout_v2,search_v3"}\n]\n',
    "jq to_entries": f'[\n  {{\n    "key": "DB_PASSWORD",\n    "value": "{PW}"\n  }},\n  {{\n    "key": "PORT",\n    "value": "5432"\n  }}\n]\n',
    "AWS tags": f'{{"Tags": [{{"Key": "team", "Value": "payments"}}, {{"Key": "smtp_password", "Value": "{PW}"}}]}}\n',
    "YAML list of keys and values": f"env:\n  - key: LOG_LEVEL\n    value: info\n  - key: STRIPE_SECRET\n    value: {TOKEN}\n",
    "Python repr of a parameter": f"[Param(name='db_password', value='{PW}'), Param(name='region', value='eu-west-1')]\n",
    "HCL block": f'  environment {{\n    name  = "API_TOKEN"\n    value = "{TOKEN}"\n  }}\n',
    "Ruby hash": f'{{"key"=>"JWT_SECRET", "value"=>"{TOKEN}"}}\n',
    "single-quoted name field": f"{{'name': 'api_token', 'value': '{TOKEN}'}}\n",
}


@pytest.mark.parametrize("name", RECORDS)
def test_a_records_value_is_hidden_when_its_name_field_names_a_secret(name: str) -> None:
    _hidden(RECORDS[name], PW, TOKEN, B64)


@pytest.mark.parametrize("text", [
    '{"key": "DB_PASSWORD_LENGTH", "value": "32"}\n',  # a describing word ends the name
    '{"key": "API_KEY_ROTATION_DAYS", "value": "90"}\n',
    '{"key": "SECRET_KEY", "value": "enabled"}\n',  # a key's name needs a generated value
    '{"key": "api_key", "value": 4096}\n',  # a number
    "(item={'key': 'TOKEN_TTL', 'value': '3600'})\n",
    "- key: SIGNING_KEY\n  value: true\n",
    '{"key": "DB_PASSWORD", "value": "${DB_PASSWORD}"}\n',  # a reference, no literal
    '{"key": "DB_PASSWORD", "value": ""}\n',
    '{"key": "region", "value": "eu-west-1a-9x8k7q"}\n',  # no secret's name
    '{"Key": "Name", "Value": "prod-api-token-rotator"}\n',  # a tag's value naming a resource
    "keys: value, name: token\n",
])
def test_records_that_hold_no_secret_stay_whole(text: str) -> None:
    _whole(text)
