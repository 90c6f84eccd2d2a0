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


# --- a secret announced on one line and printed alone on the next --------------------------------------------------

HEX32 = "a3f9c2e1b7d84f6a9c0e2b4d6f8a1c3e"
ELASTIC_PW = "n=VxYlO*A5Jcxx+iCJiB"
ENROLLMENT = "eyJ2ZXIiOiI4LjE0LjAiLCJhZHIiOlsiMTcyLjE4LjAuMjo5MjAwIl0sImtleSI6Ilhrc2Q5OmFiY2RlZmdoIn0="
JENKINS_LOG = """2026-12-02 07:00:01.123+0000 [id=32]\tINFO\tjenkins.install.SetupWizard#init:

*************************************************************
*************************************************************
*************************************************************

Jenkins initial setup is required. An admin user has been created and a password generated.
Please use the following password to proceed to installation:

{pw}

This may also be found at: /var/jenkins_home/secrets/initialAdminPassword

*************************************************************
2026-12-02 07:00:09.514+0000 [id=31]\tINFO\tjenkins.InitReactorRunner$1#onAttained: Completed initialization
"""

ANNOUNCED = {
    "Jenkins' first start": (JENKINS_LOG.format(pw=HEX32), HEX32),
    "Jenkins through kubectl logs | sed": (
        "$ kubectl -n jenkins logs jenkins-0 -c jenkins | sed -n '/Please use the following password/,+3p'\n"
        f"Please use the following password to proceed to installation:\n\n{HEX32}\n\n", HEX32),
    "Elasticsearch's first start": (
        "\u2705 Elasticsearch security features have been automatically configured!\n\n"
        "\u2139\ufe0f  Password for the elastic user (reset with `bin/elasticsearch-reset-password -u elastic`):\n"
        f"  {ELASTIC_PW}\n\n"
        "\u2139\ufe0f  HTTP CA certificate SHA-256 fingerprint:\n  a2d9a1f1b3c8e0d4f5a6b7c8d9e0f1a2b3c4d5e6f7a8b9c0d1e2f3a4\n",
        ELASTIC_PW),
    "Kibana's enrollment token": (
        "\u2022 Copy the following enrollment token and paste it into Kibana in your browser (valid for the next "
        f"30 minutes):\n  {ENROLLMENT}\n", ENROLLMENT),
    "a service's new API key": (f"Your new API key (shown once):\n{TOKEN}\n", TOKEN),
    "a generated password as a UUID": ("Generated admin password:\r\n8e557245-73e2-4286-969a-ff57fe326336\r\n",
                                       "8e557245-73e2-4286-969a-ff57fe326336"),
}


@pytest.mark.parametrize("name", ANNOUNCED)
def test_a_secret_announced_then_printed_alone_is_hidden(name: str) -> None:
    text, secret = ANNOUNCED[name]
    _hidden(text, secret)


@pytest.mark.parametrize("text", [
    JENKINS_LOG.format(pw="").replace("password to proceed", "page to proceed"),  # no secret announced
    "HTTP CA certificate SHA-256 fingerprint:\n  a2d9a1f1b3c8e0d4f5a6b7c8d9e0f1a2b3c4d5e6f7a8b9c0d1e2f3a4\n",
    "Rotated the secrets of the following services:\n\n  payments-api-v2-eu-west-1\n",  # an identifier
    "Token expires at:\n2026-12-02T10:00:00Z\n",
    "Password last changed:\n2026-11-30\n",
    "Public key of the signing secret:\nMCowBQYDK2VwAyEAq7Kx9Zp2mW8LdR4vT6nB3cF5gH1jK0lM9oP8qS7uV6w=\n",
    "API key id:\nAKIDq7Kx9Zp2mW8LdR4v\n",
    "    for token in tokens:\n        refresh_everything_now()\n",  # code: brackets on the line
    "secrets:\n  db_password_file:\n    file: ./db_password.txt\n",  # a YAML key
    "Enter the token:\n\nanother-line-of-prose-here\n",
    "Secrets:\n  api_token?=${API_TOKEN}\n",  # an assignment: the assignment detectors judge it
])
def test_announcements_of_no_secret_and_code_stay_whole(text: str) -> None:
    _whole(text)


# --- a literal fed to a command's standard input in a shell trace --------------------------------------------------

PAT = "k3X9qLm2Wp8ZrT5vYc7NbQ4dHj6FgS1aXe0Rt9UiOp2LkJh3GfDs4"
FED = {
    "az devops login here-string": f"2026-12-02T07:13:13.0100000Z + az devops login --organization https://dev.azure.com/acme <<< {PAT}\n",
    "docker login here-string": f"+ docker login -u bot --password-stdin registry.acme.io <<< '{PW}'\n",
    "vault login here-string": f'+ vault login -method=userpass username=ops password=- <<< "{PW}"\n',
    "chpasswd here-string": f"+ chpasswd <<< 'deploy:{PW}'\n",
    "echo into docker login": f"$ echo {PW} | docker login -u bot --password-stdin registry.acme.io\n",
    "echo -n into helm registry login": f'echo -n "{PW}" | helm registry login registry.acme.io -u bot --password-stdin\n',
    "printf into gh auth": f"printf '%s' {PAT} | gh auth login --with-token\n",
    "set -x pipeline, one command a line": f"+ echo {PW}\n+ docker login -u bot --password-stdin registry.acme.io\nLogin Succeeded\n",
    "passwd --stdin": f"+ echo '{PW}' | passwd --stdin deploy\n",
}


@pytest.mark.parametrize("name", FED)
def test_a_literal_fed_to_a_login_on_its_standard_input_is_hidden(name: str) -> None:
    _hidden(FED[name], PW, PAT)


@pytest.mark.parametrize("text", [
    '+ docker login -u bot --password-stdin registry.acme.io <<< "$REGISTRY_PASSWORD"\n',  # not expanded yet
    'az devops login --organization https://dev.azure.com/acme <<< "$(cat /run/secrets/pat)"\n',
    'echo "$CI_JOB_TOKEN" | docker login -u gitlab-ci-token --password-stdin "$CI_REGISTRY"\n',
    "echo done | tee login.log\n",  # no login command
    'bc <<< "2+2*3"\n',  # no command that takes a secret
    "+ echo yes | terraform login app.terraform.io\n",  # a confirmation
    "+ echo 'Building the login page' | logger -t ci\n",
])
def test_fed_variables_and_other_commands_stay_whole(text: str) -> None:
    _whole(text)
