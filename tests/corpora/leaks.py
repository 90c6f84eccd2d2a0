"""Leak corpus: one case per secret family the redactor must catch (issue #11), as operations output prints it.

Fake credentials are assembled at runtime so secret scanners don't flag this file. Each case lists the
secrets that must not survive; what else must stay visible is checked by the tests that use it.
"""

from __future__ import annotations

import base64

from tests.corpora.leak_case import Leak
from tests.corpora.leaks_accept import ACCEPT_LEAKS
from tests.corpora.leaks_accept2 import ACCEPT2_LEAKS
from tests.corpora.leaks_acl_keys import ACL_KEY_LEAKS
from tests.corpora.leaks_fresh import FRESH_LEAKS
from tests.corpora.leaks_leaks11 import LEAKS11_LEAKS
from tests.corpora.leaks_leaks15 import LEAKS15_LEAKS
from tests.corpora.leaks_leaks16 import LEAKS16_LEAKS
from tests.corpora.leaks_line_values import LINE_VALUE_LEAKS
from tests.corpora.leaks_open5 import OPEN5_LEAKS
from tests.corpora.leaks_open8 import OPEN8_LEAKS
from tests.corpora.leaks_ops import OPS_LEAKS
from tests.corpora.leaks_revsan5 import REVSAN5_LEAKS
from tests.corpora.leaks_tables10 import TABLES10_LEAKS
from tests.corpora.leaks_vendors import VENDOR_LEAKS


def _b64(text: str) -> str:
    return base64.b64encode(text.encode()).decode()


AZ_KEY = "Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq" + "/K1SZFPTOtr/KBHBeksoGMGw=="
SAS_SIG = "Z%2FRHIX5Xcg0Mq2rqI3OlWTjEg2tYkboXr1P9ZUXDtkk%3D"
DB_PW = "s3cr3t/with@chars"
K8S_PW = "hunter2-prod-Pw"
SB_KEY = "q8Xy1pZ3vB7nM2kL9wE4rT6yU0iO5pA8sD3fG7hJ1kL"
HEX_KEY = "8f2c1d9e7b3a4f6e0d2c8b1a9f7e3d5c"
GHP = "ghp" + "_" + "AbCdEfGhIjKlMnOpQrStUvWxYz0123456789"

LEAKS: tuple[Leak, ...] = (
    Leak("azure_account_key", "DefaultEndpointsProtocol=https;AccountName=prodlogs;AccountKey=" + AZ_KEY
         + ";EndpointSuffix=core.windows.net", (AZ_KEY, AZ_KEY[:20])),
    Leak("azure_sas", "https://prodlogs.blob.core.windows.net/backups/db.tar?sv=2022-11-02&ss=b&srt=o&sp=r"
         "&se=2026-12-31T00:00:00Z&st=2026-12-01T00:00:00Z&spr=https&sig=" + SAS_SIG, (SAS_SIG,)),
    Leak("azure_service_bus", "Endpoint=sb://bus.servicebus.windows.net/;SharedAccessKeyName=RootManageSharedAccessKey;"
         "SharedAccessKey=" + SB_KEY + "=", (SB_KEY,)),
    Leak("k8s_secret_yaml", "apiVersion: v1\ndata:\n  password: " + _b64(K8S_PW) + "\n  username: " + _b64("admin")
         + "\nkind: Secret\nmetadata:\n  name: db-credentials\n  namespace: prod\ntype: Opaque\n",
         (_b64(K8S_PW), _b64("admin"))),
    Leak("k8s_secret_stringdata", "apiVersion: v1\nkind: Secret\nmetadata:\n  name: app\nstringData:\n"
         "  DATABASE_URL_PLAIN: postgres-prod-host\n  config.yaml: |\n    password: " + K8S_PW + "\n    user: app\n"
         "type: Opaque\n", (K8S_PW, "postgres-prod-host")),
    Leak("k8s_secret_list", "apiVersion: v1\nitems:\n- apiVersion: v1\n  data:\n    token: " + _b64("tok-123456")
         + "\n  kind: Secret\n  metadata:\n    name: a\n- apiVersion: v1\n  data:\n    LOG_LEVEL: info\n"
         "  kind: ConfigMap\n  metadata:\n    name: b\nkind: List\n", (_b64("tok-123456"),)),
    Leak("k8s_secret_json", '{\n    "apiVersion": "v1",\n    "data": {\n        "password": "' + _b64(K8S_PW)
         + '",\n        "username": "' + _b64("admin") + '"\n    },\n    "kind": "Secret",\n    "metadata": {\n'
         '        "name": "db-credentials"\n    },\n    "type": "Opaque"\n}\n', (_b64(K8S_PW), _b64("admin"))),
    Leak("k8s_secret_json_compact", '{"apiVersion":"v1","data":{"api-key":"' + _b64("k-998877")
         + '"},"kind":"Secret","metadata":{"name":"x"}}', (_b64("k-998877"),)),
    Leak("docker_config", '{\n  "auths": {\n    "registry.example.com": {\n      "auth": "' + _b64("ci:Regi5try-Pw")
         + '"\n    }\n  }\n}', (_b64("ci:Regi5try-Pw"),)),
    Leak("url_password_slash", "DATABASE_URL=postgres://app:" + DB_PW + "@db.internal:5432/app", (DB_PW, "s3cr3t")),
    Leak("url_password_redis", "connecting to redis://:R3disPassw0rd@redis.prod:6379/0", ("R3disPassw0rd",)),
    Leak("go_mysql_dsn", 'dsn="app:My5qlPass!@tcp(mysql.prod:3306)/orders?parseTime=true"', ("My5qlPass!",)),
    Leak("ado_connection_string", "Server=tcp:sql.prod,1433;Database=orders;User Id=sa;Password=Sq1S3rver!;"
         "Encrypt=true", ("Sq1S3rver!",)),
    Leak("env_pass", "PASS=hunter2\nUSER=app", ("hunter2",)),
    Leak("env_encryption_key", "ENCRYPTION_KEY=" + HEX_KEY, (HEX_KEY,)),
    Leak("env_signing_key", "SIGNING_KEY='Zx9-kQ2_mW7pL4vR8tY1'", ("Zx9-kQ2_mW7pL4vR8tY1",)),
    Leak("env_app_key", "APP_KEY=base64:" + _b64("0123456789abcdef0123456789abcdef"),
         (_b64("0123456789abcdef0123456789abcdef"),)),
    Leak("env_db_password_lower", "db_password=wombat", ("wombat",)),
    Leak("htpasswd", "admin:$apr1$r31.....$HqJZimcKQFAMYayBlzkrA/\nops:{SHA}W6ph5Mm5Pz8GgiULbPgzG37mj9g=",
         ("$apr1$r31.....$HqJZimcKQFAMYayBlzkrA/", "W6ph5Mm5Pz8GgiULbPgzG37mj9g=")),
    Leak("shadow", "deploy:$6$rounds=5000$saltsalt$Vw8pFz3Qk1a2b3c4d5e6f7g8h9i0jKlMnOpQrStUvWxYz:19700:0:99999:7:::",
         ("Vw8pFz3Qk1a2b3c4d5e6f7g8h9i0j",)),
    Leak("pgpass", "db.prod.internal:5432:orders:app:PgPa55-word", ("PgPa55-word",)),
    Leak("mysql_p", "running: mysql -h db.prod -u root -pMyR00tPw orders < dump.sql", ("MyR00tPw",)),
    Leak("curl_u", "curl -sS -u deploy:Cu7lP4ss https://ci.example.com/api/json", ("Cu7lP4ss",)),
    Leak("k8s_env_pair", "        env:\n        - name: STRIPE_SECRET\n          value: whsec_live_9a8b7c6d5e4f\n",
         ("whsec_live_9a8b7c6d5e4f",)),
    Leak("github_token_in_url", "remote: https://" + GHP + "@github.com/org/repo.git", (GHP,)),
    Leak("json_password", '{"user": "app", "password": "correct horse battery staple"}',
         ("correct horse battery staple",)),
    Leak("yaml_client_secret", "oauth:\n  client_id: web-app\n  client_secret: 9d8c7b6a5f4e3d2c1b0a\n",
         ("9d8c7b6a5f4e3d2c1b0a",)),
    # A mid-line value whose delimiter is glued to the rest of it (an argv as ps prints it): the tail is listed
    # too, since a redaction cut at the delimiter hides the whole value's spelling but shows the tail.
    Leak("argv_glued_semicolon",
         "root  812  0.3  docker run -d -e MYSQL_ROOT_PASSWORD=Hq7;xP2vLm9Rt -p 3306:3306 mysql\n",
         ("Hq7;xP2vLm9Rt", "xP2vLm9Rt")),
    Leak("argv_glued_ampersand_comma", "java -jar app.jar --spring.datasource.password=Zt5&Kp8wQn3Vb --app.api_token="
         "Wq4vN8,mR2kT7xL9 --server.port=8080\n", ("Zt5&Kp8wQn3Vb", "Kp8wQn3Vb", "Wq4vN8,mR2kT7xL9", "mR2kT7xL9")),
    # The same whose first run before the delimiter is too short to judge alone (one or two characters, or digits)
    Leak("argv_glued_short_run", "root  812  0.3  docker run -d -e DB_PASSWORD=ab;cdefghij -e MYSQL_ROOT_PASSWORD="
         "x;9Kq2mL7pRw -e REDIS_PASSWORD=4821)Zt5Kp8wQ mysql\n",
         ("ab;cdefghij", "cdefghij", "x;9Kq2mL7pRw", "9Kq2mL7pRw", "4821)Zt5Kp8wQ", "Zt5Kp8wQ")),
    # Names aligned in a column wider than four blanks, opening their lines (terraform fmt, aligned .tfvars, ini,
    # .properties, PowerShell's Format-List): context_patterns.ALIGNED_BLANK
    Leak("aligned_tfvars", 'region                = "eu-west-1"\nadmin_password        = "Yz9SrUmqi&TlpG3FXD3sb1>C"\n'
         'client_secret            = "Q7vLm2Tz9Xk4pR8wN3bH"\n', ("Yz9SrUmqi&TlpG3FXD3sb1>C", "Q7vLm2Tz9Xk4pR8wN3bH")),
    Leak("aligned_properties", "db.url           : jdbc:postgresql://db01/app\ndb.password      : xK9vQ2mL7pR4\n"
         "db.user          = app\nldap.bind_password          = ab;cdefgh9\n",
         ("xK9vQ2mL7pR4", "ab;cdefgh9", "cdefgh9")),
    Leak("aligned_format_list", "AccessKeyId     : AKIAIOSFODNN7EXAMPLE\nSecretAccessKey : x\n"
         "SessionToken         : FwoGZXIvYXdzEBYaDHqa0AP1ky9bZ7Zk\nExpiration           : 12/1/2026 11:40:07 PM\n",
         ("FwoGZXIvYXdzEBYaDHqa0AP1ky9bZ7Zk",)),
)

LEAKS += FRESH_LEAKS + OPS_LEAKS + ACL_KEY_LEAKS + LINE_VALUE_LEAKS + ACCEPT_LEAKS + VENDOR_LEAKS + ACCEPT2_LEAKS
LEAKS += OPEN5_LEAKS + OPEN8_LEAKS + LEAKS11_LEAKS + TABLES10_LEAKS + REVSAN5_LEAKS
LEAKS += LEAKS15_LEAKS
LEAKS += LEAKS16_LEAKS
