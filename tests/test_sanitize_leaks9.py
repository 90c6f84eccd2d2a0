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
    # vendor prefixes and schemes
    "heroku token": ("HEROKU_API_KEY=HRKU-AAq9mW3xR7tY2uI8oP4aS6dF1gH5jK0l_ZxC3vB7nM9qW\n", "Zq9mW3xR7tY2"),
    "heroku token alone": ("HRKU-AAq9mW3xR7tY2uI8oP4aS6dF1gH5jK0l\n", "Zq9mW3xR7tY2"),
    "B2 application key": ("B2_APPLICATION_KEY=K005Zq9mW3xR7tY2uI8oP4aS6dF1gH5\n", "Zq9mW3xR7tY2"),
    "B2 key in JSON": ('{"applicationKey": "K004Zq9mW3xR7tY2uI8oP4aS6dF1gH5", "keyName": "backup"}\n', "Zq9mW3xR7tY2"),
    "LDAP SSHA in LDIF": ("userPassword: {SSHA}Zq9mW3xR7tY2uI8oP4aS6dF1gH5jK0l\n", "Zq9mW3xR7tY2"),
    "LDAP PBKDF2": ("olcRootPW: {PBKDF2-SHA512}10000$Zq9mW3xR7tY2uI8o$P4aS6dF1gH5jK0l\n", "Zq9mW3xR7tY2"),
    "Teams webhook without V2": ("https://acme.webhook.office.com/webhookb2/7c1e0f2a-1b2c-4d5e-8f90-a1b2c3d4e5f6@72f988bf-"
                                 "86f1-41af-91ab-2d7cd011db47/IncomingWebhook/2339d4655793c6a785f55d4188b8806d/0b5f6a1e-"
                                 "3c2d-4d8e-9f10-7a6b5c4d3e2f\n", "2339d4655793c6a7"),
    "STS token in a table": ("security_token     IQoJb3JpZ2luX2VjEMrBwgW4BvJDN7aP" + "Zq9mW3xR7tY2" * 10 + "\n",
                             "Zq9mW3xR7tY2"),
    # services' own spellings
    "haproxy insecure-password": ("userlist admins\n  user ops insecure-password Zq9mW3xR7tY2 groups g1\n", "Zq9mW3xR7tY2"),
    "sssd authtok": ("ldap_default_authtok = hunter2 with blanks\n", "hunter2"),
    "SET PASSWORD with PASSWORD()": ("SET PASSWORD = PASSWORD('Zq9mW3xR7tY2');\n", "Zq9mW3xR7tY2"),
    "set password lower case": ("set password for 'app'@'localhost' = 'Zq9mW3xR7tY2';\n", "Zq9mW3xR7tY2"),
    "envoy generic secret one line": ('{"generic_secret": {"secret": {"inline_bytes": "WnE5bVczeFI3dFky"}}}\n', "WnE5bVczeFI3dFky"),
    "erlang cookie env": ("RABBITMQ_ERLANG_COOKIE=ZQ9MW3XR7TY2UI8O\n", "ZQ9MW3XR7TY2"),
    "erlang cookie YAML": ('  erlangCookie: "Zq9mW3xR7tY2"\n', "Zq9mW3xR7tY2"),
    # commands echoed before what they print
    "consul kv get a token": ("$ consul kv get -recurse=false vault/unseal_token\nZq9mW3xR7tY2\n", "Zq9mW3xR7tY2"),
    "etcdctl get a password": ("+ etcdctl get /app/db/password\n/app/db/password\nZq9mW3xR7tY2\n", "Zq9mW3xR7tY2"),
    "wg genkey": ("$ wg genkey\nZq9mW3xR7tY2uI8oP4aS6dF1gH5jK0lZxC3vB7nM9qW=\n", "Zq9mW3xR7tY2"),
    "cat a keyfile": ("$ cat /data/mongodb-keyfile\nZq9mW3xR7tY2uI8oP4aS6dF1gH5jK0l\n", "Zq9mW3xR7tY2"),
    "NATS seed block": ("-----BEGIN USER NKEY SEED-----\nSUAZQ9MW3XR7TY2\n------END USER NKEY SEED------\n", "ZQ9MW3XR7TY2"),
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
    # what the new detectors' neighbours print without a secret
    "heroku auth:whoami\nops@acme.io\nHRKU is Heroku's token prefix.\n",
    "account = 0012a3b4c5d6e7f0000000001\nK001 is the first key's version.\nK0012345 sectors\n",
    "The {SHA} scheme is deprecated: use {SSHA} or {PBKDF2}.\n",
    "https://learn.microsoft.com/microsoftteams/platform/webhooks-and-connectors/how-to/add-incoming-webhook\n"
    "Create an IncomingWebhook/connector for the channel.\n",
    "security_token     (none)\nsession_token      -\n",
    "userlist admins\n  user ops password $6$rounds=5000$abc$\n  user ops insecure-password\n",
    "ldap_default_authtok_type = password\nkrb5_store_password_if_offline = True\n",
    "2026-12-02T04:17:00.123456Z\t   88 Query\tSET PASSWORD FOR 'shop'@'%' = ?\n"
    "mysql> SHOW VARIABLES LIKE 'validate_password%';\n",
    '    "generic_secret": {\n     "secret": {\n      "filename": "/etc/envoy/hmac"\n     }\n    }\n',
    '      "inline_string": "hello from envoy"\n',
    "Set-Cookie: theme=dark; Path=/\nerlang cookie: see the RabbitMQ clustering guide\n"
    'echo "ErLang Cookie : $(kubectl get secret rabbitmq -o jsonpath="{.data.rabbitmq-erlang-cookie}" | base64 -d)"\n',
    "$ consul kv get config/app/replicas\n3\n$ consul members\nNode  Address  Status\n",
    "$ etcdctl get /registry/namespaces/default --keys-only\n/registry/namespaces/default\n",
    "$ cat /etc/mongod.conf\nsecurity:\n  keyFile: /etc/mongod/keyfile\n",
    "-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\nNKEYs are sensitive and should be treated as secrets.\n",
)


@pytest.mark.parametrize("text,secret", SECRETS.values(), ids=list(SECRETS))
def test_the_secret_is_hidden(text: str, secret: str) -> None:
    shown = sanitize_output(text.encode()).text
    assert secret not in shown and "[REDACTED:" in shown, shown


@pytest.mark.parametrize("text", LOOK_ALIKES, ids=range(len(LOOK_ALIKES)))
def test_the_look_alike_is_byte_identical(text: str) -> None:
    assert sanitize_output(text.encode()).text == text
