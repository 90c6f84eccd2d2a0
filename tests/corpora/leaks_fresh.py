# ruff: noqa: E501  (a corpus of output lines as tools print them; splitting them would hide their shape)
"""A second leak corpus, written by a reviewer who had not seen the first (issue #11): the same families in
other formats (JSON, XML, INI, ODBC, docker inspect, az/kubectl/helm output, list objects, escaped PEM...).

Fake credentials are assembled at runtime so secret scanners don't flag this file.
"""

from __future__ import annotations

import base64
import json

from tests.corpora.leak_case import Leak


def b64(text: str) -> str:
    return base64.b64encode(text.encode()).decode()


AZK = "Zq9mW3xR7tY2uI8oP4aS6dF1gH5jK0lZxC3vB7nM9qW2eR4tY6uI8oP0aS2dF4gH6jK8lZ1xC3vB5nM7qW9eR1" + "=="

FRESH_LEAKS: tuple[Leak, ...] = (
    Leak(
        "azure_conn_json",
        json.dumps(
            {
                "ConnectionStrings": {
                    "Storage": "DefaultEndpointsProtocol=https;AccountName=acct9;AccountKey="
                    + AZK
                    + ";EndpointSuffix=core.windows.net"
                }
            }
        ),
        (AZK,),
    ),
    Leak(
        "azure_cli_keys",
        '[\n  {\n    "keyName": "key1",\n    "permissions": "FULL",\n    "value": "' + AZK + '"\n  }\n]',
        (AZK,),
    ),
    Leak("azure_env", "AZURE_STORAGE_KEY=" + AZK, (AZK,)),
    Leak(
        "azure_sas_qs_first",
        "https://acct9.blob.core.windows.net/c/f.bin?sig=Rk3vQ8%2BzX1yW9uT7sR5qP3oN1mL0kJ8iH6gF4eD2cB0%3D&sv=2021-08-06&se=2027-01-01&sp=rl",
        ("Rk3vQ8%2BzX1yW9uT7sR5qP3oN1mL0kJ8iH6gF4eD2cB0",),
    ),
    Leak(
        "azure_sas_token_env",
        'AZURE_SAS_TOKEN="sv=2021-08-06&ss=bfqt&srt=sco&sp=rwdlacupx&se=2027-01-01T00:00:00Z&sig=Ab12Cd34Ef56Gh78Ij90Kl12Mn34Op56Qr78St90Uv%3D"',
        ("Ab12Cd34Ef56Gh78Ij90Kl12Mn34Op56Qr78St90Uv",),
    ),
    Leak(
        "k8s_json_pretty",
        json.dumps(
            {
                "apiVersion": "v1",
                "data": {"DB_PASS": b64("Wq7!pass-zz"), "api.key": b64("k3y-abc-999")},
                "kind": "Secret",
                "metadata": {"name": "app", "namespace": "default"},
                "type": "Opaque",
            },
            indent=4,
        ),
        (
            b64("Wq7!pass-zz"),
            b64("k3y-abc-999"),
        ),
    ),
    Leak(
        "k8s_json_list",
        json.dumps(
            {
                "apiVersion": "v1",
                "items": [
                    {
                        "apiVersion": "v1",
                        "data": {"tls.key": b64("PRIVKEYMATERIAL-123")},
                        "kind": "Secret",
                        "metadata": {"name": "tls"},
                        "type": "kubernetes.io/tls",
                    }
                ],
                "kind": "List",
            },
            indent=4,
        ),
        (b64("PRIVKEYMATERIAL-123"),),
    ),
    Leak(
        "k8s_yaml_list",
        "apiVersion: v1\nitems:\n- apiVersion: v1\n  data:\n    token: "
        + b64("tok-abcdefgh-123")
        + "\n  kind: Secret\n  metadata:\n    name: sa-token\n  type: kubernetes.io/service-account-token\nkind: List\n",
        (b64("tok-abcdefgh-123"),),
    ),
    Leak(
        "k8s_stringdata_kind_first",
        "apiVersion: v1\nkind: Secret\nmetadata:\n  name: x\nstringData:\n  config.yaml: |\n    user: app\n    dbpw: plainpw77zz\n  other: plainvalue99\n",
        (
            "plainpw77zz",
            "plainvalue99",
        ),
    ),
    Leak(
        "k8s_compact_json",
        json.dumps({"apiVersion": "v1", "data": {"p": b64("compact-pw-9")}, "kind": "Secret"}),
        (b64("compact-pw-9"),),
    ),
    Leak(
        "docker_config",
        json.dumps(
            {
                "auths": {
                    "registry.example.com": {"auth": b64("robot:Rg7tq-99-xx")},
                    "ghcr.io": {"username": "me", "password": "dkr-pw-7788"},
                }
            },
            indent=2,
        ),
        (
            b64("robot:Rg7tq-99-xx"),
            "dkr-pw-7788",
        ),
    ),
    Leak(
        "docker_config_compact",
        json.dumps({"auths": {"r.example.com": {"auth": b64("u:Pw12345678")}}}),
        (b64("u:Pw12345678"),),
    ),
    Leak(
        "dockerconfigjson_secret",
        "apiVersion: v1\ndata:\n  .dockerconfigjson: "
        + b64(json.dumps({"auths": {"r": {"auth": "x"}}}))
        + "\nkind: Secret\ntype: kubernetes.io/dockerconfigjson\n",
        (b64(json.dumps({"auths": {"r": {"auth": "x"}}})),),
    ),
    Leak("url_pw_slash", "fetching from https://deploy:ab/cd@ef@git.example.com/repo.git", ("ab/cd@ef",)),
    Leak("url_pw_pct", "redis://:p%40ss%2Fw0rd@redis-master:6379/0", ("p%40ss%2Fw0rd",)),
    Leak("url_pw_amqp", "AMQP_URL=amqps://rabbit:Xk29fa0@mq.internal:5671/vhost", ("Xk29fa0",)),
    Leak("url_pw_in_json", '{"url": "mongodb+srv://svc:M0ng0Pw!@cluster0.abc.mongodb.net/db"}', ("M0ng0Pw!",)),
    Leak("go_mysql_dsn", 'dsn := "appuser:gO-dsn-pw9@tcp(10.0.0.5:3306)/orders?parseTime=true"', ("gO-dsn-pw9",)),
    Leak("go_mysql_dsn_unix", "DATABASE_DSN=root:un1xPw@unix(/var/run/mysqld/mysqld.sock)/app", ("un1xPw",)),
    Leak("env_pass", "PASS=tr0ub4dor", ("tr0ub4dor",)),
    Leak(
        "env_encryption_key",
        "export ENCRYPTION_KEY=4f9a8b7c6d5e4f3a2b1c0d9e8f7a6b5c",
        ("4f9a8b7c6d5e4f3a2b1c0d9e8f7a6b5c",),
    ),
    Leak("env_signing_key", "SIGNING_KEY='sgn_9Fh2kLm4Qp'", ("sgn_9Fh2kLm4Qp",)),
    Leak(
        "env_app_key",
        "APP_KEY=base64:Vd8nQ2kX9mZp3rT6yW1uE5oI7aS4dF0gH2jK8lQ4xC0=",
        ("Vd8nQ2kX9mZp3rT6yW1uE5oI7aS4dF0gH2jK8lQ4xC0",),
    ),
    Leak("env_db_passwd_lower", "db_passwd = correcthorse", ("correcthorse",)),
    Leak(
        "env_secret_lower",
        "client_secret: 7d1e6f0a-2b3c-4d5e-8f90-a1b2c3d4e5f6",
        ("7d1e6f0a-2b3c-4d5e-8f90-a1b2c3d4e5f6",),
    ),
    Leak(
        "docker_env_inspect",
        '"Env": [\n  "PATH=/usr/bin",\n  "POSTGRES_PASSWORD=pgDockerPw1",\n  "JWT_SECRET=jwtSecretValue77"\n]',
        (
            "pgDockerPw1",
            "jwtSecretValue77",
        ),
    ),
    Leak("htpasswd_md5", "admin:$apr1$r31.....$HqJZimcKQFAMYayBlzkrA/", ("$apr1$r31.....$HqJZimcKQFAMYayBlzkrA/",)),
    Leak(
        "htpasswd_bcrypt",
        "ops:$2y$05$c4WoMPo3SXsafkva.HHa6uXQZWr7oboPiC2bT/r7q1BB8I2s0BRqC",
        ("c4WoMPo3SXsafkva.HHa6uXQZWr7oboPiC2bT",),
    ),
    Leak("pgpass", "db.prod.internal:5432:*:replicator:Rep1ic8!pw", ("Rep1ic8!pw",)),
    Leak("mysql_p", "+ mysql -h db -u root -pMyR00tPw -e 'show databases'", ("MyR00tPw",)),
    Leak("mysqldump_password", "mysqldump --password=DumpPw55 --all-databases", ("DumpPw55",)),
    Leak("curl_u", "+ curl -sS -u ci-bot:cUrlPw0rd https://nexus.example.com/", ("cUrlPw0rd",)),
    Leak("curl_user_eq", "curl --user=admin:Adm1nPass https://x", ("Adm1nPass",)),
    Leak(
        "conn_password_semicolon",
        "Server=tcp:sql.example.net,1433;Database=app;User ID=sa;Password=Sq1Srv!pw;Encrypt=true",
        ("Sq1Srv!pw",),
    ),
    Leak("conn_pwd", "Driver={ODBC Driver 18};Server=db;Uid=app;Pwd=odbcPw123;", ("odbcPw123",)),
    Leak(
        "aws_creds_file",
        "[default]\naws_access_key_id = "
        + "AKIA"
        + "Q3EGUWXZ7EXAMPL3\naws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCYz9xmpLe0aB",
        (
            "AKIA" + "Q3EGUWXZ7EXAMPL3",
            "wJalrXUtnFEMI/K7MDENG/bPxRfiCYz9xmpLe0aB",
        ),
    ),
    Leak(
        "aws_json",
        '{"AccessKeyId": "ASIA' + 'Y34FZKBOKMUTVV7A", "SecretAccessKey": "Qm9vK2xYz3/Ab7Cd9Ef1Gh3Ij5Kl7Mn9Op1Qr3St", "SessionToken": "IQoJb3JpZ2luX2VjEJr//////////wEaCXVzLWVhc3QtMSJHMEUCIQ"}',
        (
            "ASIA" + "Y34FZKBOKMUTVV7A",
            "Qm9vK2xYz3/Ab7Cd9Ef1Gh3Ij5Kl7Mn9Op1Qr3St",
            "IQoJb3JpZ2luX2VjEJr",
        ),
    ),
    Leak(
        "github_fine",
        "remote: https://x-access-token:ghs_" + "Ab3Cd5Ef7Gh9Ij1Kl3Mn5Op7Qr9St1Uv3Wx5Y@github.com/org/repo",
        ("ghs_Ab3Cd5Ef7Gh9Ij1Kl3Mn5Op7Qr9St1Uv3Wx5Y",),
    ),
    Leak(
        "github_pat_fine",
        "GH_TOKEN=github_pat_" + "11ABCDEFG0123456789_abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUV",
        ("11ABCDEFG0123456789_abcdefghijklmnop",),
    ),
    Leak(
        "slack_in_json",
        '{"ok":true,"bot_token":"xo' + 'xb-2222222222-3333333333333-QwErTyUiOpAsDfGhJkLzXcVb"}',
        ("QwErTyUiOpAsDfGhJkLzXcVb",),
    ),
    Leak(
        "slack_webhook",
        "posting to https://hooks.slack.com/services/T0ABCDE12/B0FGHIJ34/aBcDeFgHiJkLmNoPqRsTuVwX",
        ("aBcDeFgHiJkLmNoPqRsTuVwX",),
    ),
    Leak(
        "anthropic",
        "ANTHROPIC_API_KEY=sk-" + "ant-api03-Zx9Yw8Vu7Ts6Rq5Po4Nm3Lk2Ji1Hg0Fe-AbCdEfGhIjKl-QQAA",
        ("Zx9Yw8Vu7Ts6Rq5Po4Nm3Lk2Ji1Hg0Fe",),
    ),
    Leak(
        "gcp_sa",
        json.dumps(
            {
                "type": "service_account",
                "project_id": "p",
                "private_key_id": "a1b2c3d4e5f60718293a4b5c6d7e8f9012345678",
                "private_key": "-----BEGIN "
                + "PRIVATE KEY-----\nMIIEvQIBADANBgkqhkiG9w0BAQEFAASCBKcwggSjAgEAAoIBAQC7\n-----END PRIVATE KEY-----\n",
                "client_email": "x@p.iam.gserviceaccount.com",
            },
            indent=2,
        ),
        ("MIIEvQIBADANBgkqhkiG9w0BAQEFAASCBKcwggSjAgEAAoIBAQC7",),
    ),
    Leak(
        "gcp_sa_compact",
        json.dumps(
            {
                "type": "service_account",
                "private_key": "-----BEGIN "
                + "PRIVATE KEY-----\nMIIEvgIBADANBgkqhkiG9w0BAQEFAASCBKgwggSkAgEAAoIBAQDx\n-----END PRIVATE KEY-----\n",
            }
        ),
        ("MIIEvgIBADANBgkqhkiG9w0BAQEFAASCBKgwggSkAgEAAoIBAQDx",),
    ),
    Leak(
        "pem_ec",
        "-----BEGIN EC "
        + "PRIVATE KEY-----\nMHcCAQEEIBkg4LVWM9nuwNSk3yByxZpYRTBnVJk5oCgt3+nYvQ5toAoGCCqGSM49\n-----END EC PRIVATE KEY-----",
        ("MHcCAQEEIBkg4LVWM9nuwNSk3yByxZpYRTBnVJk5oCgt3",),
    ),
    Leak(
        "pem_openssh",
        "-----BEGIN OPENSSH "
        + "PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQAAAAAAAAABAAAAMwAAAAtzc2gtZW\n-----END OPENSSH PRIVATE KEY-----",
        ("b3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQ",),
    ),
    Leak(
        "pem_encrypted",
        "-----BEGIN ENCRYPTED "
        + "PRIVATE KEY-----\nMIIFHDBOBgkqhkiG9w0BBQ0wQTApBgkqhkiG9w0BBQwwHAQI\n-----END ENCRYPTED PRIVATE KEY-----",
        ("MIIFHDBOBgkqhkiG9w0BBQ0wQTApBgkqhkiG9w0BBQwwHAQI",),
    ),
    Leak(
        "pem_escaped_json",
        '{"key": "-----BEGIN RSA ' + 'PRIVATE KEY-----\\nMIIEpAIBAAKCAQEA1x2y3z4ExampleRsaKeyMaterial\\n-----END RSA PRIVATE KEY-----"}',
        ("MIIEpAIBAAKCAQEA1x2y3z4ExampleRsaKeyMaterial",),
    ),
    Leak(
        "jwt_cookie",
        "Set-Cookie: session=eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJhZG1pbiIsImV4cCI6MTk5OTk5OTk5OX0.Xk2f9Q8vZ3m1R7tY5uI0oP2aS4dF6gH8jK0lZ1xC3vB; Path=/; HttpOnly",
        (
            "eyJzdWIiOiJhZG1pbiIsImV4cCI6MTk5OTk5OTk5OX0",
            "Xk2f9Q8vZ3m1R7tY5uI0oP2aS4dF6gH8jK0lZ1xC3vB",
        ),
    ),
    Leak(
        "bearer_header",
        "> Authorization: Bearer ya29.a0AfH6SMBx7Yq2Zk9Lm3Np5Rt7Vw1Xy",
        ("ya29.a0AfH6SMBx7Yq2Zk9Lm3Np5Rt7Vw1Xy",),
    ),
    Leak(
        "bearer_lower_json",
        '{"headers": {"authorization": "bearer 9f8e7d6c5b4a39281706f5e4d3c2b1a0"}}',
        ("9f8e7d6c5b4a39281706f5e4d3c2b1a0",),
    ),
    Leak("x_api_key_header", "< X-Api-Key: 3fa85f6457174562b3fc2c963f66afa6", ("3fa85f6457174562b3fc2c963f66afa6",)),
    Leak(
        "vault_token",
        "VAULT_TOKEN=hvs.CAESIJ4Kx7w9Zq3mN5pR8tV2yB6dF0gH1jL4oS7uX9zA",
        ("hvs.CAESIJ4Kx7w9Zq3mN5pR8tV2yB6dF0gH1jL4oS7uX9zA",),
    ),
    Leak(
        "npmrc",
        "//registry.npmjs.org/:_authToken=npm_" + "Ab1Cd2Ef3Gh4Ij5Kl6Mn7Op8Qr9St0UvWxYz12",
        ("Ab1Cd2Ef3Gh4Ij5Kl6Mn7Op8Qr9St0UvWxYz12",),
    ),
    Leak(
        "pypirc",
        "[pypi]\nusername = __token__\npassword = pypi-AgEIcHlwaS5vcmcCJGE0ZjYxMjM0LTU2NzgtOTBhYi1jZGVmLTEyMzQ1Njc4OTBhYgACKlsz",
        ("pypi-AgEIcHlwaS5vcmcCJGE0ZjYxMjM0",),
    ),
    Leak(
        "helm_values_password",
        'postgresql:\n  auth:\n    postgresPassword: hElmPw-2024\n    password: "quotedHelmPw"',
        (
            "hElmPw-2024",
            "quotedHelmPw",
        ),
    ),
    Leak("xml_password", '<add key="DbPassword" value="xmlConfPw9" />', ("xmlConfPw9",)),
    Leak("xml_elem", "<password>xmlElemPw77</password>", ("xmlElemPw77",)),
    Leak("terraform_output", 'db_password = "tfOutPw-88"', ("tfOutPw-88",)),
    Leak("stripe", "STRIPE_KEY=sk_live_" + "51HxYzAbCdEfGhIjKlMnOpQr", ("51HxYzAbCdEfGhIjKlMnOpQr",)),
    Leak("password_leading_slash", "db password: /Sup3r$ecret!", ("/Sup3r$ecret!",)),
)
