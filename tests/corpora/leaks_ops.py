# ruff: noqa: E501  (output lines as tools print them; splitting them would hide their shape)
"""A third leak corpus (issue #11, second pass): whole command outputs as an on-call would paste them, each hiding
secrets among ordinary lines: docker compose and systemd environments, ps with flags, curl -v, JDBC, ini and
properties files, source code with literals, CI logs, kubectl/helm/terraform output, cloud CLI JSON.

Fake credentials are assembled at runtime so secret scanners don't flag this file.
"""

from __future__ import annotations

import base64
import json

from tests.corpora.leak_case import Leak


def _b64(text: str) -> str:
    return base64.b64encode(text.encode()).decode()


GH_TOKEN = "gh" + "p_" + "R8mK2vQ9xL4nT7bW1cF5hJ3sD6gA0pZ8eY2u"
GH_APP = "gh" + "s_" + "T4nW8pL2xQ6vR9mK1cF3hJ5sD7gA0bZ8eY2u"
GL_TOKEN = "gl" + "pat-" + "x9Kq2LmP7vRt4WbN8cYz"
SLACK = "xo" + "xb-" + "2048-1357913579-" + "Qw8eRt6yUi4oPa2sDf0gHj9k"
SLACK_HOOK = "https://hooks.slack" + ".com/services/" + "T02AB3CD4/B05EF6GH7/" + "mN8bV6cX4zL2kJ0hG9fD7sA5"
JWT = (
    "ey" + "JhbGciOiJSUzI1NiIsImtpZCI6IjNmMWMifQ" + "."
    + "ey" + "JzdWIiOiJzdmMtYmlsbGluZyIsImV4cCI6MTc2NDU4MDAwMH0" + "."
    + "Kf3pQ9vL2xW8mR4tN7bY1cH5jS6dG0aZ"
)
AWS_ID = "AK" + "IA" + "Q3RTY7UV2WX9ZB4N"
AWS_SECRET = "q7Vt2" + "Lm9XzK4pR8wN1bC6yH3jD5sF0gA/e+uQiOoPl"
AWS_SESSION = "FwoGZXIvYXdzE" + "Jr//////////wEaDPq7Vt2Lm9XzK4pR8CKCAR" + "q2w3e4r5t6y7u8i9o0pAZSXDCFVGBHNJ"
PEM_BODY = "MIIEvQIBADANBgkqhkiG9w0BAQEFAASCBKcwggSjAgEAAoIBAQC7" + "q3W8tZbiHq0r5fOmE8Vd1M2xY4kL"
AZURE_KEY = "Jk8vL2mN4pQ6rS8tU0vW2xY4zA6bC8dE0fG2hI4jK6lM8nO0pQ2rS4tU6vW8xY0zA2bC4dE6fG8hI0jK2lM4nO6p" + "Q=="
K8S_PW = "pr0d-Db-pa55!"
K8S_KEY = "k3y-" + "9f8e7d6c5b4a"

OPS_LEAKS: tuple[Leak, ...] = (
    Leak(
        "compose_environment_list",
        "services:\n  db:\n    image: postgres:16\n    environment:\n      - POSTGRES_USER=orders\n"
        "      - POSTGRES_PASSWORD=Pg;orders#2026\n      - PGDATA=/var/lib/postgresql/data\n",
        ("Pg;orders#2026", "orders#2026"),
    ),
    Leak(
        "compose_environment_map",
        "  api:\n    environment:\n      DB_HOST: db\n      DB_PASSWORD: S7rong-Api-Pw\n      STRIPE_SECRET_KEY: "
        + "sk_live_" + "51HxQ2eLm9XzK4pR8wN1bC6y\n      LOG_LEVEL: info\n",
        ("S7rong-Api-Pw", "sk_live_51HxQ2eLm9XzK4pR8wN1bC6y"),
    ),
    Leak(
        "systemd_environment",
        "$ systemctl cat api.service\n# /etc/systemd/system/api.service\n[Service]\nUser=api\n"
        "Environment=DB_PASSWORD=sy5temd-Pw\nEnvironment=\"API_TOKEN=tok 8d7c6b5a4f3e\" \"LOG_LEVEL=info\"\n"
        "ExecStart=/usr/local/bin/api --listen :8080\n",
        ("sy5temd-Pw", "tok 8d7c6b5a4f3e", "8d7c6b5a4f3e"),
    ),
    Leak(
        "systemctl_show_environment",
        "Environment=LANG=C.UTF-8 DB_PASSWORD=sh0wEnvPw PATH=/usr/bin\n",
        ("sh0wEnvPw",),
    ),
    Leak(
        "ps_flags",
        "USER  PID %CPU %MEM COMMAND\n"
        "app  2231  0.4  0.9 /usr/local/bin/worker --queue billing --redis-password R3d1s-Wrk-Pw --concurrency 8\n"
        "app  2290  0.1  0.3 /usr/local/bin/sync -api-token 7f3e9a1c5b2d8e4f6a0c --interval 30s\n"
        "app  2301  0.0  0.2 /usr/bin/pg_exporter --password=ExpOrt3r-Pw --web.listen-address=:9187\n",
        ("R3d1s-Wrk-Pw", "7f3e9a1c5b2d8e4f6a0c", "ExpOrt3r-Pw"),
    ),
    Leak(
        "curl_verbose_bearer",
        "> GET /api/v1/orders HTTP/2\n> Host: api.example.com\n> user-agent: curl/8.5.0\n> accept: */*\n"
        "> authorization: Bearer " + JWT + "\n>\n< HTTP/2 200\n< content-type: application/json\n",
        (JWT, JWT.split(".")[1]),
    ),
    Leak(
        "curl_verbose_basic",
        "* Server auth using Basic with user 'deploy'\n> POST /service/rest/v1/components HTTP/1.1\n"
        "> Authorization: Basic " + _b64("deploy:Nexu5-Upl0ad") + "\n> Content-Length: 2048\n",
        (_b64("deploy:Nexu5-Upl0ad"),),
    ),
    Leak(
        "jdbc_url_params",
        "2026-12-01 10:02:11.482  INFO 1 --- [main] com.zaxxer.hikari.HikariDataSource : url=jdbc:postgresql://pg.prod:5432/orders?user=orders&password=JdbcOrd3rs!&ssl=true\n"
        "jdbc:sqlserver://sql.prod:1433;databaseName=billing;user=billing;password=Sq1Bill-9;encrypt=true\n",
        ("JdbcOrd3rs!", "Sq1Bill-9"),
    ),
    Leak(
        "ini_spaces",
        "$ cat ~/.my.cnf\n[client]\nuser = backup\npassword = My.Cnf-backup7\nhost = db.prod\n",
        ("My.Cnf-backup7",),
    ),
    Leak(
        "properties_file",
        "spring.datasource.url=jdbc:mysql://mysql.prod:3306/shop\nspring.datasource.username=shop\n"
        "spring.datasource.password = Spr1ng-Shop\nspring.mail.password=m4il-Relay\n",
        ("Spr1ng-Shop", "m4il-Relay"),
    ),
    Leak(
        "toml_file",
        '[database]\nhost = "db.prod"\npassword = "T0ml db pass"\n\n[api]\ntoken = "' + GH_APP + '"\n',
        ("T0ml db pass", GH_APP),
    ),
    Leak(
        "export_quoted",
        "$ cat deploy.env\nexport AWS_ACCESS_KEY_ID=" + AWS_ID + '\nexport AWS_SECRET_ACCESS_KEY="' + AWS_SECRET
        + '"\nexport AWS_SESSION_TOKEN=' + AWS_SESSION + '\nexport DB_PASSWORD="with spaces and ; semis"\n',
        (AWS_ID, AWS_SECRET, AWS_SESSION, "with spaces and ; semis"),
    ),
    Leak(
        "aws_sts_json",
        json.dumps({"Credentials": {"AccessKeyId": "AS" + "IA" + "Q3RTY7UV2WX9ZB4N", "SecretAccessKey": AWS_SECRET,
                                    "SessionToken": AWS_SESSION, "Expiration": "2026-12-01T11:02:11Z"}}, indent=4),
        ("AS" + "IA" + "Q3RTY7UV2WX9ZB4N", AWS_SECRET, AWS_SESSION),
    ),
    Leak(
        "git_diff_literal",
        "diff --git a/app/settings.py b/app/settings.py\n@@ -18,3 +18,3 @@\n"
        '-SECRET_KEY = env("DJANGO_SECRET_KEY")\n+SECRET_KEY = "dj4ngo-insecure-w9x!k2m#p7q"\n'
        '+STRIPE_KEY = "rk_live_' + '51HxQ2eLm9XzK4pR8wN1"\n',
        ("dj4ngo-insecure-w9x!k2m#p7q", "rk_live_51HxQ2eLm9XzK4pR8wN1"),
    ),
    Leak(
        "grep_code_literals",
        "src/db.py:12:    password = \"hunter2-Prod!\"\n"
        "cmd/main.go:30:\tclient := api.New(api.Config{Token: \"tkn-4f9a2c7e1b8d\"})\n"
        "web/src/config.ts:3:export const apiKey = 'pk_" + "live_8Hx2Lm9Qz4Kp7Rw1';\n",
        ("hunter2-Prod!", "tkn-4f9a2c7e1b8d", "pk_live_8Hx2Lm9Qz4Kp7Rw1"),
    ),
    Leak(
        "kubectl_secret_yaml_tls",
        "apiVersion: v1\ndata:\n  password: " + _b64(K8S_PW) + "\n  api-key: " + _b64(K8S_KEY) + "\nkind: Secret\n"
        "metadata:\n  creationTimestamp: \"2026-11-30T08:12:44Z\"\n  name: orders-db\n  namespace: prod\n"
        "  resourceVersion: \"918273\"\ntype: Opaque\n",
        (_b64(K8S_PW), _b64(K8S_KEY)),
    ),
    Leak(
        "helm_get_values",
        "$ helm get values orders -n prod\nUSER-SUPPLIED VALUES:\ndb:\n  host: pg.prod\n  password: H3lm-Ord3rs-Pw\n"
        "slack:\n  webhook: " + SLACK_HOOK + "\n  botToken: " + SLACK + "\n",
        ("H3lm-Ord3rs-Pw", SLACK_HOOK, SLACK),
    ),
    Leak(
        "terraform_output_json",
        json.dumps({"db_password": {"sensitive": True, "type": "string", "value": "Tf0ut-Pw-77"},
                    "gitlab_runner_token": {"sensitive": True, "type": "string", "value": GL_TOKEN}}, indent=2),
        ("Tf0ut-Pw-77", GL_TOKEN),
    ),
    Leak(
        "ci_log_unmasked",
        "2026-12-01T09:14:02.1184712Z + git clone https://x-access-token:" + GH_TOKEN + "@github.com/acme/orders.git\n"
        "2026-12-01T09:14:09.5533640Z + docker login -u ci -p D0cker-Hub-Pw registry.example.com\n"
        "2026-12-01T09:14:10.8811902Z WARNING! Using --password via the CLI is insecure. Use --password-stdin.\n",
        (GH_TOKEN, "D0cker-Hub-Pw"),
    ),
    Leak(
        "pem_in_json",
        json.dumps({"type": "service_account", "project_id": "orders-prod",
                    "private_key": "-----BEGIN PRIVATE KEY-----\n" + PEM_BODY + "\n-----END PRIVATE KEY-----\n",
                    "client_email": "deployer@orders-prod.iam.gserviceaccount.com"}, indent=2),
        (PEM_BODY[:40],),
    ),
    Leak(
        "azure_cli_connection_string",
        '$ az storage account show-connection-string -n ordersprod\n{\n  "connectionString": '
        '"DefaultEndpointsProtocol=https;EndpointSuffix=core.windows.net;AccountName=ordersprod;AccountKey=' + AZURE_KEY + '"\n}\n',
        (AZURE_KEY, AZURE_KEY[:30]),
    ),
    Leak(
        "ps_java_grafana_node",
        "app   3188  1.2  4.1 java -Xmx2g -Djavax.net.ssl.trustStorePassword=changeit -Dspring.datasource.password=J4va-Pr0p -jar app.jar\n"
        "grafana 3190 0.4 0.8 grafana server --config=/etc/grafana/grafana.ini cfg:default.security.admin_password=Graf4na-Pw\n"
        "app   3199  0.3  0.6 node dist/server.js --jwt-secret-file /run/secrets/jwt --session-secret 9f8e7d6c5b4a39281706\n",
        ("J4va-Pr0p", "Graf4na-Pw", "9f8e7d6c5b4a39281706"),
    ),
    Leak(
        "pgpass_and_htpasswd",
        "$ cat ~/.pgpass\n# hostname:port:database:username:password\npg.prod:5432:orders:orders:Pg-pass-f1le\n"
        "$ cat /etc/nginx/.htpasswd\nops:$2y$05$" + "Zk3v8Qy1pW5nB0cD7eF9gOiJ2kL4mN6pQ8rS0tU2vW4xY6zA8bC0e\n",
        ("Pg-pass-f1le", "Zk3v8Qy1pW5nB0cD7eF9gOiJ2kL4mN6pQ8rS0tU2vW4xY6zA8bC0e"),
    ),
)
