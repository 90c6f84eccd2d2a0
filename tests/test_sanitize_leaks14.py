# ruff: noqa: E501  (output lines as tools print them; splitting them would hide their shape)
"""The leak families ``leaks14`` closed (issue #11, eight of accept5's open cases, each closed as the shape an
operator meets from several tools, not as the one string): records of a name and its value side by side (Ansible's
loop items, ``infisical export``, jq's ``to_entries``, AWS tags, YAML lists). Each case goes through the sanitizer's
public ``sanitize_output`` and must lose every secret and keep every line without one byte-identical; each
look-alike must come out byte-identical."""

from __future__ import annotations

import pytest

from tests.support.sanitized import assert_hidden, assert_whole

PW = "Zq7xK2mP9vL4wT8n"
TOKEN = "k3X9qLm2Wp8ZrT5vYc7NbQ4d"
B64 = "c2VjcmV0LWtleS12YWx1ZS0xMjM0NTY3ODkw"


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
    "External Secrets' property": f'{{"level":"debug","property":"db_password","value":"{PW}"}}\n',
    "CloudFormation parameters": f'[{{"ParameterKey": "DBPassword", "ParameterValue": "{PW}"}}]\n',
}


@pytest.mark.parametrize("name", RECORDS)
def test_a_records_value_is_hidden_when_its_name_field_names_a_secret(name: str) -> None:
    assert_hidden(RECORDS[name], PW, TOKEN, B64)


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
    assert_whole(text)


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
    assert_hidden(text, secret)


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
    assert_whole(text)


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
    assert_hidden(FED[name], PW, PAT)


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
    assert_whole(text)


# --- a secret store's payload under its own key ---------------------------------------------------------------------

BUNDLE = "WGs5LW1RMnZMN3BSNHRXOHpRcjJtSzl4"
STORES = {
    "oci secrets secret-bundle get": '{\n  "data": {\n    "secret-bundle-content": {\n'
                                     f'      "content": "{BUNDLE}",\n      "content-type": "BASE64"\n    }},\n'
                                     '    "version-number": 3\n  }\n}\n',
    "content-type first": '{"secret-bundle-content": {"content-type": "BASE64", '
                          f'"content": "{BUNDLE}"}}}}\n',
    "an SDK's secretBundleContent": f"secretBundleContent: {{ contentType: 'BASE64', content: '{BUNDLE}' }}\n",
    "the content object alone (--query)": f'{{\n  "content": "{BUNDLE}",\n  "content-type": "BASE64"\n}}\n',
    "Python SDK's repr": f'{{\n  "content": "{BUNDLE}",\n  "content_type": "BASE64"\n}}\n',
}


@pytest.mark.parametrize("name", STORES)
def test_a_vault_bundles_content_is_hidden(name: str) -> None:
    assert_hidden(STORES[name], BUNDLE)


@pytest.mark.parametrize("text", [
    '{"content": "Hello, world", "content-type": "text/plain"}\n',  # another type: a message's body
    '{"data": {"content": "release notes for 1.9", "lifecycle-state": "ACTIVE"}}\n',
    '{"secret-bundle-content": null, "stage": "CURRENT"}\n',
])
def test_other_content_stays_whole(text: str) -> None:
    assert_whole(text)


# --- a record printed one field a line, its value under a generic label ----------------------------------------------

RECORD_FIELDS = {
    "drone secret info": f"$ drone secret info acme/web --name docker_password\ndocker_password\nPull Request Read:  false\nPull Request Write: false\nData: {PW}\n",
    "consul kv get -detailed": f"CreateIndex      12\nFlags            0\nKey              app/prod/db_password\nLockIndex        0\nModifyIndex      12\nSession          -\nValue            {PW}\n",
    "a Name: then Value: record": f"Name: api_token\nUpdated: 2026-12-01\nValue: {TOKEN}\n",
}


@pytest.mark.parametrize("name", RECORD_FIELDS)
def test_a_records_value_line_is_hidden_by_the_name_above_it(name: str) -> None:
    assert_hidden(RECORD_FIELDS[name], PW, TOKEN)


@pytest.mark.parametrize("text", [
    "docker_username\nPull Request Read:  false\nData: octocat\n",  # no secret's name
    "Key              app/replicas\nFlags            0\nValue            3\n",
    "docker_password\n\nData: Zq7xK2mP9vL4wT8n\n",  # a blank line ends the record: prose around it
    "api_token\nValue: true\n",  # trivial
    "Data: 2026-12-02 10:00:00\n",  # no name above
])
def test_records_of_no_secret_stay_whole(text: str) -> None:
    assert_whole(text)


# --- a box table's row of a secret's name (a path's last segment) and its value, with no header --------------------

BOX_ROWS = {
    "aws ssm get-parameters-by-path --output table": (
        "-----------------------------------------------------------------------------------------------\n"
        "|                                   GetParametersByPath                                       |\n"
        "+------------------------------------+--------------------------------------------------------+\n"
        f"|  /app/prod/DATABASE_PASSWORD        |  {PW}                                     |\n"
        "|  /app/prod/LOG_LEVEL                |  info                                                   |\n"
        "+------------------------------------+--------------------------------------------------------+\n"),
    "aws ssm get-parameters --names, no path": (
        f"|  DB_PASSWORD                        |  {PW}   |\n|  LOG_LEVEL                          |  debug   |\n"),
    "a nested aws table row": f"||  /svc/payments/stripe_secret_key    |  {TOKEN}  ||\n",
}


@pytest.mark.parametrize("name", BOX_ROWS)
def test_a_box_row_of_a_secrets_name_and_value_is_hidden(name: str) -> None:
    assert_hidden(BOX_ROWS[name], PW, TOKEN)


@pytest.mark.parametrize("text", [
    "|  /app/prod/LOG_LEVEL                |  info                                  |\n",
    "|  /app/prod/TOKEN_TTL_SECONDS        |  3600                                  |\n",
    "|  /app/prod/API_KEY_ROTATION_DAYS    |  90                                    |\n",
    "|  /app/prod/DB_PASSWORD              |  ${DB_PASSWORD}                        |\n",
    "|  secret-scanner                     |  running                               |\n",
    "|  alias/prod-secrets       |  bddbd7ea-1ed3-342f-4c47-87d653b5c44e  |\n",  # a KMS alias names a key
])
def test_box_rows_of_no_secret_stay_whole(text: str) -> None:
    assert_whole(text)


# --- a SQL dump's rows: the column names the cell ------------------------------------------------------------------

HASH = "$2y$10$R9h/cIPz0gi.URNNX3kh2OPST9/PgBkqquzi.Ss7KIUgO2t0jWMUW"
DUMPS = {
    "mysqldump, no column names (accounts' table)": (
        "--\n-- Dumping data for table `users`\n--\n\nLOCK TABLES `users` WRITE;\n"
        f"INSERT INTO `users` VALUES (1,'admin@acme.io','{PW}','2025-01-03 10:00:00'),(2,'ops@acme.io','{PW}x','2025-02-11 12:30:00');\n"
        "UNLOCK TABLES;\n"),
    "mysqldump with its CREATE TABLE": (
        "CREATE TABLE `integrations` (\n  `id` int NOT NULL AUTO_INCREMENT,\n  `name` varchar(64) NOT NULL,\n"
        "  `api_key` varchar(64) DEFAULT NULL,\n  PRIMARY KEY (`id`)\n) ENGINE=InnoDB;\n"
        f"INSERT INTO `integrations` VALUES (1,'zapier','{TOKEN}'),(2,'cron',NULL);\n"),
    "pg_dump --column-inserts": f"INSERT INTO public.admins (id, login, password) VALUES (3, 'root', '{PW}');\n",
    "pg_dump COPY": f"COPY public.users (id, email, encrypted_password, sign_in_count) FROM stdin;\n1\ta@x.io\t{HASH}\t3\n2\tb@x.io\t{PW}\t0\n\\.\n",
    "a password's hash under its describing name": f"INSERT INTO users (id, password_digest) VALUES (8, '5f4dcc3b5aa765d61d8327deb882cf99{PW}');\n".replace(PW, ""),
}


@pytest.mark.parametrize("name", DUMPS)
def test_a_dumps_secret_cells_are_hidden(name: str) -> None:
    secrets = [PW, PW + "x", TOKEN, HASH, "5f4dcc3b5aa765d61d8327deb882cf99"]
    assert_hidden(DUMPS[name], *[s for s in secrets if s in DUMPS[name]])


@pytest.mark.parametrize("text", [
    "INSERT INTO `products` VALUES (1,'SKU-8842-XK','Widget Pro 9000','Ab3#kL9mQ2vR7tW',19.99);\n",  # no account's table
    "INSERT INTO `users` (`id`,`email`,`name`) VALUES (1,'a@x.io','Alice');\n",  # its columns name no secret
    "INSERT INTO `users` VALUES (1,'a@x.io','Alice Smith','2025-01-03 10:00:00','0c9a6d1e-3f2b-4c5d-8e7f-1a2b3c4d5e6f');\n",
    "INSERT INTO users (id, password_changed_at) VALUES (1, '2025-01-03 10:00:00');\n",
    "COPY public.orders (id, total, token_count) FROM stdin;\n1\t19.99\t3\n\\.\n",
    "-- INSERT INTO users VALUES are not printed when --no-data is given\n",
])
def test_dump_rows_of_no_secret_stay_whole(text: str) -> None:
    assert_whole(text)
