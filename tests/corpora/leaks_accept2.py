# ruff: noqa: E501  (a corpus of output lines as tools print them; splitting them would hide their shape)
"""Second fresh-context acceptance corpus of issue #11 (``accept``, 23:45), written before reading the others.

Cases as kubectl, helm, terraform, docker, vault, aws, gcloud, az, ansible, CI logs, ``ps``, diffs, JSON logs and
tables print them, across every family the issue names. Every value comes from a seeded RNG at import (no real
credential). ``ACCEPT2_LEAKS`` are the cases the sanitizer redacts (part of ``tests/corpora/leaks.LEAKS``);
``ACCEPT2_OPEN`` the ones it still leaks, left for a decision (``bench/bench_sanitize.py`` counts them).
"""

from __future__ import annotations

import base64
import json
import random
import re
import string
import urllib.parse

from tests.corpora.leak_case import Leak

R = random.Random(4711_2026)
AL = string.ascii_letters + string.digits
HEX = "0123456789abcdef"
B64 = AL + "+/"


def rs(n: int, alpha: str = AL) -> str:
    return "".join(R.choice(alpha) for _ in range(n))


def pw(n: int = 14, extra: str = "!#%^*-_.") -> str:
    """A password with letters, digits and a few symbols (never starting with a symbol)."""
    return rs(2) + rs(n - 4, AL + extra) + rs(2, string.digits)


def b64(raw: bytes | str) -> str:
    return base64.b64encode(raw.encode() if isinstance(raw, str) else raw).decode()


def azkey() -> str:
    return b64(bytes(R.randrange(256) for _ in range(64)))


CASES: list[tuple[str, str, str, tuple[str, ...]]] = []


def case(name: str, family: str, text: str, *secrets: str) -> None:
    CASES.append((name, family, text, secrets))


# --- Azure: AccountKey, SAS sig, SharedAccessKey -------------------------------------------------------------
k = azkey()
case("az-connstr-json", "azure", f'{{\n  "connectionString": "DefaultEndpointsProtocol=https;EndpointSuffix=core.windows.net;AccountName=stprodlogs01;AccountKey={k};BlobEndpoint=https://stprodlogs01.blob.core.windows.net/"\n}}', k)
k = azkey()
case("az-keys-json", "azure", f'[\n  {{\n    "creationTime": "2026-03-01T10:22:41.112233+00:00",\n    "keyName": "key1",\n    "permissions": "FULL",\n    "value": "{k}"\n  }}\n]', k)
k1, k2 = azkey(), azkey()
case("az-keys-table", "azure", f"KeyName    Permissions    Value\n---------  -------------  {'-' * 88}\nkey1       FULL           {k1}\nkey2       FULL           {k2}", k1, k2)
sig = urllib.parse.quote(b64(bytes(R.randrange(256) for _ in range(32))), safe="")
case("az-sas-url", "azure", f"INFO: Uploading to https://stbackup.blob.core.windows.net/pgdump/orders-2026-12-01.dump?sv=2022-11-02&ss=b&srt=co&sp=rwdlac&se=2026-12-02T00:00:00Z&st=2026-12-01T00:00:00Z&spr=https&sig={sig}", sig)
sig = urllib.parse.quote(b64(bytes(R.randrange(256) for _ in range(32))), safe="")
case("az-sas-generate", "azure", f'"se=2026-12-31T23%3A59Z&sp=r&sv=2022-11-02&sr=c&sig={sig}"', sig)
sig = urllib.parse.quote(b64(bytes(R.randrange(256) for _ in range(32))), safe="")
case("az-sas-connstr", "azure", f"BlobEndpoint=https://stx.blob.core.windows.net/;SharedAccessSignature=sv=2022-11-02&ss=bfqt&srt=sco&sp=rwdlacupiytfx&se=2027-01-01T00:00:00Z&spr=https&sig={sig}", sig)
k = b64(bytes(R.randrange(256) for _ in range(32)))
case("az-servicebus", "azure", f"Endpoint=sb://orders-prod.servicebus.windows.net/;SharedAccessKeyName=RootManageSharedAccessKey;SharedAccessKey={k}", k)
k = azkey()
case("az-cosmos", "azure", f"AccountEndpoint=https://orders-db.documents.azure.com:443/;AccountKey={k};", k)
k = azkey()
case("az-tf-output", "azure", f'Outputs:\n\nprimary_access_key = "{k}"\nstorage_account_name = "stprodlogs01"', k)
k = azkey()
case("az-env", "azure", f"AZURE_STORAGE_ACCOUNT=stprodlogs01\nAZURE_STORAGE_KEY={k}", k)
k = b64(bytes(R.randrange(256) for _ in range(32)))
case("az-eventhub-log", "azure", f'2026-12-01T10:00:01Z ERROR failed to connect: Endpoint=sb://evh-ns.servicebus.windows.net/;SharedAccessKeyName=send;SharedAccessKey={k};EntityPath=clicks', k)
s = rs(3) + "8Q~" + rs(34, AL + "~._-")
case("az-sp-json", "azure", f'{{\n  "appId": "4f1c2a3b-9d8e-4f7a-b6c5-1a2b3c4d5e6f",\n  "displayName": "ci-deployer",\n  "password": "{s}",\n  "tenant": "72f988bf-86f1-41af-91ab-2d7cd011db47"\n}}', s)

# --- Kubernetes Secrets: data / stringData, YAML and JSON -----------------------------------------------------
u, p, t = b64("app"), b64(pw(18)), b64(rs(40))
case("k8s-get-yaml", "k8s", f"apiVersion: v1\ndata:\n  api-token: {t}\n  password: {p}\n  username: {u}\nkind: Secret\nmetadata:\n  creationTimestamp: \"2026-11-30T08:12:00Z\"\n  name: orders-db\n  namespace: prod\ntype: Opaque", p, t)
c = b64("-----BEGIN CERTIFICATE-----\n" + rs(64, B64) + "\n-----END CERTIFICATE-----\n")
key = b64("-----BEGIN PRIVATE KEY-----\n" + rs(64, B64) + "\n" + rs(64, B64) + "\n-----END PRIVATE KEY-----\n")
case("k8s-tls-yaml", "k8s", f"apiVersion: v1\nkind: Secret\nmetadata:\n  name: wildcard-tls\n  namespace: ingress\ntype: kubernetes.io/tls\ndata:\n  tls.crt: {c}\n  tls.key: {key}", key)
p, q = b64(pw(20)), b64(rs(32, HEX))
case("k8s-get-json", "k8s", json.dumps({"apiVersion": "v1", "data": {"DB_PASSWORD": p, "SESSION_KEY": q}, "kind": "Secret", "metadata": {"name": "web", "namespace": "prod"}, "type": "Opaque"}, indent=4), p, q)
a, b = pw(16), rs(40)
case("k8s-stringdata-helm", "k8s", f"---\n# Source: orders/templates/secret.yaml\napiVersion: v1\nkind: Secret\nmetadata:\n  name: orders\n  labels:\n    app.kubernetes.io/name: orders\ntype: Opaque\nstringData:\n  DATABASE_URL: \"postgres://orders:{a}@pg:5432/orders\"\n  webhook-signing: {b}", a, b)
a = pw(16)
case("k8s-last-applied", "k8s", "apiVersion: v1\nkind: Secret\nmetadata:\n  annotations:\n    kubectl.kubernetes.io/last-applied-configuration: |\n      " + json.dumps({"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "smtp", "namespace": "prod"}, "stringData": {"smtp-pass": a}}) + "\n  name: smtp\ntype: Opaque\ndata:\n  smtp-pass: " + b64(a), a, b64(a))
a, b = b64(pw(16)), b64(pw(16))
case("k8s-list-items", "k8s", f"apiVersion: v1\nitems:\n- apiVersion: v1\n  data:\n    password: {a}\n  kind: Secret\n  metadata:\n    name: one\n- apiVersion: v1\n  data:\n    password: {b}\n  kind: Secret\n  metadata:\n    name: two\nkind: List\nmetadata:\n  resourceVersion: \"\"", a, b)
a = b64(rs(32))
case("k8s-flow", "k8s", f"apiVersion: v1\nkind: Secret\nmetadata: {{name: flow, namespace: dev}}\ndata: {{token: {a}}}", a)
a = rs(24)
case("k8s-stringdata-json-compact", "k8s", json.dumps({"kind": "Secret", "apiVersion": "v1", "metadata": {"name": "x"}, "stringData": {"clientId": "web", "clientSecretValue": a}}), a)
a = b64(json.dumps({"auths": {"ghcr.io": {"auth": b64("bot:" + rs(36))}}}))
case("k8s-dockerconfigjson", "k8s", f"apiVersion: v1\ndata:\n  .dockerconfigjson: {a}\nkind: Secret\nmetadata:\n  name: regcred\ntype: kubernetes.io/dockerconfigjson", a)
a = b64(pw(18))
case("k8s-diff", "k8s", f"diff -u -N /tmp/LIVE-1/v1.Secret.prod.api /tmp/MERGED-1/v1.Secret.prod.api\n--- /tmp/LIVE-1/v1.Secret.prod.api\n+++ /tmp/MERGED-1/v1.Secret.prod.api\n@@ -1,6 +1,6 @@\n apiVersion: v1\n data:\n-  password: {b64(pw(10))}\n+  password: {a}\n kind: Secret", a)
a = pw(16)
case("k8s-stringdata-multiline", "k8s", f"apiVersion: v1\nkind: Secret\nmetadata:\n  name: app-config\nstringData:\n  config.yaml: |\n    database:\n      host: pg\n      password: {a}\n    log_level: info", a)
a = b64(rs(30))
case("k8s-data-after-type", "k8s", f"kind: Secret\napiVersion: v1\ntype: Opaque\nmetadata:\n  name: late\n  namespace: prod\ndata:\n  license: {a}\n", a)
a = b64(pw(15))
case("k8s-secret-crlf", "k8s", f"apiVersion: v1\r\nkind: Secret\r\nmetadata:\r\n  name: crlf\r\ndata:\r\n  password: {a}\r\n", a)

# --- Docker config auths ---------------------------------------------------------------------------------------
a = b64("deploy:" + pw(20))
case("docker-config", "docker", f'{{\n\t"auths": {{\n\t\t"registry.example.com": {{\n\t\t\t"auth": "{a}"\n\t\t}}\n\t}},\n\t"credsStore": ""\n}}', a)
a, t = b64("ci:" + rs(30)), rs(60, B64)
case("docker-config-identity", "docker", f'{{"auths":{{"123456789012.dkr.ecr.eu-west-1.amazonaws.com":{{"auth":"{a}"}},"myacr.azurecr.io":{{"identitytoken":"{t}"}}}}}}', a, t)
p = pw(18)
case("docker-config-plain", "docker", f'{{\n  "auths": {{\n    "https://index.docker.io/v1/": {{\n      "username": "opsbot",\n      "password": "{p}",\n      "email": "ops@example.com"\n    }}\n  }}\n}}', p)
a = b64("_json_key:" + rs(50))
case("docker-config-gcr", "docker", f'{{"auths": {{"gcr.io": {{"auth": "{a}", "email": "not@val.id"}}}}}}', a)
p = pw(16)
case("docker-inspect-env", "docker", f'        "Env": [\n            "PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin",\n            "POSTGRES_USER=orders",\n            "POSTGRES_PASSWORD={p}",\n            "PGDATA=/var/lib/postgresql/data"\n        ],', p)
p = pw(16)
case("docker-ps-run", "docker", f"CONTAINER ID   IMAGE         COMMAND                  CREATED\n3f2a1b0c9d8e   mysql:8.0     \"docker-entrypoint.s…\"   2 hours ago\n$ ps -ef | grep docker\nroot  4242  1  0 08:00 ?  00:00:01 docker run -d -e MYSQL_ROOT_PASSWORD={p} -p 3306:3306 mysql:8.0", p)
p = pw(16)
case("docker-login-ci", "docker", f"[Pipeline] sh\n+ docker login -u svc-build -p {p} registry.example.com\nWARNING! Using --password via the CLI is insecure. Use --password-stdin.\nLogin Succeeded", p)
p = pw(16)
case("docker-compose-config", "docker", f"services:\n  db:\n    environment:\n      MARIADB_PASSWORD: {p}\n      MARIADB_USER: shop\n    image: mariadb:11", p)

# --- connection strings with Password= / Pwd= ------------------------------------------------------------------
p = pw(16)
case("ado-sqlserver", "connstr", f'"ConnectionStrings": {{\n    "Default": "Server=tcp:orders-sql.database.windows.net,1433;Initial Catalog=orders;Persist Security Info=False;User ID=orders_app;Password={p};MultipleActiveResultSets=False;Encrypt=True;"\n}}', p)
p = pw(16)
case("ado-datasource", "connstr", f"Data Source=db01.corp.local;Initial Catalog=Billing;User Id=billing;Password={p}", p)
p = pw(14)
case("odbc-pwd-braced", "connstr", f"Driver={{ODBC Driver 18 for SQL Server}};Server=sql01;Database=hr;Uid=sa;Pwd={{{p};x}};TrustServerCertificate=yes", p)
p = pw(14)
case("jdbc-sqlserver", "connstr", f"spring.datasource.url=jdbc:sqlserver://sql01:1433;databaseName=hr;user=hr_app;password={p};encrypt=true", p)
p = pw(14)
case("jdbc-pg-query", "connstr", f"2026-12-01 10:00:00.123  INFO 1 --- [main] c.z.h.HikariDataSource : url=jdbc:postgresql://pg:5432/app?user=app&password={p}&sslmode=require", p)
p = pw(14)
case("oracle-connstr", "connstr", f"ORA_CONN=User Id=scott;Password={p};Data Source=(DESCRIPTION=(ADDRESS=(PROTOCOL=TCP)(HOST=ora1)(PORT=1521))(CONNECT_DATA=(SERVICE_NAME=ORCL)))", p)
p = pw(14)
case("npgsql-lower", "connstr", f"Host=pg.internal;Port=5432;Database=orders;Username=orders;password={p};SSL Mode=Require", p)
p = pw(14)
case("connstr-log", "connstr", f'{{"@t":"2026-12-01T10:00:00Z","@l":"Error","@m":"Cannot open database","ConnectionString":"Server=sql02;Database=crm;User ID=crm;Password={p};"}}', p)
p = pw(14)
case("connstr-spaces", "connstr", f"Server = sql03 ; Database = crm ; User Id = crm ; Password = {p} ;", p)
p = pw(14)
case("mongo-srv", "connstr", f"MONGO_URI=mongodb+srv://orders:{p}@cluster0.ab1cd.mongodb.net/orders?retryWrites=true&w=majority", p)
p = pw(20)
case("redis-url", "connstr", f"Error 111 connecting to redis://:{p}@redis-master.prod.svc:6379/0. Connection refused.", p)
p = pw(14)
case("amqp-url", "connstr", f"[2026-12-01 10:00:00,000: ERROR/MainProcess] consumer: Cannot connect to amqp://celery:{p}@rabbitmq:5672/prod: [Errno 111] Connection refused.", p)

# --- URL user-info (RFC 3986) ----------------------------------------------------------------------------------
p = rs(6) + "/" + rs(8)
case("url-slash", "url", f"origin\thttps://deploy:{p}@git.example.com/ops/infra.git (fetch)\norigin\thttps://deploy:{p}@git.example.com/ops/infra.git (push)", p)
p = rs(5) + "@" + rs(7)
case("url-at", "url", f"psql: error: connection to server at \"db\" failed\nDATABASE_URL=postgres://app:{p}@db.internal:5432/app", p)
p = rs(5) + "%40" + rs(4) + "%2F" + rs(5)
case("url-pct", "url", f"  url: postgresql://reporting:{p}@pg-ro.prod:5432/analytics?sslmode=verify-full", p)
p = rs(4) + ":" + rs(9)
case("url-colon", "url", f"Cloning into 'charts'...\nfatal: unable to access 'https://bot:{p}@gitlab.example.com/infra/charts.git/': The requested URL returned error: 403", p)
t = "pypi-AgEIcHlwaS5vcmc" + rs(60, AL + "-_")
case("url-pypi", "url", f"[global]\nindex-url = https://__token__:{t}@upload.pypi.org/legacy/", t)
p = pw(12)
case("url-proxy-env", "url", f"HOSTNAME=web-7f9c\nhttp_proxy=http://svc-proxy:{p}@proxy.corp:3128\nhttps_proxy=http://svc-proxy:{p}@proxy.corp:3128\nno_proxy=localhost,127.0.0.1", p)
p = rs(12)
case("url-json-escaped", "url", f'{{"level":"warn","ts":1764583200.1,"msg":"retrying","url":"https:\\/\\/admin:{p}@es.internal:9200\\/_bulk"}}', p)
p = pw(12, "!*-_.~")
case("url-ftp", "url", f"lftp -e 'mirror -R dist/ /www' ftp://upload:{p}@ftp.example.com", p)
p = rs(6) + "/" + rs(4) + "@" + rs(5)
case("url-slash-and-at", "url", f"time=\"2026-12-01T10:00:00Z\" level=error msg=\"dial failed\" target=\"amqp://ingest:{p}@mq.prod:5672/%2F\"", p)
p = rs(16)
case("url-helm-repo", "url", f"NAME    \tURL\nbitnami \thttps://charts.bitnami.com/bitnami\ninternal\thttps://helm:{p}@charts.corp.example.com/stable", p)
p = rs(10) + "%25" + rs(6)
case("url-pct-percent", "url", f"Fetching https://ci:{p}@nexus.corp/repository/npm-private/ ...", p)
p = pw(14)
case("url-smtp", "url", f"EMAIL_URL=smtp+tls://postmaster%40mg.example.com:{p}@smtp.mailgun.org:587", p)
p = rs(8) + "#" + rs(6)
case("url-hash", "url", f"  dsn: mysql://wp:{p}@mysql.wp.svc:3306/wordpress", p)
t = "ghp_" + rs(36)
case("url-token-user", "url", f"remote: Enumerating objects: 5, done.\nTo https://x-access-token:{t}@github.com/acme/infra.git\n   1a2b3c4..5d6e7f8  main -> main", t)

# --- Go MySQL DSNs ---------------------------------------------------------------------------------------------
p = pw(14)
case("go-dsn-tcp", "go-dsn", f"2026/12/01 10:00:00 connecting to orders:{p}@tcp(mysql-primary.prod:3306)/orders?parseTime=true&loc=UTC", p)
p = pw(14)
case("go-dsn-unix", "go-dsn", f"DSN=root:{p}@unix(/var/run/mysqld/mysqld.sock)/app?charset=utf8mb4", p)
p = pw(14)
case("go-dsn-logfmt", "go-dsn", f"level=info ts=2026-12-01T10:00:00Z caller=db.go:42 msg=\"opening\" dsn=\"svc:{p}@tcp(10.0.3.17:3306)/inventory\"", p)
p = rs(6) + "@" + rs(6)
case("go-dsn-at", "go-dsn", f"  --dsn 'backup:{p}@tcp(db:3306)/'", p)
p = rs(7) + "/" + rs(6)
case("go-dsn-slash", "go-dsn", f'{{"level":"fatal","msg":"cannot ping","dsn":"app:{p}@tcp(mysql:3306)/app"}}', p)
p = pw(14)
case("go-dsn-ps", "go-dsn", f"app      1  0.3  1.2 812344 98012 ?  Ssl  08:00   0:42 /app/server -db app:{p}@tcp(mysql.prod.svc.cluster.local:3306)/app?tls=true -port 8080", p)
p = pw(14)
case("go-dsn-yaml", "go-dsn", f"database:\n  driver: mysql\n  source: shop:{p}@tcp(127.0.0.1:3306)/shop", p)

# --- .env and assignments by name pattern -------------------------------------------------------------------
p = pw(14)
case("env-pass", "env", f"PASS={p}\nUSER=svc", p)
p = rs(32, HEX)
case("env-encryption-key", "env", f"ENCRYPTION_KEY={p}", p)
p = rs(43, AL + "-_")
case("env-signing-key", "env", f"SIGNING_KEY={p}", p)
p = "base64:" + b64(rs(32))
case("env-app-key", "env", f"APP_NAME=Shop\nAPP_ENV=production\nAPP_KEY={p}\nAPP_DEBUG=false", p[7:])
p = rs(48)
case("env-jwt-secret", "env", f"JWT_SECRET={p}", p)
p = rs(40, AL + "~._-")
case("env-client-secret", "env", f"OIDC_CLIENT_ID=shop-web\nOIDC_CLIENT_SECRET={p}", p)
p = "sk_live_" + rs(24)
case("env-stripe", "env", f"STRIPE_SECRET_KEY={p}", p)
p = rs(128, HEX)
case("env-secret-key-base", "env", f"SECRET_KEY_BASE={p}", p)
p = rs(50, AL + "!@#$%^&*(-_=+)")
case("env-django-quoted", "env", f"DJANGO_SECRET_KEY='{p}'", p)
p = rs(40, B64)
case("env-export-aws", "env", f"export AWS_ACCESS_KEY_ID=AKIA{rs(16, string.ascii_uppercase + string.digits)}\nexport AWS_SECRET_ACCESS_KEY={p}", p)
p = rs(32, HEX)
case("env-master-key", "env", f"RAILS_MASTER_KEY={p}", p)
p = pw(14)
case("env-redis-pass", "env", f"REDIS_PASS={p}", p)
p = pw(14)
case("env-passwd", "env", f"ADMIN_PASSWD={p}", p)
p = pw(14)
case("env-ldap-bind", "env", f"LDAP_BIND_PASSWORD=\"{p}\"", p)
p = "hvs." + rs(24)
case("env-vault-token", "env", f"VAULT_ADDR=https://vault.corp:8200\nVAULT_TOKEN={p}", p)
p = rs(32, HEX)
case("env-datadog", "env", f"DD_API_KEY={p}\nDD_SITE=datadoghq.eu", p)
p = rs(44, B64)
case("env-nextauth", "env", f"NEXTAUTH_SECRET={p}", p)
p = rs(20)
case("env-session-secret", "env", f"SESSION_SECRET={p}", p)
p = pw(14)
case("env-systemd", "env", f"[Service]\nEnvironment=NODE_ENV=production\nEnvironment=DB_PASSWORD={p}\nExecStart=/usr/bin/node server.js", p)
p = pw(14)
case("env-systemctl-show", "env", f"Environment=LANG=C.UTF-8 SMTP_PASSWORD={p} PATH=/usr/bin", p)
p = rs(40)
case("env-set-x", "env", f"+ export GITLAB_TOKEN={p}\n+ ./deploy.sh", p)
p = pw(14)
case("env-compose-list", "env", f"    environment:\n      - POSTGRES_DB=app\n      - POSTGRES_PASSWORD={p}", p)
p = pw(14)
case("env-k8s-name-value", "env", f"    env:\n    - name: LOG_LEVEL\n      value: info\n    - name: DB_PASSWORD\n      value: \"{p}\"", p)
p = pw(14)
case("env-heroku-table", "env", f"=== shop-prod Config Vars\nDATABASE_PASSWORD: {p}\nLOG_LEVEL:         info", p)
p = pw(14)
case("env-lower-yaml", "env", f"smtp:\n  host: smtp.example.com\n  password: {p}", p)
p = rs(32)
case("env-api-key-lower", "env", f"sendgrid_api_key: {p}", p)
p = pw(14)
case("env-kubectl-set-env", "env", f"# Deployment web, container web\nDB_HOST=pg\nDB_PASSWORD={p}", p)
p = pw(14)
case("env-camel-json", "env", f'{{"dbHost":"pg","dbPassword":"{p}","retries":3}}', p)
p = rs(32)
case("env-apikey-camel", "env", f'{{"service":"geo","apiKey":"{p}"}}', p)
p = rs(32)
case("env-x-api-key-header", "env", f"< HTTP/1.1 200 OK\n> X-Api-Key: {p}\n> Accept: */*", p)
p = pw(14)
case("env-ini", "env", f"[database]\nhost = pg\nuser = app\npassword = {p}\n", p)
p = pw(14)
case("env-properties", "env", f"spring.datasource.username=app\nspring.datasource.password={p}", p)
p = pw(14)
case("env-toml", "env", f'[smtp]\nuser = "mailer"\npassword = "{p}"', p)
p = rs(36)
case("env-private-token", "env", f"PRIVATE_TOKEN={p}", p)
p = rs(64, HEX)
case("env-webhook-secret", "env", f"GITHUB_WEBHOOK_SECRET={p}", p)
p = pw(14)
case("env-passphrase", "env", f"GPG_PASSPHRASE={p}", p)
p = rs(40)
case("env-printenv-mixed", "env", f"HOME=/root\nTERM=xterm\nCI_JOB_TOKEN={p}\nCI_COMMIT_SHA={rs(40, HEX)}", p)

# --- htpasswd / pgpass / .my.cnf ---------------------------------------------------------------------------------
h = "$apr1$" + rs(8, AL + "./") + "$" + rs(22, AL + "./")
case("htpasswd-apr1", "htpasswd", f"admin:{h}\nops:{'$apr1$' + rs(8, AL + './') + '$' + rs(22, AL + './')}", h)
h = "$2y$05$" + rs(53, AL + "./")
case("htpasswd-bcrypt", "htpasswd", f"$ cat /etc/nginx/.htpasswd\nmonitor:{h}", h)
h = "{SHA}" + b64(bytes(R.randrange(256) for _ in range(20)))
case("htpasswd-sha", "htpasswd", f"grafana:{h}", h)
p = pw(14)
case("pgpass", "htpasswd", f"db.internal:5432:orders:orders_app:{p}", p)
p = pw(14)
case("pgpass-wild", "htpasswd", f"# hostname:port:database:username:password\n*:*:*:postgres:{p}", p)
p = pw(14)
case("mycnf", "htpasswd", f"[client]\nuser=root\npassword={p}\nhost=127.0.0.1", p)
h = "$6$" + rs(16, AL + "./") + "$" + rs(86, AL + "./")
case("shadow", "htpasswd", f"root:{h}:19700:0:99999:7:::", h)
p = pw(14)
case("netrc", "htpasswd", f"machine api.heroku.com\n  login ops@example.com\n  password {p}", p)
p = pw(14)
case("pgpass-ipv6", "htpasswd", f"\\:\\:1:5432:*:replicator:{p}", p)

# --- mysql -pPASSWORD and friends ----------------------------------------------------------------------------
p = pw(14)
case("mysql-p-ps", "mysql", f"root     31337  0.0  0.1  24000  9000 pts/0  S+  10:00  0:00 mysql -uroot -p{p} -h db.prod orders", p)
p = pw(14)
case("mysqldump-quoted", "mysql", f"+ mysqldump -h db -u backup -p'{p}' --single-transaction shop > /backup/shop.sql", p)
p = pw(14)
case("mysqladmin-password", "mysql", f"  512  mysqladmin -uroot --password={p} status", p)
p = pw(14)
case("mysql-p-dq", "mysql", f'$ mysql -h 10.0.0.5 -u app -p"{p}" -e "SHOW PROCESSLIST"', p)
p = pw(14)
case("mysql-history", "mysql", f" 1001  ssh db1\n 1002  mysql -u root -p{p}\n 1003  exit", p)
p = pw(14)
case("mysql-cron", "mysql", f"0 3 * * * /usr/bin/mysqldump --user=backup --password='{p}' --all-databases | gzip > /srv/backup/all.sql.gz", p)

# --- curl -u, wget, Authorization headers ---------------------------------------------------------------------
p = pw(14)
case("curl-u", "curl", f"+ curl -fsSL -u deploy:{p} https://nexus.corp/service/rest/v1/status", p)
p = pw(14)
case("curl-user-long", "curl", f"  curl --user admin:{p} -X POST http://localhost:15672/api/definitions", p)
p = rs(6) + " " + rs(6)
case("curl-u-quoted-space", "curl", f"$ curl -u \"ops:{p}\" https://jenkins.corp/api/json", p)
p = pw(14)
case("wget-password", "curl", f"wget --user=ci --password={p} https://artifacts.corp/build.tar.gz", p)
t = "eyJhbGciOiJSUzI1NiIsInR5cCI6IkpXVCJ9." + b64(json.dumps({"sub": "ci", "iat": 1764583200})).rstrip("=") + "." + rs(86, AL + "-_")
case("curl-bearer-verbose", "curl", f"> GET /api/v1/jobs HTTP/1.1\n> Host: api.corp\n> Authorization: Bearer {t}\n> User-Agent: curl/8.5.0", t)
a = b64("svc:" + pw(14))
case("curl-basic-verbose", "curl", f"* Server auth using Basic with user 'svc'\n> GET / HTTP/1.1\n> Authorization: Basic {a}", a)
p = pw(14)
case("curl-u-ps", "curl", f"nobody  777  0.0  0.0  9000  3000 ?  S  10:00  0:00 curl -s -u monitor:{p} http://127.0.0.1:8080/status", p)
p = rs(30)
case("curl-header-token", "curl", f"curl -H 'PRIVATE-TOKEN: {p}' https://gitlab.corp/api/v4/projects", p)
p = pw(14)
case("httpie-auth", "curl", f"http --auth admin:{p} POST https://api.corp/login", p)

# --- vendor tokens in tool output -----------------------------------------------------------------------------
t = "xoxb-" + rs(11, string.digits) + "-" + rs(13, string.digits) + "-" + rs(24)
case("slack-bot-token-log", "vendor", f"2026-12-01 10:00:00,001 DEBUG slack_sdk.web.base_client Sending a request - url: https://slack.com/api/chat.postMessage, headers: {{'Authorization': 'Bearer {t}'}}", t)
t = "sk-ant-api03-" + rs(93, AL + "-_") + "AA"
case("anthropic-key-env", "vendor", f"ANTHROPIC_API_KEY={t}", t)
t = "sk-ant-api03-" + rs(93, AL + "-_") + "AA"
case("anthropic-key-bare-log", "vendor", f"anthropic.AuthenticationError: invalid x-api-key {t}", t)
t = "xapp-1-A" + rs(10, string.ascii_uppercase + string.digits) + "-" + rs(13, string.digits) + "-" + rs(64, HEX)
case("slack-app-token", "vendor", f"socket mode: connecting with {t}", t)
t = "https://hooks.slack.com/services/T" + rs(10, string.ascii_uppercase + string.digits) + "/B" + rs(10, string.ascii_uppercase + string.digits) + "/" + rs(24)
case("slack-webhook", "vendor", f"alertmanager: receivers[0].slack_configs[0].api_url: {t}", t.rsplit("/", 1)[1])
t = "github_pat_" + rs(22) + "_" + rs(59)
case("github-pat", "vendor", f"gh: Bad credentials ({t})", t)
t = "glpat-" + rs(20, AL + "-_")
case("gitlab-pat", "vendor", f"fatal: Authentication failed for token {t}", t)
t = "AIza" + rs(35, AL + "-_")
case("google-api-key", "vendor", f"maps:\n  key: {t}", t)
t = "ya29." + rs(120, AL + "-_")
case("gcloud-access-token", "vendor", f"$ gcloud auth print-access-token\n{t}", t)
t = "SG." + rs(22, AL + "-_") + "." + rs(43, AL + "-_")
case("sendgrid", "vendor", f"mailer: using key {t}", t)
t = "npm_" + rs(36)
case("npmrc", "vendor", f"//registry.npmjs.org/:_authToken={t}", t)
t = "sk-proj-" + rs(100, AL + "-_")
case("openai", "vendor", f"OPENAI_API_KEY={t}", t)
k = "-----BEGIN OPENSSH PRIVATE KEY-----\n" + "\n".join(rs(70, B64) for _ in range(5)) + "\n-----END OPENSSH PRIVATE KEY-----"
case("ssh-key", "vendor", f"$ cat ~/.ssh/id_ed25519\n{k}", *k.split("\n")[1:6])
k = "-----BEGIN RSA PRIVATE KEY-----\\n" + "\\n".join(rs(64, B64) for _ in range(4)) + "\\n-----END RSA PRIVATE KEY-----\\n"
case("gcp-sa-json", "vendor", f'{{\n  "type": "service_account",\n  "project_id": "acme-prod",\n  "private_key_id": "{rs(40, HEX)}",\n  "private_key": "{k}",\n  "client_email": "deployer@acme-prod.iam.gserviceaccount.com"\n}}', *k.split("\\n")[1:5])
t = rs(40, B64)
case("aws-create-key", "vendor", f'{{\n    "AccessKey": {{\n        "UserName": "ci",\n        "AccessKeyId": "AKIA{rs(16, string.ascii_uppercase + string.digits)}",\n        "Status": "Active",\n        "SecretAccessKey": "{t}",\n        "CreateDate": "2026-12-01T10:00:00+00:00"\n    }}\n}}', t)
t, s = rs(40, B64), "IQoJb3JpZ2luX2VjE" + rs(300, B64)
case("aws-sts", "vendor", f'{{"Credentials": {{"AccessKeyId": "ASIA{rs(16, string.ascii_uppercase)}", "SecretAccessKey": "{t}", "SessionToken": "{s}", "Expiration": "2026-12-01T11:00:00Z"}}}}', t, s)
t = rs(40, B64)
case("aws-credentials-ini", "vendor", f"[default]\naws_access_key_id = AKIA{rs(16, string.ascii_uppercase)}\naws_secret_access_key = {t}\nregion = eu-west-1", t)
p = pw(16)
case("aws-secretsmanager", "vendor", f'{{\n    "ARN": "arn:aws:secretsmanager:eu-west-1:123456789012:secret:prod/db-AbCdEf",\n    "Name": "prod/db",\n    "SecretString": "{{\\"username\\":\\"app\\",\\"password\\":\\"{p}\\"}}",\n    "VersionStages": ["AWSCURRENT"]\n}}', p)
p = pw(16)
case("aws-ssm", "vendor", f'{{"Parameter": {{"Name": "/prod/db/password", "Type": "SecureString", "Value": "{p}", "Version": 3}}}}', p)

# --- Vault -------------------------------------------------------------------------------------------------------
p, k = pw(16), rs(32)
case("vault-kv-table", "vault", f"====== Secret Path ======\nsecret/data/prod/api\n\n======= Metadata =======\nKey                Value\n---                -----\ncreated_time       2026-11-30T10:00:00Z\nversion            4\n\n====== Data ======\nKey         Value\n---         -----\napi_key     {k}\npassword    {p}\nusername    api", p, k)
t = "hvs.CAESI" + rs(80, AL + "-_")
case("vault-token-create", "vault", f"Key                  Value\n---                  -----\ntoken                {t}\ntoken_accessor       {rs(24)}\ntoken_duration       768h\ntoken_renewable      true\ntoken_policies       [\"default\" \"deploy\"]", t)
p = pw(16)
case("vault-read-json", "vault", json.dumps({"request_id": "6f1e2d3c-0000-4000-8000-000000000001", "lease_duration": 2764800, "data": {"data": {"db_password": p}, "metadata": {"version": 2}}}, indent=2), p)
p = pw(16)
case("vault-db-creds", "vault", f"Key                Value\n---                -----\nlease_id           database/creds/readonly/{rs(24)}\nlease_duration     1h\nlease_renewable    true\npassword           {p}\nusername           v-token-readonly-{rs(20)}", p)
t = rs(64, B64)
case("vault-unseal", "vault", f"Unseal Key 1: {t}\nUnseal Key 2: {rs(44, B64)}\n\nInitial Root Token: hvs.{rs(24)}", t)

# --- Terraform ---------------------------------------------------------------------------------------------------
p = pw(16)
case("tf-state-json", "terraform", f'          "attributes": {{\n            "identifier": "orders",\n            "password": "{p}",\n            "username": "orders"\n          }},', p)
p = pw(16)
case("tf-output-json", "terraform", f'{{\n  "db_password": {{\n    "sensitive": true,\n    "type": "string",\n    "value": "{p}"\n  }}\n}}', p)
p = pw(16)
case("tf-tfvars", "terraform", f'region      = "eu-west-1"\ndb_password = "{p}"', p)
p = pw(16)
case("tf-plan-nonsensitive", "terraform", f'  # random_password.db will be created\n  + resource "aws_db_instance" "orders" {{\n      + master_password = "{p}"\n    }}', p)
t = rs(14) + ".atlasv1." + rs(60)
case("tf-credentials-tfrc", "terraform", f'credentials "app.terraform.io" {{\n  token = "{t}"\n}}', t)

# --- Ansible -------------------------------------------------------------------------------------------------------
p = pw(16)
case("ansible-facts", "ansible", f'ok: [web1] => {{\n    "changed": false,\n    "db_password": "{p}"\n}}', p)
p = pw(16)
case("ansible-vault-view", "ansible", f"---\nvault_db_password: {p}\nvault_api_token: {rs(32)}", p)
p = pw(16)
case("ansible-extra-vars", "ansible", f"ansible-playbook site.yml -e \"ansible_become_password={p}\" -l web", p)
p = pw(16)
case("ansible-debug-msg", "ansible", f'TASK [debug] ***\nok: [db1] => {{\n    "msg": "mysql_root_password={p}"\n}}', p)
p = pw(16)
case("ansible-module-args", "ansible", f'fatal: [db1]: FAILED! => {{"changed": false, "invocation": {{"module_args": {{"login_password": "{p}", "login_user": "root", "name": "shop"}}}}, "msg": "unable to connect"}}', p)

# --- ps, Java system properties, process args ------------------------------------------------------------------
p = pw(16)
case("ps-java-D", "ps", f"app  900  5.0 12.0 4000000 900000 ?  Sl  08:00  10:00 java -Xmx2g -Dspring.datasource.password={p} -jar /app/app.jar", p)
p = pw(16)
case("ps-redis-requirepass", "ps", f"redis      12  0.2  0.3  60000 12000 ?  Ssl  08:00   0:10 redis-server *:6379 --requirepass {p}", p)
p = pw(16)
case("ps-flag-equals", "ps", f"1000  4321  /usr/local/bin/exporter --web.listen-address=:9187 --db-password={p} --log.level=info", p)
t = rs(32)
case("ps-flag-space-token", "ps", f"  PID TTY      STAT   TIME COMMAND\n 1234 ?        Ssl    0:05 /usr/bin/agent --token {t} --server https://agent.corp", t)
p = pw(16)
case("ps-pgpassword-cmdline", "ps", f"/proc/4242/environ: PGPASSWORD={p}", p)

# --- diffs ---------------------------------------------------------------------------------------------------------
p1, p2 = pw(16), pw(16)
case("diff-values-yaml", "diff", f"diff --git a/values-prod.yaml b/values-prod.yaml\nindex 1a2b3c4..5d6e7f8 100644\n--- a/values-prod.yaml\n+++ b/values-prod.yaml\n@@ -10,7 +10,7 @@ postgresql:\n   auth:\n     username: orders\n-    password: {p1}\n+    password: {p2}\n     database: orders", p1, p2)
p1 = rs(40)
case("diff-env", "diff", f"--- .env.example\n+++ .env\n@@ -1,3 +1,3 @@\n APP_ENV=production\n-API_TOKEN=changeme\n+API_TOKEN={p1}", p1)
p1 = pw(14)
case("helm-diff", "diff", f"prod, orders, Secret (v1) has changed:\n  # Source: orders/templates/secret.yaml\n  apiVersion: v1\n  kind: Secret\n  stringData:\n-   DB_PASS: \"{pw(12)}\"\n+   DB_PASS: \"{p1}\"", p1)

# --- JSON logs ------------------------------------------------------------------------------------------------------
p = pw(16)
case("jsonlog-password", "jsonlog", f'{{"time":"2026-12-01T10:00:00Z","level":"DEBUG","msg":"login attempt","user":"alice","password":"{p}"}}', p)
t = rs(40)
case("jsonlog-auth-header", "jsonlog", f'{{"ts":"2026-12-01T10:00:00Z","req":{{"method":"GET","url":"/api","headers":{{"authorization":"token {t}","accept":"*/*"}}}}}}', t)
s = rs(32)
case("jsonlog-client-secret", "jsonlog", f'{{"event":"oauth.exchange","client_id":"web","client_secret":"{s}","grant_type":"client_credentials"}}', s)
p = pw(16)
case("jsonlog-nested-escaped", "jsonlog", f'{{"level":"info","body":"{{\\"user\\":\\"bob\\",\\"password\\":\\"{p}\\"}}"}}', p)
t = rs(40)
case("jsonlog-refresh-token", "jsonlog", f'{{"msg":"token refreshed","refresh_token":"{t}","expires_in":3600}}', t)

# --- tables ---------------------------------------------------------------------------------------------------------
p = pw(16)
case("table-psql-users", "table", f" usename  | passwd\n----------+-------------------------------------\n app      | SCRAM-SHA-256$4096:{b64(rs(16))}${b64(rs(32))}:{b64(rs(32))}\n(1 row)\n password_plain | {p}", p)
p = pw(16)
case("table-rails-creds", "table", f"secret_key_base: {rs(128, HEX)}\naws:\n  access_key_id: AKIA{rs(16, string.ascii_uppercase)}\n  secret_access_key: {rs(40, B64)}\nsmtp_password: {p}", p)
p = pw(16)
p = pw(16)
case("psql-expanded", "table", f"-[ RECORD 1 ]--+-----------------\nid             | 42\nusername       | svc-report\npassword_plain | {p}\ncreated_at     | 2026-11-30 10:00:00+00", p)
p = pw(16)
case("table-kv-aligned", "table", f"NAME               VALUE\nLOG_LEVEL          info\nADMIN_PASSWORD     {p}\nREPLICAS           3", p)

# --- a second round (00:05, after the first exec run): shapes the first round did not try -----------------
p = pw(14)
case("heroku-aligned-url", "url", f"DATABASE_URL:      postgres://u8a7sdf:{p}@ec2-1-2-3-4.eu-west-1.compute.amazonaws.com:5432/d9f8g7", p)
p = rs(5) + "?" + rs(6)
case("url-qmark", "url", f"redis://default:{p}@redis-12345.c1.eu-west-1.ec2.cloud.redislabs.com:12345", p)
p = pw(14)
case("url-empty-user", "url", f"REDIS_URL=redis://:{p}@10.0.0.7:6379/1", p)
p = "correct horse " + rs(8)
case("env-quoted-spaces", "env", f'DB_PASSWORD="{p}"', p)
p = pw(14)
case("history-pgpassword", "env", f"  210  export PGPASSWORD='{p}'\n  211  psql -h db -U app", p)
p = pw(14)
case("yaml-folded", "env", f"smtp:\n  password: >-\n    {p}\n  port: 587", p)
p = rs(8) + "\\u0026" + rs(8)
case("json-u-escape", "jsonlog", f'{{"user":"x","password":"{p}"}}', p)
p = pw(16)
case("kubectl-go-template", "k8s", f"password: {p}\nusername: admin", p)
p = pw(16)
case("helm-get-values", "k8s", f"USER-SUPPLIED VALUES:\nauth:\n  postgresPassword: {p}\n  username: app", p)
a = b64("ci:" + rs(30))
case("docker-auths-yaml", "docker", f"auths:\n  registry.example.com:\n    auth: {a}", a)
k = azkey()
case("az-appsettings", "azure", json.dumps([{"name": "AzureWebJobsStorage", "slotSetting": False, "value": f"DefaultEndpointsProtocol=https;AccountName=fn01;AccountKey={k};EndpointSuffix=core.windows.net"}], indent=2), k)
sig = b64(rs(32)).rstrip("=")
case("az-sas-raw-b64", "azure", f"INFO: azcopy: https://st.blob.core.windows.net/c?sv=2022-11-02&sr=c&sp=rl&sig={sig}", sig)
p = rs(5) + ";" + rs(6)
case("ado-single-quoted", "connstr", f"Server=sql;Database=app;User Id=app;Password='{p}';", p)
p = pw(14)
case("mysql-pwd-env", "mysql", f"MYSQL_PWD={p} mysql -h db -u app", p)
p = rs(5) + ":" + rs(6)
case("curl-u-colon-pw", "curl", f"curl -u admin:{p} https://x", p)
t = "glpat-" + rs(20)
case("curl-u-empty-user", "curl", f'curl -u ":{t}" https://gitlab.corp/api/v4/user', t)
p = rs(20)
case("curl-user-equals", "curl", f"curl --user=svc:{p} https://x", p)
t = "glpat-" + rs(20)
case("git-oauth2", "url", f"git clone https://oauth2:{t}@gitlab.corp/infra/x.git", t)
p = rs(24)
case("env-password-salt", "env", f"PASSWORD_SALT={p}", p)
p = rs(24)
case("env-secret-bare", "env", f"SECRET={p}", p)
p = rs(24)
case("env-token-bare", "env", f"TOKEN={p}", p)
k = "-----BEGIN PRIVATE KEY-----\\n" + rs(64, B64) + "\\n" + rs(64, B64) + "\\n-----END PRIVATE KEY-----"
case("env-private-key-escaped", "env", f'PRIVATE_KEY="{k}"', k.split("\\n")[1], k.split("\\n")[2])
p = rs(32, HEX)
case("env-hmac-key", "env", f"HMAC_KEY={p}", p)
p = rs(32)
case("env-cookie-secret", "env", f"COOKIE_SECRET={p}", p)
case("env-short-pass", "env", "PASS=hunter2x", "hunter2x")
p = pw(12)
case("env-lower-db-pass", "env", f"db_pass={p}", p)
h = "$1$" + rs(8, AL + "./") + "$" + rs(22, AL + "./")
case("htpasswd-md5crypt", "htpasswd", f"backup:{h}", h)
h = "{SSHA}" + b64(rs(24))
case("htpasswd-ssha", "htpasswd", f"ldapuser:{h}", h)
p = rs(5) + "\\:" + rs(6)
case("pgpass-escaped-colon", "htpasswd", f"db:5432:app:app:{p}", p)
p = pw(14)
case("pgpass-localhost", "htpasswd", f"localhost:*:*:app:{p}", p)
t = "xoxp-" + rs(12, string.digits) + "-" + rs(12, string.digits) + "-" + rs(13, string.digits) + "-" + rs(32, HEX)
case("slack-user-token", "vendor", f"token: {t}", t)
t = "xoxe.xoxp-1-" + rs(140)
case("slack-rotating", "vendor", f'{{"ok":true,"token":"{t}"}}', t)
t = "sk-ant-admin01-" + rs(93, AL + "-_") + "AA"
case("anthropic-admin", "vendor", f"export ANTHROPIC_ADMIN_KEY={t}", t)
t = "sk-ant-api03-" + rs(93, AL + "-_") + "AA"
case("anthropic-in-json-header", "vendor", f'{{"headers":{{"x-api-key":"{t}","anthropic-version":"2023-06-01"}}}}', t)
p = pw(14)
case("go-dsn-no-tcp", "go-dsn", f"dsn: app:{p}@/appdb?parseTime=true", p)
p = pw(14)
case("go-dsn-ipv6", "go-dsn", f"app:{p}@tcp([fd00::12]:3306)/app", p)
p = pw(14)
case("ado-password-spaces", "connstr", f"Password = {p}; Server = x", p)
p = pw(14)
case("ps-env-inline", "ps", f"root 1 0 0 sh -c DB_PASSWORD={p} /app/run", p)
p = pw(14)
case("ansible-inventory", "ansible", f"[db]\ndb1 ansible_host=10.0.0.5 ansible_password={p} ansible_user=admin", p)
p = pw(14)
case("tf-var-flag", "terraform", f"+ terraform apply -auto-approve -var db_password={p} -var region=eu-west-1", p)
p = pw(14)
case("tf-var-tfvar-env", "terraform", f"TF_VAR_db_password={p}", p)
p = pw(14)
case("vault-write-arg", "vault", f"+ vault kv put secret/app password={p} user=app", p)
p = pw(14)
case("gcloud-sql-set-pw", "vendor", f"+ gcloud sql users set-password app --instance=pg1 --password={p}", p)
t = rs(40, B64)
case("aws-configure-set", "vendor", f"+ aws configure set aws_secret_access_key {t}", t)
t = rs(40, B64)
case("aws-env-json", "vendor", f'{{"Environment":{{"Variables":{{"AWS_SECRET_ACCESS_KEY":"{t}"}}}}}}', t)
p = pw(14)
case("k8s-env-json-pair", "k8s", f'"env": [{{"name": "DB_PASSWORD", "value": "{p}"}}]', p)
p = b64(pw(14))
case("k8s-secret-json-pretty-kind-last", "k8s", '{\n  "data": {\n    "password": "' + p + '"\n  },\n  "metadata": {"name": "x"},\n  "kind": "Secret"\n}', p)

# --- the bot's own keys, credential values, near the 64 KiB cap -------------------------------------------------
OWN_SLACK = "xoxb-" + rs(12, string.digits) + "-" + rs(13, string.digits) + "-" + rs(24)
OWN_ANTHROPIC = "sk-ant-api03-" + rs(93, AL + "-_") + "AA"
OWN_PLAIN = rs(28)  # a sensitive_env_vars value with no shape at all

# --- references, not values (psqlfix, 00:30): what merely starts like one stays hidden -------------------------
# ``$NAME``, ``${NAME}``, ``%NAME%`` are a script's or a template's variables and pass (tests/corpora/benign/
# accept2_ops.txt); a password that starts with "$" or "%" but is no clean reference is a literal.
case("ref-lookalike-dollar-yaml", "env", "  password: $3cr3t!x9", "$3cr3t!x9")
case("ref-lookalike-percent-yaml", "env", '  password: "%Pa55%word"', "%Pa55%word")
case("ref-lookalike-percent-env", "env", "DB_PASSWORD=%Pa55%word", "%Pa55%word")
case("ref-lookalike-curl", "curl", 'curl -u "ops:$3cr3t!x9" https://nexus.corp/service/rest/v1/status', "$3cr3t!x9")
case("ref-lookalike-curl-percent", "curl", "curl -u ops:%Pa55%word https://nexus.corp/", "%Pa55%word")
case("ref-lookalike-mysql", "mysql", 'mysql -u"$DB_USER" -p"$3cr3t!x9" -h db', "$3cr3t!x9")
case("ref-lookalike-mysql-percent", "mysql", "mysql -uapp -p%Pa55%word -h db", "%Pa55%word")
case("ref-lookalike-vault-tag", "ansible", "password: !vaultXk9!pw3", "vaultXk9!pw3")
case("ref-lookalike-pass-column", "env", "PASS  Zq8!mL3vR9x", "Zq8!mL3vR9x")
case("ref-lookalike-sock-token", "env", "SSH_AUTH_TOKEN=/tmp/Zq8mL3vR9xW2/agent.1234", "Zq8mL3vR9xW2")

MARKER = re.compile(r"\[REDACTED:[^\]]*\]")
CASES_BY_NAME = {name: (family, text, secrets) for name, family, text, secrets in CASES}

# Cases found leaking through ``fisk-chatops exec`` by this check (23:53, main 5fc301c), left for a decision.
OPEN: frozenset[str] = frozenset({
})

# Ordinary lines this check found changed (23:53, main 5fc301c), kept out of tests/corpora/benign/accept2_ops.txt
# (which must pass byte-identical) while open, so a fix shows (a test requires each to be changed still). All six
# (an agent's socket path, Ansible's !vault tag, a test runner's PASS line, %NAME% and $NAME references) were fixed
# at 00:40 (psqlfix) and moved there.
BENIGN_OPEN: tuple[str, ...] = ()

# Command lines whose card (``display_command_line``) showed the password (PW below), found by this check: a
# client's password flag in a command passed through after "--" (redacted when the client is argv[0]) and a
# value named only by the positional word before it or by a generic option. Hidden since 00:50 (bot/sanitize/argv.py).
CARD_PW = "Zq7xK2mP9vL4"
CARD_FOUND: tuple[tuple[str, ...], ...] = (
    ("opsctl", "run", "--", "mysql", f"-p{CARD_PW}", "-h", "db"),
    ("opsctl", "run", "--", "docker", "login", "-p", CARD_PW, "registry.example.com"),
    ("opsctl", "kv", "put", "password", CARD_PW),
    ("opsctl", "kv", "put", "--value", CARD_PW),
)

# The project's own benign files from kubectl.txt to terraform.txt (tests/corpora/benign, sorted), 46 KiB printed as
# one output: in a fresh process the density budget was spent and 265 of their 995 lines became three
# ``[REDACTED:dense_candidates]`` markers (found when this corpus shifted test_corpora_exec's batches; each file
# alone, and the same bytes after 60 KiB of lighter text, came out byte-identical). They pass byte-identical since
# the cheap refusals (bot/sanitize/cheap_rejection.py); the name is kept for the tests and the bench that print it.
DENSE_OPEN_FILES: tuple[str, ...] = (
    "kubectl.txt", "line_values_diff_anchors.txt", "misc.txt", "nginx.txt", "ops_ci_log.txt", "ops_code_gitdiff.txt",
    "ops_code_grep.txt", "ops_code_languages.txt", "ops_code_settings.txt", "ops_compose_config.txt",
    "ops_env_settings.txt", "ops_git_config.txt", "ops_helm_notes_openssl.txt", "ops_helm_templates.txt",
    "ops_journal_auth.txt", "ops_kubeconfig_help.txt", "ops_paging_misc.txt", "ops_ps_aux.txt",
    "ops_secret_names_metrics.txt", "ops_secrets_talk.txt", "ops_serviceaccount_vault.txt", "ops_terraform_code.txt",
    "prometheus.txt", "review_oncall.txt", "systemctl.txt", "terraform.txt",
)


def survives(secret: str, original: str, output: str, width: int = 6) -> bool:
    """Whether ``width`` consecutive characters of ``secret`` that appear nowhere else in ``original`` are shown."""
    rest = original.replace(secret, "\0")
    output = MARKER.sub("", output)  # a marker's kind is no part of a secret (github_pat_ vs "github_token")
    return any(secret[i:i + width] in output and secret[i:i + width] not in rest
               for i in range(len(secret) - width + 1))


def _leak(name: str, family: str, text: str, secrets: tuple[str, ...]) -> Leak:
    return Leak(f"accept2:{family}:{name}", text, secrets)


ACCEPT2_LEAKS: tuple[Leak, ...] = tuple(_leak(*c) for c in CASES if c[0] not in OPEN)
ACCEPT2_OPEN: tuple[Leak, ...] = tuple(_leak(*c) for c in CASES if c[0] in OPEN)
