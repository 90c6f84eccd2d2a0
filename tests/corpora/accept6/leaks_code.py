# ruff: noqa: E501
"""Code and tracebacks: stack traces with locals, grep through source, diffs, debug dumps of requests."""

from __future__ import annotations

import base64
from urllib.parse import quote

from tests.corpora.accept6.values import (
    ALNUM,
    Family,
    Secret,
    aws_secret,
    b64,
    hexs,
    human_password,
    password,
    pick,
)


def build() -> Family:
    F = Family("code")

    rs = F.rng("python-traceback-locals")
    pw = password(rs, 18)
    F.add("python-traceback-locals", f"""Traceback (most recent call last):
  File "/srv/etl/venv/lib/python3.12/site-packages/psycopg/connection.py", line 119, in connect
    raise last_ex.with_traceback(None)
psycopg.OperationalError: connection failed: FATAL:  password authentication failed for user "etl"

Local variables in frame connect:
    conninfo = 'host=pg-etl port=5432 dbname=etl user=etl'
    password = '{pw}'
    timeout = 10
""", Secret("password", pw))

    rs = F.rng("grep-source-api-key")
    key = pick(rs, ALNUM, 40)
    F.add("grep-source-api-key", f"""$ grep -rn "API_KEY" src/
src/integrations/geo.py:12:GEO_API_KEY = "{key}"  # TODO move to vault
src/integrations/geo.py:31:    resp = session.get(URL, params={{"key": GEO_API_KEY, "q": query}})
""", Secret("api-key", key))

    rs = F.rng("java-exception-jdbc")
    pw = password(rs, 16, symbols="!*-_.")
    F.add("java-exception-jdbc", f"""Exception in thread "main" java.sql.SQLException: Access denied for user 'crm'@'10.20.5.8' (using password: YES)
	at com.mysql.cj.jdbc.exceptions.SQLError.createSQLException(SQLError.java:130)
	at com.acme.crm.Db.connect(Db.java:44) [url=jdbc:mysql://crm:{pw}@mysql-crm:3306/crm]
	at com.acme.crm.Main.main(Main.java:19)
""", Secret("url-password", pw))

    rs = F.rng("go-panic-struct")
    pw, tok = password(rs, 18), hexs(rs, 40)
    F.add("go-panic-struct", f"""panic: dial tcp 10.20.6.4:5432: connect: connection refused

goroutine 1 [running]:
main.mustConnect(...)
	/src/cmd/syncer/main.go:58
main.main()
	/src/cmd/syncer/main.go:31 +0x1d4
config: &config.Config{{DB:config.DB{{Host:"pg-sync", User:"syncer", Password:"{pw}", Name:"sync"}}, APIToken:"{tok}", Workers:4}}
exit status 2
""", Secret("password", pw), Secret("token", tok))

    rs = F.rng("node-error-object")
    pw = password(rs, 20)
    F.add("node-error-object", f"""Error: connect ECONNREFUSED 10.20.7.9:5432
    at TCPConnectWrap.afterConnect [as oncomplete] (node:net:1607:16) {{
  errno: -111,
  code: 'ECONNREFUSED',
  config: {{
    host: 'pg-notify',
    user: 'notify',
    password: '{pw}',
    database: 'notify'
  }}
}}
""", Secret("password", pw))

    rs = F.rng("ruby-connection-hash")
    pw = password(rs, 18)
    F.add("ruby-connection-hash", f"""ActiveRecord::ConnectionNotEstablished: connection to server at "10.20.8.3", port 5432 failed: Connection refused
  config: {{:adapter=>"postgresql", :host=>"pg-shop", :username=>"shop", :password=>"{pw}", :database=>"shop_production"}}
/usr/local/bundle/gems/activerecord-7.2.1/lib/active_record/connection_adapters/postgresql_adapter.rb:64:in `rescue in new_client'
""", Secret("password", pw))

    rs = F.rng("git-diff-added-secret")
    sk = b64(rs, 40)
    F.add("git-diff-added-secret", f"""diff --git a/config/production.yml b/config/production.yml
index 3f1a2b4..9c8d7e6 100644
--- a/config/production.yml
+++ b/config/production.yml
@@ -8,3 +8,4 @@ redis:
   host: redis-prod
 session:
   ttl: 86400
+  secret_key: "{sk}"
""", Secret("secret-key", sk))

    rs = F.rng("git-log-p-rotation")
    old, new = aws_secret(rs), aws_secret(rs)
    F.add("git-log-p-rotation", f"""commit {hexs(rs, 40)}
Author: Dana Ops <dana@acme.io>
Date:   Tue Dec 1 18:22:04 2026 +0000

    rotate backup uploader key

diff --git a/ops/backup.env b/ops/backup.env
@@ -1,3 +1,3 @@
 AWS_ACCESS_KEY_ID=AKIA{pick(rs, 'ABCDEFGHIJKLMNOPQRSTUVWXYZ234567', 16)}
-AWS_SECRET_ACCESS_KEY={old}
+AWS_SECRET_ACCESS_KEY={new}
 BUCKET=acme-backups
""", Secret("aws-secret", old), Secret("aws-secret", new))

    rs = F.rng("php-pdo-stack")
    pw = password(rs, 16)
    F.add("php-pdo-stack", f"""PHP Fatal error:  Uncaught PDOException: SQLSTATE[HY000] [1045] Access denied for user 'blog'@'10.20.9.4' in /var/www/blog/lib/Db.php:21
Stack trace:
#0 /var/www/blog/lib/Db.php(21): PDO->__construct('mysql:host=mysq...', 'blog', '{pw}', Array)
#1 /var/www/blog/index.php(8): Db::connect()
#2 {{main}}
""", Secret("password", pw))

    rs = F.rng("python-http-debug-body")
    cs = pick(rs, ALNUM, 40)
    F.add("python-http-debug-body", f"""send: b'POST /oauth2/token HTTP/1.1\\r\\nHost: login.partner.example\\r\\nContent-Type: application/x-www-form-urlencoded\\r\\nContent-Length: 121\\r\\n\\r\\n'
send: b'grant_type=client_credentials&client_id=acme-sync&client_secret={cs}&scope=orders.read'
reply: 'HTTP/1.1 200 OK\\r\\n'
""", Secret("client-secret", cs))

    rs = F.rng("terraform-show-json")
    pw = password(rs, 20)
    F.add("terraform-show-json", f"""$ terraform show -json | jq '.values.root_module.resources[] | select(.type=="aws_db_instance") | .values | {{identifier, username, password}}'
{{
  "identifier": "orders-prod",
  "username": "orders_admin",
  "password": "{pw}"
}}
""", Secret("password", pw))

    rs = F.rng("java-system-properties-ps")
    pw = password(rs, 16)
    F.add("java-system-properties-ps", f"""$ ps -o args= -p $(pgrep -f kafka.Kafka) | tr ' ' '\\n' | grep -i -- '-D'
-Djava.awt.headless=true
-Djavax.net.ssl.keyStore=/etc/kafka/ssl/broker.jks
-Djavax.net.ssl.keyStorePassword={pw}
-Dcom.sun.management.jmxremote.port=9999
""", Secret("password", pw))

    rs = F.rng("docker-history-env")
    key = pick(rs, ALNUM, 32)
    F.add("docker-history-env", f"""$ docker history --no-trunc --format '{{{{.CreatedBy}}}}' acme/importer:2.3 | head -4
/bin/sh -c #(nop)  CMD ["python" "-m" "importer"]
/bin/sh -c #(nop)  ENV IMPORTER_API_KEY={key}
/bin/sh -c pip install --no-cache-dir -r requirements.txt
/bin/sh -c #(nop) WORKDIR /app
""", Secret("api-key", key))

    rs = F.rng("java-source-constant")
    sec = b64(rs, 32)
    F.add("java-source-constant", f"""$ grep -rn "SECRET" --include=*.java .
./src/main/java/com/acme/auth/TokenService.java:18:    private static final String HMAC_SECRET = "{sec}";
./src/main/java/com/acme/auth/TokenService.java:42:        Mac mac = hmac(HMAC_SECRET);
""", Secret("hmac-secret", sec))

    rs = F.rng("js-client-apikey")
    key = "pk_" + hexs(rs, 8) + "_" + pick(rs, ALNUM, 40)
    sec = pick(rs, ALNUM, 48)
    F.add("js-client-apikey", f"""$ sed -n 1,8p scripts/backfill.js
const {{ Client }} = require("@acme/billing-sdk");

const client = new Client({{
  apiKey: "{key}",
  apiSecret: "{sec}",
  region: "eu",
}});
""", Secret("api-secret", sec))

    rs = F.rng("csharp-conn-literal")
    pw = password(rs, 18)
    F.add("csharp-conn-literal", f"""$ git grep -n "Password=" -- '*.cs'
tools/Migrator/Program.cs:14:        var conn = "Host=pg-crm;Username=crm_admin;Password={pw};Database=crm";
""", Secret("password", pw))

    rs = F.rng("yaml-fixture-grep")
    cs = pick(rs, ALNUM + "-_", 36)
    F.add("yaml-fixture-grep", f"""$ grep -rn client_secret deploy/
deploy/oauth/prod.yaml:7:  client_secret: {cs}
deploy/oauth/README.md:3:The client_secret is read from Vault at deploy time.
""", Secret("client-secret", cs))

    rs = F.rng("python-dict-settings-log")
    sk, pw = pick(rs, ALNUM + "!@#%^&*(-_=+)", 50), password(rs, 18)
    F.add("python-dict-settings-log", f"""INFO 2026-12-02 12:12:40,551 settings loaded: {{'DEBUG': False, 'ALLOWED_HOSTS': ['api.acme.io'], 'SECRET_KEY': '{sk}', 'DATABASE_PASSWORD': '{pw}', 'TIME_ZONE': 'UTC'}}
""", Secret("secret-key", sk), Secret("password", pw))

    rs = F.rng("urlencoded-password-query")
    raw = password(rs, 14, symbols="!#%&+=@")

    q = quote(raw, safe="")
    F.add("urlencoded-password-query", f"""10.40.1.9 - - [02/Dec/2026:12:13:02 +0000] "GET /legacy/login.php?user=admin&password={q}&remember=1 HTTP/1.1" 302 0 "-" "python-requests/2.32.3"
""", Secret("password", q))

    rs = F.rng("sentry-event-extra")
    tok = "Bearer " + pick(rs, ALNUM, 48)
    F.add("sentry-event-extra", f"""{{"event_id":"{hexs(rs, 32)}","level":"error","message":"upstream 401","extra":{{"request_headers":{{"Accept":"application/json","Authorization":"{tok}","X-Request-Id":"{hexs(rs, 16)}"}}}}}}
""", Secret("bearer", tok[7:]))

    rs = F.rng("pytest-assert-diff")
    tok = pick(rs, ALNUM, 32)
    pw = human_password(rs)
    F.add("pytest-assert-diff", f"""E       AssertionError: assert {{'password': '{pw}', 'user': 'qa'}} == {{'user': 'qa'}}
E         Left contains 1 more item:
E         {{'password': '{pw}'}}
E       webhook_secret = '{tok}'
""", Secret("password", pw), Secret("webhook-secret", tok))

    rs = F.rng("k6-script-basic")
    raw = f"loadtest:{password(rs, 16)}"
    enc = base64.b64encode(raw.encode()).decode()
    F.add("k6-script-basic", f"""$ head -6 load/checkout.js
import http from "k6/http";
const params = {{ headers: {{ Authorization: "Basic {enc}" }} }};
export default function () {{
  http.get("https://staging.acme.io/api/cart", params);
}}
""", Secret("basic-auth", enc))
    return F
