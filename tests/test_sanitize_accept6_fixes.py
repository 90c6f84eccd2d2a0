# ruff: noqa: E501  (output lines as tools print them; splitting them would hide their shape)
"""The families ``accept6`` closed after its acceptance check (issue #11), each as the shape an operator meets from
several tools, not as the one string of the corpus. Each case goes through the public ``sanitize_output`` and must
lose every secret and keep every line without one byte-identical; each look-alike must come out byte-identical."""

from __future__ import annotations

import pytest

from tests.support.sanitized import assert_hidden, assert_whole

PW = "Zq7xK2mP9vL4wT8n"
TOKEN = "k3X9qLm2Wp8ZrT5vYc7NbQ4d"


# --- a user flag ends its line: the next line's first word is no "user:password" ------------------------------------

@pytest.mark.parametrize("text", [
    "$ grep -hoE '(https?|postgres)://[^ \"]+' docs/*.md | sort -u\nhttps://github.com/acme/platform/blob/main/docs/secrets.md#rotating-the-api-key\n",
    "$ cut -d' ' -f7 access.log | uniq -u\nhttp://127.0.0.1:9090/api/v1/query?query=up\n",
    "set -u\nroot:x:0:0:root:/root:/bin/bash\n",
    "$ ps -u\nUSER:PID\n",
])
def test_a_line_ending_in_a_user_flag_leaves_the_next_line_whole(text: str) -> None:
    assert_whole(text)


@pytest.mark.parametrize("text", [
    f"curl -u admin:{PW} https://nexus.acme.io/service/rest/v1/status\n",
    f"curl -u\tadmin:{PW} https://nexus.acme.io/\n",
    f"curl --user=admin:{PW} https://nexus.acme.io/\n",
    f"wget --user ci:{PW} https://files.acme.io/x.tgz\n",
])
def test_the_user_flag_with_its_value_on_the_same_line_is_still_hidden(text: str) -> None:
    assert_hidden(text, PW)


# --- system tools' own spellings (bot/sanitize/context_system.py) ---------------------------------------------------

SCRAM = "SCRAM-SHA-256$4096:O5F/mM05WRuJCCLik6sMCw==$WQ8N42uNJFGDBDOS6EQaCThQeGKOTdDRqusRRWPPn+k=:jLn93DHE25g9rSCfmtbvoPWS++RztweKJUOYvtvontw="
SCRAM_KEYS = SCRAM.split("$", 2)[2]
SHA = "804710632c3e3e028a4ecfcbf3dae4a25641c5896fc6df0af03e29936629c99e"

SYSTEM = {
    "set -x trace, echo then --password-stdin": f"+ echo {PW}\n+ docker login --username robot --password-stdin harbor.acme.io\nLogin Succeeded\n",
    "set -x trace, quoted, helm registry": f"++ echo '{PW}'\n++ helm registry login registry.acme.io -u ci --password-stdin\n",
    "one pipeline, docker": f"$ echo {PW} | docker login -u ci --password-stdin registry.acme.io\n",
    "one pipeline, echo -n and sudo podman": f"echo -n \"{PW}\" | sudo podman login --username ci --password-stdin quay.io\n",
    "chpasswd": f"echo 'deploy:{PW}' | sudo chpasswd\n",
    "passwd --stdin": f"echo {PW} | passwd --stdin deploy\n",
    "ipsec.secrets PSK": f'203.0.113.10 198.51.100.20 : PSK "{PW}"\n',
    "ipsec.secrets base64 PSK": "%any : PSK 0sWnE3eEsybVA5dkw0d1Q4bg==\n",
    "ipsec.secrets EAP and XAUTH": f'carol : EAP "{PW}"\ndave : XAUTH "{TOKEN}"\n',
    "smbclient quoted domain user": f"$ smbclient //fs01/finance -U 'CORP\\svc_scan%{PW}' -c ls\n",
    "smbclient double quotes": f'smbclient -L //nas -U "backup%{PW}"\n',
    "rpcclient bare": f"rpcclient -U admin%{PW} 10.0.0.5 -c enumdomusers\n",
    "net --user=": f"net ads join --user=Administrator%{PW}\n",
    "redis ACL LIST hash": f'2) "user metrics on sanitize-payload #{SHA} ~metrics:* resetchannels -@all +get +mget"\n',
    "redis users.acl hash": f"user app on #{SHA} ~app:* +@read\n",
    "pg_dumpall role": f"ALTER ROLE billing WITH NOSUPERUSER INHERIT NOCREATEROLE NOCREATEDB LOGIN NOREPLICATION NOBYPASSRLS PASSWORD '{SCRAM}';\n",
    "pgbouncer userlist SCRAM": f'"app" "{SCRAM}"\n',
    "pg_authid row": f" app     | t        | {SCRAM}\n",
}


@pytest.mark.parametrize("name", SYSTEM)
def test_a_system_tools_secret_is_hidden(name: str) -> None:
    assert_hidden(SYSTEM[name], PW, TOKEN, "WnE3eEsybVA5dkw0d1Q4bg", SHA, SCRAM_KEYS)


@pytest.mark.parametrize("text", [
    'echo "$CR_PAT" | docker login ghcr.io -u acme --password-stdin\n',  # a variable, printed as written
    "echo ${{ secrets.GITHUB_TOKEN }} | docker login ghcr.io -u ${{ github.actor }} --password-stdin\n",
    "echo $REGISTRY_PASSWORD | docker login -u ci --password-stdin\n",
    "+ echo 'deploying v4.2.0'\n+ kubectl rollout status deploy/api\n",  # an echo before no password reader
    "echo done | tee -a /var/log/deploy.log\n",
    "cat ~/.docker/token | docker login --password-stdin ghcr.io\n",
    "Key management: PSK (WPA2)\n",
    "conn office\n    authby=secret\n    leftauth=psk\n",
    "ps -U root -o %cpu,%mem,comm\n",
    "pg_dump -U app -d orders --format=custom\n",
    "smbclient -U backup -c 'ls' //nas/share\n",
    '1) "user default on nopass sanitize-payload ~* &* +@all"\n',
    f"sha256 #{SHA}\n",  # a digest, no ACL rule
    "password_encryption = scram-sha-256\n",
    "SCRAM-SHA-256 authentication enabled for role app\n",
])
def test_system_look_alikes_stay_whole(text: str) -> None:
    assert_whole(text)


# --- a secret's name as a field's value, its secret in the next field ------------------------------------------------

RECORDS = {
    "External Secrets' debug log": f'{{"level":"debug","msg":"fetched secret","key":"kv/data/prod/billing","property":"db_password","value":"{PW}"}}\n',
    "1Password item field": f'{{"id": "password", "type": "CONCEALED", "purpose": "PASSWORD", "label": "password", "value": "{PW}"}}\n',
    "field/value pair": f'{{"field": "api_token", "value": "{TOKEN}"}}\n',
    "Spring actuator pretty-printed": f'        "spring.datasource.password": {{\n          "value": "{PW}",\n          "origin": "class path resource [application-prod.yml] - 6:15"\n        }},\n',
    "Spring actuator pretty-printed api key": f'    "payment.gateway.api-key": {{\n      "value": "{TOKEN}"\n    }}\n',
}


@pytest.mark.parametrize("name", RECORDS)
def test_a_records_value_is_hidden(name: str) -> None:
    assert_hidden(RECORDS[name], PW, TOKEN)


@pytest.mark.parametrize("text", [
    '{"msg":"fetched secret","key":"kv/data/prod/billing","property":"region","value":"eu-west-1"}\n',
    '{"id": "username", "type": "STRING", "purpose": "USERNAME", "label": "username", "value": "admin"}\n',
    '{"field": "password_min_length", "value": "12"}\n',
    '        "server.port": {\n          "value": 8080,\n',
    '        "app.token-ttl": {\n          "value": "3600",\n',
    '        "spring.datasource.password": {\n          "value": "******",\n',
    '    "label": "Token lifetime",\n    "value": "3600"\n',
])
def test_record_look_alikes_stay_whole(text: str) -> None:
    assert_whole(text)


@pytest.mark.parametrize("text", [
    "2026-12-02T00:30:10.4410100Z + echo \"***\" | docker login harbor.acme.example --username 'robot$ci' --password-stdin\n",
    'echo "$(cat /run/secrets/registry)" | docker login -u ci --password-stdin r.io\n',
    "smbclient //nas/share -U 'backup%***'\n",
    'strongswan: 10.0.0.1 : PSK "<your-psk-here>"\n',
])
def test_masked_and_placeholder_values_stay_whole(text: str) -> None:
    assert_whole(text)


# --- a value in triple quotes; a bare "Key" in an object named for what it signs ------------------------------------

JWT_KEY = "ZNhblmQoXPj+Gs1aq85y4b+dpAdiY14f1Cr7dVgSQPtBC6vfb4UkUr18Ho/fC273"
QUOTED = {
    "grafana.ini": f'[smtp]\nuser = grafana@mg.acme.io\npassword = """{PW};#x"""\nfrom_address = grafana@acme.io\n',
    "TOML multi-line basic string": f'[auth]\napi_token = """{TOKEN}"""\n',
    "TOML literal string": f"db_password = '''{PW}'''\n",
    "Python constant": f'SECRET_KEY = """{TOKEN}"""\n',
    "appsettings pretty-printed": f'  "Jwt": {{\n    "Issuer": "https://crm.acme.io",\n    "Key": "{JWT_KEY}",\n    "LifetimeMinutes": 60\n  }}\n',
    "one line, JwtSettings": f'{{"JwtSettings": {{"Audience": "api", "Key": "{TOKEN}"}}}}\n',
    "HmacOptions": f'{{"HmacOptions": {{"key": "{TOKEN}"}}}}\n',
}


@pytest.mark.parametrize("name", QUOTED)
def test_a_triple_quoted_value_and_a_purpose_objects_key_are_hidden(name: str) -> None:
    assert_hidden(QUOTED[name], PW, TOKEN, JWT_KEY)


@pytest.mark.parametrize("text", [
    'token_ttl = """3600"""\n',
    'secret_key = """changeme"""\n',
    'api_key_description = """The key used to call the partner API"""\n',
    'def check_password(self):\n    """Return True if the password matches."""\n',
    'PASSWORD_PROMPT = """\nEnter your password:\n"""\n',  # a multi-line string: not one line's value
    '{"Jwt": {"Audience": "api"}, "Storage": {"Key": "uploads/2026/12/report.pdf"}}\n',
    '{"Encryption": {"Key": "arn:aws:kms:eu-west-1:481516234200:key/9f1c2a3b-4d5e-4f60-8a7b-1c2d3e4f5a6b"}}\n',
    '{"Encryption": {"Enabled": true, "Key": "default"}}\n',
    '"jwt": { "key": "${JWT_KEY}" }\n',
    '{"Cache": {"Key": "Zq7xK2mP9vL4wT8nYc7NbQ4d"}}\n',  # no purpose in the parent's name
])
def test_triple_quote_and_key_look_alikes_stay_whole(text: str) -> None:
    assert_whole(text)
