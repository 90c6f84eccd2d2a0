# ruff: noqa: E501  (output lines as tools print them; splitting them would hide their shape)
"""The last seven leaks the third acceptance check left open (``leaks_accept3.OPEN_CASES``), closed by leaks7: a
program's own spelling of a secret (``bot/sanitize/context_programs.py``: az keyvault's ``"value"`` under a secret's
id, Rails' ``ENV.fetch`` default, a Windows answer file's ``<Value>``, a PHP stack trace's PDO arguments, Argo CD's
initial password, ``elasticsearch-reset-password``'s ``New value:``), the plural of a key's compound (``APP_KEYS``)
and an environment line's ``*_PW``. Each secret is hidden, and the look-alikes beside it come out byte-identical."""

from __future__ import annotations

import pytest

from bot.sanitize import sanitize_output
from bot.sanitize.context_programs import KEY_VAULT_LOOKBACK
from bot.sanitize.secret_names import name_kind

PW = "qAcRVmN1L2*B6e!"
B64 = "c8npshoiH870cYvQf0arcw=="
VERSION = "3c1b0e9d8f7a4b2c9e1d0f6a5b4c3d2e"


def _key_vault(name: str, value: str, between: str = '  "tags": {},\n') -> str:
    return (f'{{\n  "contentType": null,\n  "id": "https://kv-prod-weu.vault.azure.net/secrets/{name}/{VERSION}",\n'
            f'  "kid": null,\n  "managed": null,\n  "name": "{name}",\n{between}  "value": "{value}"\n}}\n')


SECRETS: dict[str, tuple[str, str]] = {
    "key vault, a password's name": (_key_vault("orders-db-password", "pr5PPjyeUxS.PPQqxB.7j6O"), "pr5PPjyeUxS"),
    # whatever the secret's name: the vault keeps it secret (az keyvault secret set prints the same object)
    "key vault, any name": (_key_vault("feature-config", "hunter2"), "hunter2"),
    "key vault, tags between": (_key_vault("smtp", "Zq9mW3xR7tY2", '  "tags": {\n    "env": "prod",\n'
                                           '    "owner": "payments {core}"\n  },\n'), "Zq9mW3xR7tY2"),
    "key vault, escaped quote": (_key_vault("api", 'ab\\"Zq9mW3xR7tY2'), "Zq9mW3xR7tY2"),
    "key vault, sovereign cloud": (_key_vault("api", "Zq9mW3xR7tY2").replace("azure.net", "azure.cn"),
                                   "Zq9mW3xR7tY2"),
    "key vault, a long value": (_key_vault("pfx", "MIIKUAIBAzCCCgwGCSqGSIb3DQEHAaCCCf0Egg" + "Qw7x" * 200),
                                "Qw7xQw7x"),
    "env DB_PW": (f"DB_PW={PW}\n", PW),
    "env ADMIN_PW exported": (f"export ADMIN_PW='{PW}'\n", PW[:8]),
    "env db_pw in a compose list": (f"      - db_pw={PW}\n", PW),
    "env APP_KEYS (Strapi)": (f"APP_KEYS={B64},UR06h6wWyzOtEDAfi/TPzA==\n", B64),
    "compose APP_KEYS": (f"      APP_KEYS: {B64},UR06h6wWyzOtEDAfi/TPzA==\n", B64),
    "JSON apiKeys": (f'{{"apiKeys": "Zq9mW3xR7tY2uI8oP4aS,{B64}"}}\n', "Zq9mW3xR7tY2"),
    "Rails ENV.fetch block": (f'  password: <%= ENV.fetch("DB_PASSWORD") {{ "{PW}" }} %>\n', PW),
    "Rails ENV.fetch argument": (f"  password: <%= ENV.fetch('DB_PASSWORD', '{PW}') %>\n", PW),
    "Rails ENV.fetch secret_key_base": ('  secret_key_base: <%= ENV.fetch("SECRET_KEY_BASE") { "9f2c1e7a8b3d4c5e6f7a8b'
                                        '9c0d1e2f3a" } %>\n', "9f2c1e7a8b3d"),
    "unattend AdministratorPassword": (f"<AdministratorPassword>\n    <Value>{PW}</Value>\n"
                                       "    <PlainText>true</PlainText>\n</AdministratorPassword>\n", PW),
    "unattend AutoLogon base64": ("<AutoLogon>\n  <Password>\n    <Value>UABhAHMAcwB3AG8AcgBkADEAMgAzAA==</Value>\n"
                                  "    <PlainText>false</PlainText>\n  </Password>\n</AutoLogon>\n", "UABhAHMAcwB3"),
    "unattend one line": (f"<Password><Value>{PW}</Value><PlainText>true</PlainText></Password>\n", PW),
    "an XML attribute pass= that is no setup pass": ('<settings pass="Xk9mQ2vL8pR4">\n', "Xk9mQ2vL8pR4"),
    "PDO constructor": (f"#0 /var/www/html/lib/db.php(12): PDO->__construct('mysql:host=db;d...', 'shop', '{PW}')\n",
                        PW),
    "PDO cut password, options": ("#0 /app/db.php(9): PDO->__construct('pgsql:host=pg;...', 'app', "
                                  "'Zq9mW3xR7tY2uI8...', Array)\n", "Zq9mW3xR7tY2"),
    "PDO password with a quote": ("#0 /app/db.php(9): PDO->__construct('mysql:host=db', 'app', 'Zq9m'W3xR7tY2')\n",
                                  "W3xR7tY2"),
    "Doctrine PDOConnection": ("#3 /app/vendor/doctrine/dbal/lib/Doctrine/DBAL/Driver/PDOMySql/Driver.php(31): "
                               f"Doctrine\\DBAL\\Driver\\PDOConnection->__construct('mysql:host=db;p...', 'root', "
                               f"'{PW}', Array)\n", PW),
    "mysqli constructor": (f"#0 /app/db.php(3): mysqli->__construct('db', 'shop', '{PW}', 'shop')\n", PW),
    "Perl DBI connect": ("DBI connect('dbname=crm;host=pg-crm','crm','Zq9m,W3xR7)tY2',...) failed: FATAL:  password "
                         'authentication failed for user "crm" at /opt/crm/lib/DB.pm line 22.\n', "W3xR7"),
    "elasticsearch-setup-passwords": ("Changed password for user apm_system\nPASSWORD apm_system = 2y9kLmQ7xR4vB8nP3wZt\n\n"
                                      "Changed password for user elastic\nPASSWORD elastic = Hq5sW1eR6tY0uI3oP8aS\n",
                                      "Hq5sW1eR6tY0"),
    "argocd initial password": ("7vrm5em2M5C7sorP\n\n This password must be only used for first time login. We "
                                "strongly recommend you update the password using `argocd account update-password`.\n",
                                "7vrm5em2M5C7sorP"),
    "elasticsearch-reset-password": ("Password for the [elastic] user successfully reset.\nNew value: bGS3jSlOP3k4HQxa\n",
                                     "bGS3jSlOP3k4HQxa"),
    "elasticsearch-reset-password, CRLF": ("Password for the [kibana_system] user successfully reset.\r\n"
                                           "New value: bGS3j=SlOP3k4HQxa\r\n", "bGS3j=SlOP3k4HQxa"),
}

LOOK_ALIKES = (
    # az keyvault listings and objects that hold no secret's value
    '[\n  {\n    "attributes": {\n      "enabled": true\n    },\n    "contentType": null,\n'
    '    "id": "https://kv-prod-weu.vault.azure.net/secrets/orders-db-password",\n    "managed": null,\n'
    '    "name": "orders-db-password",\n    "tags": {}\n  }\n]\n',
    '{\n  "id": "https://kv-prod-weu.vault.azure.net/secrets/orders-db-password/' + VERSION + '",\n'
    '  "tags": {\n    "value": "prod-rotation-policy"\n  },\n  "value": null\n}\n',
    '{\n  "id": "https://kv-prod-weu.vault.azure.net/secrets/orders-db-password/' + VERSION + '"\n}\n'
    '{\n  "name": "retention",\n  "value": "30 days"\n}\n',
    '{\n  "key": {"kid": "https://kv-prod-weu.vault.azure.net/keys/signing/' + VERSION + '", "kty": "RSA"},\n'
    '  "name": "signing",\n  "value": "not-a-key-vault-secret"\n}\n',
    "Name                ContentType    Enabled    Expires\n------------------  -------------  ---------  ---------\n"
    "orders-db-password                 True\nsmtp-api-token      text/plain     True       2027-01-01T00:00:00+00:00\n",
    # environment lines that only look like a password or keys
    "DB_POOL=10\nDB_PORT=5432\nPW_POLICY=strict\nAPP_KEY_ROTATION_DAYS=90\nGPG_KEYS=A035C8C19219BA821ECEA86B64E628F8D6\n",
    "SSH_AUTHORIZED_KEYS=ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIGq9mW3xR7tY2uI8oP4aS6dF1gH5jK0lZxC3vB7nM9qW ops@bastion\n",
    "Set APP_KEYS to a comma-separated list of random keys before the first start.\n",
    "max_keys: 100000\nauthorized_keys: /home/ops/.ssh/authorized_keys\ncache_keys: 4096\n",
    "  pw: 3\nPWD=/home/ops\nOLDPWD=/srv\n",
    # Rails defaults that are no secret
    '  port: <%= ENV.fetch("PORT") { 3000 } %>\n  pool: <%= ENV.fetch("RAILS_MAX_THREADS") { 5 } %>\n',
    '  password: <%= ENV.fetch("DB_PASSWORD") { nil } %>\n  password: <%= ENV.fetch("DB_PASSWORD") %>\n',
    '  password: <%= ENV.fetch("DB_PASSWORD") { "" } %>\n  host: <%= ENV.fetch("DB_HOST") { "localhost" } %>\n',
    '  password: <%= ENV.fetch("DB_PASSWORD") { "changeme" } %>\n',
    # answer-file values that are no password
    "<UserAccounts>\n  <AdministratorPassword>\n    <Value></Value>\n    <PlainText>true</PlainText>\n"
    "  </AdministratorPassword>\n</UserAccounts>\n",
    "<OOBE>\n  <HideEULAPage>\n    <Value>true</Value>\n  </HideEULAPage>\n  <ProtectYourPC>3</ProtectYourPC>\n</OOBE>\n",
    "<Password>\n  <Value>true</Value>\n  <PlainText>true</PlainText>\n</Password>\n",
    '<settings pass="windowsPE">\n<settings pass="specialize">\n<settings pass="oobeSystem">\n',
    "<SkipMachineOOBE><Value>true</Value></SkipMachineOOBE>\n<TimeZone><Value>UTC</Value></TimeZone>\n",
    # PHP stack traces without a password argument
    "#0 /app/db.php(9): PDO->__construct('sqlite::memory:', NULL, NULL)\n",
    "#0 /app/db.php(9): PDO->__construct('mysql:host=db', 'app', Object(SensitiveParameterValue), Array)\n",
    "#0 /app/src/Order.php(41): App\\Order->__construct('ord_123', 'EUR', 'pending')\n#1 {main}\n",
    "#2 /app/vendor/laravel/framework/src/Illuminate/Container/Container.php(929): ReflectionClass->newInstanceArgs(Array)\n",
    "PHP Fatal error:  Uncaught PDOException: SQLSTATE[HY000] [1045] Access denied for user 'shop'@'10.0.0.5' "
    "(using password: YES) in /var/www/html/lib/db.php:12\n",
    # argocd's other commands and Elasticsearch's other lines
    "$ argocd app list\nNAME      CLUSTER                         NAMESPACE  PROJECT  STATUS  HEALTH\n"
    "guestbook https://kubernetes.default.svc  default    default  Synced  Healthy\n",
    "$ argocd account update-password\n*** Enter password of currently logged in user (admin):\n"
    "Password updated\nContext 'argocd.example.com' updated\n",
    "This password must be only used for first time login.\n",
    "Rotated.\n\n This password must be only used for first time login, we said.\n",
    "Field changed: replicas\nOld value: 3\nNew value: 5\n",
    "Password for the [elastic] user successfully reset.\n",
    "DBI connect('dbname=crm;host=pg-crm','crm','',...) failed: fe_sendauth: no password supplied\n",
    "Changed password for user elastic\nThe password was changed by the operator.\n",
    "This tool will reset the password of the [elastic] user to an autogenerated value.\n",
)


@pytest.mark.parametrize("text,secret", SECRETS.values(), ids=list(SECRETS))
def test_the_secret_is_hidden(text: str, secret: str) -> None:
    shown = sanitize_output(text.encode()).text
    assert secret not in shown and "[REDACTED:" in shown, shown


@pytest.mark.parametrize("text", LOOK_ALIKES, ids=range(len(LOOK_ALIKES)))
def test_the_look_alike_is_byte_identical(text: str) -> None:
    assert sanitize_output(text.encode()).text == text


def test_a_key_vault_value_needs_its_id_in_the_same_object_within_the_lookback() -> None:
    far = _key_vault("smtp", "Zq9mW3xR7tY2", '  "tags": {\n' + '    "k": "v",\n' * (KEY_VAULT_LOOKBACK // 14) + '  },\n')
    assert "Zq9mW3xR7tY2" in sanitize_output(far.encode()).text  # known limit: kilobytes of tags between
    near = _key_vault("smtp", "Zq9mW3xR7tY2", '  "tags": {\n' + '    "k": "v",\n' * 20 + '  },\n')
    assert "Zq9mW3xR7tY2" not in sanitize_output(near.encode()).text


def test_the_plural_of_a_key_compound_names_a_key_and_other_plurals_do_not() -> None:
    assert name_kind("APP_KEYS") == ("key", False) and name_kind("apiKeys") == ("api_key", False)
    assert name_kind("ACCESS_KEYS") == ("access_key", False) and name_kind("signing-keys") == ("key", False)
    for name in ("keys", "authorized_keys", "SSH_KEYS", "GPG_KEYS", "max_keys", "cache_keys", "public_api_keys"):
        assert name_kind(name) is None, name
    assert name_kind("SECRET_KEYS") == ("secret", False)  # its word "secret" decides first, as before


def test_key_vault_values_after_the_ids_object_closed_stay_whatever_follows() -> None:
    """The object walk goes on from one value to the next under the same id (``context_programs._WALKED``): a key
    after the id's object closed is never the id's, even where a later object's braces balance the count again."""
    head = _key_vault("smtp", "Zq9mW3xR7tY2").rstrip("\n")
    text = head + '\n{"value": "first-after", "nested": {"value": "second-after"}}\n'
    shown = sanitize_output(text.encode()).text
    assert "Zq9mW3xR7tY2" not in shown and "first-after" in shown and "second-after" in shown


def test_many_values_under_one_id_are_each_hidden() -> None:
    text = _key_vault("smtp", "Zq9mW3xR7tY0").replace('"value"', '"value": "Zq9mW3xR7tY1",\n  "value"')
    shown = sanitize_output(text.encode()).text
    assert "Zq9mW3xR7tY0" not in shown and "Zq9mW3xR7tY1" not in shown
