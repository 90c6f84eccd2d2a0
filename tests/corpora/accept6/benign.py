# ruff: noqa: E501
"""Ordinary operations output that must pass the sanitizer byte-identical, full of look-alikes: digests, UUIDs,
trace ids, URLs without credentials, prose about secrets and tokens, and config whose secret-ish names hold
no secret (``password_min_length: 12``, ``token_ttl: 3600``, a reference to where a secret lives)."""

from __future__ import annotations

import base64
import hashlib
import random
from collections.abc import Callable

from tests.corpora.accept6.values import ALNUM, hexs, uuid

NAMESPACES = ("payments", "shop", "monitoring", "ingress", "kube-system", "data", "ci")
APPS = ("checkout", "orders-api", "cart", "search", "notifier", "report-api", "gateway", "ledger", "auth-proxy")
PATHS = ("/api/v1/orders", "/api/v1/cart/items", "/search", "/static/js/app.js", "/healthz", "/api/v2/users/me",
         "/password/reset", "/api/v1/tokens/introspect", "/oauth/authorize", "/login", "/docs/secrets-management")


def _rs(name: str) -> random.Random:
    return random.Random(f"accept6:benign:{name}")


def kubectl() -> str:
    rs = _rs("kubectl")
    out = ["$ kubectl get pods -A -o wide | head -40",
           "NAMESPACE     NAME                                  READY   STATUS    RESTARTS      AGE    IP             NODE"]
    for _ in range(38):
        app = rs.choice(APPS)
        pod = f"{app}-{hexs(rs, 9)}-{''.join(rs.choice('bcdfghjklmnpqrstvwxz2456789') for _ in range(5))}"
        out.append(f"{rs.choice(NAMESPACES):<13} {pod:<37} 1/1     Running   {rs.randint(0, 4):<13} {rs.randint(1, 40)}d    10.244.{rs.randint(0, 9)}.{rs.randint(2, 250):<5} node-{rs.randint(1, 6)}")
    out += ["$ kubectl -n payments get secrets",
            "NAME                         TYPE                                  DATA   AGE",
            "payments-db                  Opaque                                3      118d",
            "payments-tls                 kubernetes.io/tls                     2      41d",
            "registry-pull                kubernetes.io/dockerconfigjson        1      300d",
            "sh.helm.release.v1.pay.v57   helm.sh/release.v1                    1      2d",
            "$ kubectl -n payments describe secret payments-db",
            "Name:         payments-db",
            "Namespace:    payments",
            "Labels:       app.kubernetes.io/managed-by=external-secrets",
            "Annotations:  reconcile.external-secrets.io/data-hash: " + hexs(rs, 32),
            "",
            "Type:  Opaque",
            "",
            "Data",
            "====",
            "DB_PASSWORD:     24 bytes",
            "DB_USER:         8 bytes",
            "STRIPE_API_KEY:  107 bytes",
            "$ kubectl -n payments describe pod checkout-6c9f7d8b5-q2x7m | sed -n '/Environment:/,/Mounts:/p'",
            "    Environment:",
            "      DB_HOST:         pg-primary.payments.svc",
            "      DB_PASSWORD:     <set to the key 'DB_PASSWORD' in secret 'payments-db'>  Optional: false",
            "      API_TOKEN:       <set to the key 'token' of config map 'checkout-public'>  Optional: true",
            "      TOKEN_TTL:       3600",
            "    Mounts:",
            "$ kubectl get events -n shop --sort-by=.lastTimestamp | tail -5",
            "LAST SEEN   TYPE      REASON              OBJECT                          MESSAGE",
            "2m          Normal    Scheduled           pod/cart-7d9c8b6f5-x2l9k        Successfully assigned shop/cart-7d9c8b6f5-x2l9k to node-3",
            "2m          Normal    Pulled              pod/cart-7d9c8b6f5-x2l9k        Container image \"registry.acme.io/cart@sha256:" + hashlib.sha256(b"cart").hexdigest() + "\" already present on machine",
            "90s         Warning   FailedMount         pod/cart-7d9c8b6f5-x2l9k        MountVolume.SetUp failed for volume \"cart-secrets\" : secret \"cart-secrets\" not found",
            "30s         Normal    Started             pod/cart-7d9c8b6f5-x2l9k        Started container cart",
            "$ kubectl top nodes",
            "NAME     CPU(cores)   CPU%   MEMORY(bytes)   MEMORY%"]
    out += [f"node-{i}   {rs.randint(200, 3800)}m        {rs.randint(5, 95)}%    {rs.randint(2000, 60000)}Mi         {rs.randint(5, 90)}%" for i in range(1, 7)]
    return "\n".join(out) + "\n"


def nginx() -> str:
    rs = _rs("nginx")
    agents = ('"Mozilla/5.0 (Macintosh; Intel Mac OS X 14_6) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/18.1 Safari/605.1.15"',
              '"kube-probe/1.30"', '"Go-http-client/2.0"', '"curl/8.5.0"', '"Prometheus/2.54.1"')
    queries = ("?page=2&per_page=50", "?q=reset+password&lang=en", "?sort=-created_at&status=open",
               "?utm_source=newsletter&utm_medium=email&utm_campaign=dec-2026", "?token_type=bearer&expires_in=3600",
               "?redirect_uri=https%3A%2F%2Fapp.acme.io%2Fcallback&response_type=code&client_id=web-console&scope=openid+profile",
               "?key=value&debug=false", "?format=json&fields=id,name,secret_name", "?password_policy=strict",
               "?trace_id=" , "?include=api_keys_count&limit=20", "?email=jo%40example.com&step=confirm", "")
    out = []
    for _ in range(90):
        q = rs.choice(queries)
        if q == "?trace_id=":
            q += hexs(rs, 32)
        out.append(f'{rs.randint(10, 203)}.{rs.randint(0, 255)}.{rs.randint(0, 255)}.{rs.randint(1, 254)} - - '
                   f'[02/Dec/2026:{rs.randint(0, 11):02}:{rs.randint(0, 59):02}:{rs.randint(0, 59):02} +0000] '
                   f'"{rs.choice(("GET", "GET", "POST", "PUT"))} {rs.choice(PATHS)}{q} HTTP/1.1" {rs.choice((200, 200, 204, 301, 302, 404, 499, 502))} '
                   f'{rs.randint(0, 90000)} "-" {rs.choice(agents)} rt={rs.randint(0, 2000) / 1000:.3f} uct="0.000" '
                   f'req_id={hexs(rs, 32)}')
    return "\n".join(out) + "\n"


def json_logs() -> str:
    rs = _rs("json_logs")
    msgs = ("token refreshed", "password reset email queued", "secret rotated by schedule", "api key created",
            "session started", "cache miss", "upstream timeout", "retrying request", "user login succeeded",
            "jwt validation failed: token expired", "key rotation skipped: not due", "request completed")
    out = []
    for _ in range(70):
        out.append(
            '{"ts":"2026-12-02T%02d:%02d:%02d.%03dZ","level":"%s","svc":"%s","msg":"%s","trace_id":"%s","span_id":"%s","user_id":"%s","duration_ms":%d,"status":%d}' % (  # noqa: UP031
            rs.randint(0, 12), rs.randint(0, 59), rs.randint(0, 59), rs.randint(0, 999), rs.choice(("info", "info", "warn", "debug", "error")),
            rs.choice(APPS), rs.choice(msgs), hexs(rs, 32), hexs(rs, 16), uuid(rs), rs.randint(1, 4000), rs.choice((200, 201, 401, 403, 500))))
    out += ['{"level":"info","msg":"config","token_ttl":3600,"password_min_length":12,"secret_store":"vault","api_key_header":"X-Api-Key","key_rotation_days":90}',
            '{"level":"warn","msg":"login failed","reason":"invalid password","attempts":3,"locked":false}',
            '{"level":"info","msg":"loaded secrets","count":14,"source":"vault:kv/data/prod/payments","names":["db_password","stripe_key"]}']
    return "\n".join(out) + "\n"


def git() -> str:
    rs = _rs("git")
    subjects = ("fix token refresh race in auth middleware", "rotate secret handling into external-secrets",
                "docs: how to reset the admin password", "bump golang.org/x/crypto to v0.31.0",
                "chore(deps): update helm chart postgresql to 16.2.3", "feat: api key scopes",
                "ci: mask secrets in job logs", "revert \"add key cache\"", "tests for password policy", "Merge pull request #4412 from acme/key-rotation")
    out = ["$ git log --oneline -30"]
    out += [f"{hexs(rs, 7)} {rs.choice(subjects)}" for _ in range(30)]
    out += ["$ git status", "On branch main", "Your branch is up to date with 'origin/main'.", "",
            "Changes not staged for commit:", "  (use \"git add <file>...\" to update what will be committed)",
            "\tmodified:   config/auth.yaml", "\tmodified:   docs/secrets.md", "",
            "$ git diff config/auth.yaml", "diff --git a/config/auth.yaml b/config/auth.yaml",
            f"index {hexs(rs, 7)}..{hexs(rs, 7)} 100644", "--- a/config/auth.yaml", "+++ b/config/auth.yaml",
            "@@ -3,7 +3,7 @@ auth:", "   issuer: https://sso.acme.io/realms/ops", "-  token_ttl: 3600", "+  token_ttl: 7200",
            "   refresh_token_ttl: 86400", "   password_min_length: 12", "-  secret_source: env", "+  secret_source: vault",
            "$ git show --stat HEAD", f"commit {hexs(rs, 40)}", "Author: Sam Rivera <sam@acme.io>",
            "Date:   Wed Dec 2 10:14:22 2026 +0000", "", "    auth: move signing key to vault (no key in repo)", "",
            " config/auth.yaml     | 4 ++--", " docs/secrets.md      | 12 ++++++++++++", " 2 files changed, 14 insertions(+), 2 deletions(-)",
            "$ git remote -v", "origin\tgit@github.com:acme/platform.git (fetch)", "origin\tgit@github.com:acme/platform.git (push)",
            "upstream\thttps://github.com/acme-oss/platform.git (fetch)"]
    return "\n".join(out) + "\n"


def systemctl() -> str:
    rs = _rs("systemctl")
    out = ["$ systemctl status vault.service", "● vault.service - HashiCorp Vault - A tool for managing secrets",
           "     Loaded: loaded (/lib/systemd/system/vault.service; enabled; preset: enabled)",
           "     Active: active (running) since Wed 2026-12-02 06:01:12 UTC; 6h ago",
           "       Docs: https://developer.hashicorp.com/vault/docs", f"   Main PID: {rs.randint(500, 5000)} (vault)",
           "      Tasks: 14 (limit: 18993)", "     Memory: 212.4M (peak: 260.1M)", "        CPU: 4min 11.220s",
           "     CGroup: /system.slice/vault.service", "             └─811 /usr/bin/vault server -config=/etc/vault.d/vault.hcl", ""]
    for i in range(12):
        out.append(f"Dec 02 {6 + i // 2:02}:{rs.randint(0, 59):02}:{rs.randint(0, 59):02} vault-1 vault[811]: " + rs.choice((
            "[INFO]  core: successful mount: namespace=\"\" path=secret/ type=kv",
            "[INFO]  expiration: revoked lease: lease_id=auth/kubernetes/login/" + hexs(rs, 40),
            "[INFO]  core: post-unseal setup complete",
            "[WARN]  core: token TTL exceeds max TTL, capping: ttl=768h max_ttl=32h",
            "[INFO]  rollback: starting rollback manager",
            "[INFO]  identity: entities restored")))
    out += ["$ systemctl list-units --type=service --state=running | head -12",
            "  UNIT                          LOAD   ACTIVE SUB     DESCRIPTION"]
    for unit, desc in (("containerd.service", "containerd container runtime"), ("cron.service", "Regular background program processing daemon"),
                       ("kubelet.service", "kubelet: The Kubernetes Node Agent"), ("node-exporter.service", "Prometheus exporter for machine metrics"),
                       ("ssh.service", "OpenBSD Secure Shell server"), ("systemd-journald.service", "Journal Service"),
                       ("vault-agent.service", "Vault Agent (renders secrets to /run/secrets)"), ("wg-quick@wg0.service", "WireGuard via wg-quick(8) for wg0")):
        out.append(f"  {unit:<29} loaded active running {desc}")
    out += ["$ systemctl show -p Environment -p LoadCredential app.service",
            "Environment=APP_ENV=production DB_PASSWORD_FILE=/run/credentials/app.service/db_password TOKEN_TTL=3600",
            "LoadCredential=db_password:/etc/app/creds/db_password",
            "$ systemctl cat backup.timer", "# /etc/systemd/system/backup.timer", "[Timer]", "OnCalendar=*-*-* 02:30:00",
            "RandomizedDelaySec=15min", "Persistent=true"]
    return "\n".join(out) + "\n"


def prometheus() -> str:
    rs = _rs("prometheus")
    out = ["# HELP vault_token_ttl_seconds Remaining TTL of the agent's token.", "# TYPE vault_token_ttl_seconds gauge",
           f"vault_token_ttl_seconds{{role=\"app\"}} {rs.randint(100, 3600)}",
           "# HELP cert_manager_certificate_expiration_timestamp_seconds The date after which the certificate expires.",
           "# TYPE cert_manager_certificate_expiration_timestamp_seconds gauge"]
    for name in ("wildcard-acme", "api-acme-io", "grafana-tls"):
        out.append(f"cert_manager_certificate_expiration_timestamp_seconds{{issuer_kind=\"ClusterIssuer\",issuer_name=\"letsencrypt-prod\",name=\"{name}\",namespace=\"ingress\"}} {rs.randint(1766000000, 1772000000)}")
    out += ["# HELP external_secrets_sync_calls_total Total number of the External Secret sync calls",
            "# TYPE external_secrets_sync_calls_total counter"]
    for ns, sec in (("payments", "payments-db"), ("shop", "cart-secrets"), ("data", "minio-creds"), ("monitoring", "grafana-admin")):
        out.append(f"external_secrets_sync_calls_total{{name=\"{sec}\",namespace=\"{ns}\",secret_key=\"password\"}} {rs.randint(10, 9000)}")
    out += ["# HELP http_request_duration_seconds Request latency.", "# TYPE http_request_duration_seconds histogram"]
    for le in ("0.005", "0.01", "0.025", "0.05", "0.1", "0.25", "0.5", "1", "2.5", "5", "+Inf"):
        out.append(f"http_request_duration_seconds_bucket{{handler=\"/api/v1/tokens/introspect\",method=\"POST\",le=\"{le}\"}} {rs.randint(1000, 90000)}")
    out += [f"http_request_duration_seconds_sum{{handler=\"/api/v1/tokens/introspect\",method=\"POST\"}} {rs.random() * 1000:.3f}",
            f"http_request_duration_seconds_count{{handler=\"/api/v1/tokens/introspect\",method=\"POST\"}} {rs.randint(90000, 99999)}",
            "# HELP auth_password_failures_total Failed password logins.", "# TYPE auth_password_failures_total counter",
            f"auth_password_failures_total{{realm=\"ops\"}} {rs.randint(0, 500)}",
            f"process_start_time_seconds {rs.randint(1764600000, 1764670000)}.{rs.randint(10, 99)}",
            "go_info{version=\"go1.23.4\"} 1",
            "ALERTS{alertname=\"VaultTokenExpiringSoon\",alertstate=\"pending\",severity=\"warning\"} 1",
            "ALERTS{alertname=\"SecretSyncFailed\",alertstate=\"firing\",name=\"cart-secrets\",namespace=\"shop\"} 1"]
    return "\n".join(out) + "\n"


def terraform() -> str:
    rs = _rs("terraform")
    out = ["Terraform used the selected providers to generate the following execution plan. Resource actions are",
           "indicated with the following symbols:", "  + create", "  ~ update in-place", "",
           "Terraform will perform the following actions:", "",
           "  # aws_db_instance.orders will be updated in-place", "  ~ resource \"aws_db_instance\" \"orders\" {",
           "        id                                    = \"db-" + "".join(rs.choice("ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789") for _ in range(26)) + "\"",
           "        identifier                            = \"orders-prod\"", "      ~ instance_class                        = \"db.r6g.large\" -> \"db.r6g.xlarge\"",
           "        kms_key_id                            = \"arn:aws:kms:eu-west-1:481516234200:key/" + uuid(rs) + "\"",
           "        manage_master_user_password           = true",
           "        password                              = (sensitive value)",
           "        storage_encrypted                     = true", "        # (52 unchanged attributes hidden)", "    }", "",
           "  # aws_secretsmanager_secret.api_key will be created", "  + resource \"aws_secretsmanager_secret\" \"api_key\" {",
           "      + arn                            = (known after apply)", "      + id                             = (known after apply)",
           "      + name                           = \"prod/gateway/api-key\"", "      + recovery_window_in_days        = 30", "    }", "",
           "  # aws_iam_access_key.ci will be created", "  + resource \"aws_iam_access_key\" \"ci\" {",
           "      + create_date                    = (known after apply)", "      + encrypted_secret               = (known after apply)",
           "      + id                             = (known after apply)", "      + secret                         = (sensitive value)",
           "      + ses_smtp_password_v4           = (sensitive value)", "      + status                         = \"Active\"",
           "      + user                           = \"ci-deployer\"", "    }", "",
           "  # random_password.db will be created", "  + resource \"random_password\" \"db\" {",
           "      + bcrypt_hash = (sensitive value)", "      + id          = (known after apply)", "      + length      = 32",
           "      + lower       = true", "      + min_special = 2", "      + result      = (sensitive value)", "      + special     = true", "    }", "",
           "  # aws_security_group_rule.https will be created", "  + resource \"aws_security_group_rule\" \"https\" {",
           "      + cidr_blocks       = [", "          + \"0.0.0.0/0\",", "        ]", "      + from_port         = 443",
           "      + security_group_id = \"sg-0" + hexs(rs, 16) + "\"", "      + to_port           = 443", "      + type              = \"ingress\"", "    }", "",
           "Plan: 3 to add, 1 to change, 0 to destroy.", "", "Changes to Outputs:",
           "  + db_password_secret_arn = (known after apply)", "  ~ token_ttl_seconds      = 3600 -> 7200"]
    return "\n".join(out) + "\n"


def digests() -> str:
    rs = _rs("digests")
    out = ["$ docker images --digests | head -12", "REPOSITORY                       TAG       DIGEST                                                                    IMAGE ID       CREATED        SIZE"]
    for app in APPS:
        out.append(f"registry.acme.io/{app:<15} {rs.randint(1, 9)}.{rs.randint(0, 30)}.{rs.randint(0, 9):<4} sha256:{hexs(rs, 64)}   {hexs(rs, 12)}   {rs.randint(2, 40)} days ago    {rs.randint(20, 900)}MB")
    out.append("$ sha256sum dist/*")
    for name in ("fisk-linux-amd64.tar.gz", "fisk-linux-arm64.tar.gz", "fisk-darwin-arm64.tar.gz", "checksums.txt.sig"):
        out.append(f"{hexs(rs, 64)}  dist/{name}")
    out.append("$ cat uuids.txt")
    out += [uuid(rs) for _ in range(10)]
    out += ["$ helm search repo bitnami/postgresql --versions | head -3", "NAME                 \tCHART VERSION\tAPP VERSION\tDESCRIPTION",
            "bitnami/postgresql   \t16.2.3       \t17.2.0     \tPostgreSQL (Postgres) is an open source object-relational database ...",
            "bitnami/postgresql   \t16.2.2       \t17.2.0     \tPostgreSQL (Postgres) is an open source object-relational database ...",
            "$ curl -sI https://cdn.acme.io/static/app.js | grep -i etag", f'etag: "{hexs(rs, 32)}"',
            f"$ cosign verify registry.acme.io/gateway@sha256:{hexs(rs, 64)} --key cosign.pub | jq -r '.[0].critical.image[\"docker-manifest-digest\"]'",
            f"sha256:{hexs(rs, 64)}", "$ git rev-parse HEAD", hexs(rs, 40), "$ md5sum backup-2026-12-01.sql.gz", f"{hexs(rs, 32)}  backup-2026-12-01.sql.gz",
            "$ openssl x509 -in api.crt -noout -fingerprint -sha256 -serial",
            "sha256 Fingerprint=" + ":".join(hexs(rs, 2).upper() for _ in range(32)), "serial=" + hexs(rs, 36).upper(),
            "$ ssh-keygen -lf ~/.ssh/id_ed25519.pub", f"256 SHA256:{base64.b64encode(rs.randbytes(32)).decode().rstrip('=')} deploy@bastion (ED25519)",
            "$ aws sts get-caller-identity", "{", '    "UserId": "AROA' + "".join(rs.choice("ABCDEFGHIJKLMNOPQRSTUVWXYZ234567") for _ in range(17)) + ':oncall",',
            '    "Account": "481516234200",', '    "Arn": "arn:aws:sts::481516234200:assumed-role/OpsReadOnly/oncall"', "}",
            "$ aws secretsmanager list-secrets --query 'SecretList[].Name' --output text",
            "prod/orders/db\tprod/gateway/api-key\tprod/payments/stripe\tstaging/orders/db"]
    return "\n".join(out) + "\n"


def urls() -> str:
    rs = _rs("urls")
    out = ["$ grep -hoE '(https?|postgres|redis|amqp|mongodb)://[^ \"]+' docs/*.md deploy/*.yaml | sort -u"]
    for u in ("https://github.com/acme/platform/blob/main/docs/secrets.md#rotating-the-api-key",
              "https://developer.hashicorp.com/vault/docs/secrets/kv/kv-v2",
              "https://kubernetes.io/docs/concepts/configuration/secret/",
              "https://sso.acme.io/realms/ops/protocol/openid-connect/token",
              "https://api.acme.io/v1/tokens?limit=20&cursor=eyJpZCI6MTIzfQ",
              "http://localhost:8080/healthz", "http://127.0.0.1:9090/api/v1/query?query=up%7Bjob%3D%22node%22%7D",
              "postgres://pg-primary.acme.internal:5432/orders?sslmode=verify-full",
              "postgresql://orders@pg-primary.acme.internal/orders", "redis://redis-master.cache.svc:6379/0",
              "amqp://rabbit-0.acme.internal:5672/%2Fnotify", "mongodb://mongo-0.mongo:27017,mongo-1.mongo:27017/?replicaSet=rs0",
              "https://grafana.acme.io/d/" + hexs(rs, 9) + "/api-latency?orgId=1&from=now-6h&to=now&var-secret=all",
              "https://console.aws.amazon.com/secretsmanager/secret?name=prod%2Forders%2Fdb&region=eu-west-1",
              "https://portal.azure.com/#@acme.onmicrosoft.com/resource/subscriptions/" + uuid(rs) + "/resourceGroups/rg-data-prod/overview",
              "ssh://git@git.acme.internal:2222/platform/charts.git", "git+ssh://git@github.com/acme/infra.git",
              "https://user@gitlab.acme.io/platform/api.git", "s3://acme-backups/pg/2026-12-01/base.tar.zst",
              "https://hooks.slack.com/services/ (webhook URL lives in vault: kv/data/prod/alerting)"):
        out.append(u)
    return "\n".join(out) + "\n"


PROSE = """## Rotating secrets

Every secret we own has an owner and a rotation date. The token used by CI expires after 24 hours; the
password for the reporting replica is rotated every 90 days by the database secrets engine, and the old key
stays valid for one hour so that running jobs can finish. Never paste a password, an API key or a session token
into a ticket: link to the secret's path in Vault instead (for example kv/data/prod/payments).

If a key leaks, revoke it first and ask questions later. The runbook for a leaked GitHub token is in
docs/incidents/leaked-token.md. A private key that was committed must be considered compromised even if the
commit was reverted: rotate the key, then rewrite history only if legal asks for it.

Secret scanning runs on every push. It flags strings that look like keys (AKIA..., ghp_..., xoxb-...), so
examples in documentation use obviously fake placeholders such as <your-token-here> or REPLACE_ME.

The password policy: at least 12 characters, no reuse of the last 5 passwords, lockout after 10 failures.
Token lifetime: 3600 seconds for access tokens, 30 days for refresh tokens. Key size: 4096 bits for RSA,
P-256 for ECDSA. The secret key for sessions is derived per deployment and never leaves the cluster.

Q: Why does `kubectl get secret` show base64?
A: base64 is an encoding, not encryption. Anyone who can read the Secret can decode it, which is why RBAC on
secrets matters more than the encoding. Use `kubectl describe secret` to see only the sizes.

Q: The deploy failed with "token expired". What now?
A: Re-run the job; it requests a fresh token at start. If it fails twice, check the OIDC trust policy.

Remember: the password is not the problem, the process is. Keys, tokens and secrets all need an owner.
"""


def prose() -> str:
    return PROSE


def config_nonsecret() -> str:
    return """$ cat config/auth.yaml
auth:
  password_min_length: 12
  password_max_age_days: 90
  password_history: 5
  password_hash: argon2id
  token_ttl: 3600
  refresh_token_ttl: 2592000
  api_key_rotation_days: 90
  api_key_header: X-Api-Key
  api_key_prefix: acme_
  secret_store: vault
  secret_ref: payments-db
  secretName: wildcard-acme-tls
  existingSecret: pg-credentials
  existingSecretPasswordKey: postgres-password
  passwordFile: /run/secrets/db_password
  private_key_path: /etc/ssl/private/api.acme.io.key
  key_size: 4096
  key_algorithm: RSA
  signing_key_id: prod-2026-11
  token_endpoint: https://sso.acme.io/realms/ops/protocol/openid-connect/token
  enable_password_auth: false
  require_token: true
  secret_rotation_enabled: true
  max_tokens: 4096
$ cat .env.example
DB_HOST=localhost
DB_PASSWORD=
DB_PASSWORD_FILE=/run/secrets/db_password
API_TOKEN=changeme
SECRET_KEY=REPLACE_ME
JWT_SECRET=${JWT_SECRET}
SMTP_PASSWORD=<set in vault>
TOKEN_TTL=3600
$ helm show values bitnami/postgresql | grep -iE 'password|secret' | head -12
    postgresPassword: ""
    password: ""
    existingSecret: ""
    secretKeys:
      adminPasswordKey: postgres-password
      userPasswordKey: password
      replicationPasswordKey: replication-password
    usePasswordFiles: true
  password: "{{ .Values.global.postgresql.auth.password }}"
$ grep -n password /etc/ssh/sshd_config
58:PasswordAuthentication no
61:PermitEmptyPasswords no
$ grep -E '^(password|min|max)' /etc/security/pwquality.conf
minlen = 12
minclass = 3
maxrepeat = 3
$ cat ~/.config/gh/hosts.yml
github.com:
    git_protocol: https
    users:
        acme-ops:
    user: acme-ops
$ vault kv metadata get secret/prod/payments | tail -6
Key                     Value
---                     -----
cas_required            false
current_version         12
delete_version_after    0s
max_versions            10
$ vault token lookup | grep -E 'policies|ttl|renewable'
explicit_max_ttl    0s
policies            [default ops-read]
renewable           true
ttl                 31h59m12s
"""


def ci_masked() -> str:
    rs = _rs("ci_masked")
    return f"""2026-12-02T11:40:01.0000000Z ##[group]Run actions/checkout@v4
2026-12-02T11:40:01.0010000Z with:
2026-12-02T11:40:01.0020000Z   repository: acme/platform
2026-12-02T11:40:01.0030000Z   token: ***
2026-12-02T11:40:01.0040000Z   ssh-strict: true
2026-12-02T11:40:01.0050000Z   persist-credentials: true
2026-12-02T11:40:01.0060000Z   clean: true
2026-12-02T11:40:01.0070000Z   fetch-depth: 1
2026-12-02T11:40:01.0080000Z ##[endgroup]
2026-12-02T11:40:01.9000000Z Syncing repository: acme/platform
2026-12-02T11:40:02.1000000Z [command]/usr/bin/git config --local http.https://github.com/.extraheader AUTHORIZATION: basic ***
2026-12-02T11:40:02.7000000Z [command]/usr/bin/git -c protocol.version=2 fetch --no-tags --prune --no-recurse-submodules --depth=1 origin +{hexs(rs, 40)}:refs/remotes/origin/main
2026-12-02T11:40:03.0000000Z ##[group]Run aws-actions/configure-aws-credentials@v4
2026-12-02T11:40:03.0010000Z with:
2026-12-02T11:40:03.0020000Z   role-to-assume: arn:aws:iam::481516234200:role/gha-deployer
2026-12-02T11:40:03.0030000Z   aws-region: eu-west-1
2026-12-02T11:40:03.0040000Z   role-session-name: gha-{hexs(rs, 10)}
2026-12-02T11:40:03.0050000Z ##[endgroup]
2026-12-02T11:40:03.9000000Z Assuming role with OIDC
2026-12-02T11:40:04.1000000Z Authenticated as assumedRoleId AROA{''.join(rs.choice('ABCDEFGHIJKLMNOPQRSTUVWXYZ234567') for _ in range(17))}:gha-{hexs(rs, 10)}
2026-12-02T11:40:05.0000000Z ##[group]Run ./scripts/deploy.sh
2026-12-02T11:40:05.0010000Z env:
2026-12-02T11:40:05.0020000Z   DB_PASSWORD: ***
2026-12-02T11:40:05.0030000Z   SLACK_WEBHOOK: ***
2026-12-02T11:40:05.0040000Z   TOKEN_TTL: 3600
2026-12-02T11:40:05.0050000Z ##[endgroup]
2026-12-02T11:40:05.2000000Z + kubectl -n payments set image deploy/checkout checkout=registry.acme.io/checkout@sha256:{hexs(rs, 64)}
2026-12-02T11:40:05.9000000Z deployment.apps/checkout image updated
2026-12-02T11:40:06.0000000Z + kubectl -n payments rollout status deploy/checkout --timeout=300s
2026-12-02T11:40:31.0000000Z deployment "checkout" successfully rolled out
2026-12-02T11:40:31.1000000Z + curl -fsS https://api.acme.io/healthz
2026-12-02T11:40:31.3000000Z {{"status":"ok","version":"4.18.2","commit":"{hexs(rs, 12)}"}}
2026-12-02T11:40:31.4000000Z Post job cleanup.
2026-12-02T11:40:31.5000000Z [command]/usr/bin/git config --local --unset-all http.https://github.com/.extraheader
2026-12-02T11:40:31.6000000Z Cleaning up orphan processes
Running with gitlab-runner 17.5.2 (a0e2d5b8)
  on acme-shared-runner-3 t3_xYz12, system ID: s_{hexs(rs, 12)}
Preparing the "docker" executor
Using docker image sha256:{hexs(rs, 64)} for alpine:3.20 with digest alpine@sha256:{hexs(rs, 64)} ...
$ echo "deploying $CI_COMMIT_SHORT_SHA to $CI_ENVIRONMENT_NAME"
deploying {hexs(rs, 8)} to production
$ helm upgrade --install api ./chart --set image.tag=$CI_COMMIT_SHORT_SHA --set existingSecret=api-secrets
Release "api" has been upgraded. Happy Helming!
Cleaning up project directory and file based variables
Job succeeded
"""


def host_misc() -> str:
    rs = _rs("host_misc")
    pub = base64.b64encode(b"\x00\x00\x00\x0bssh-ed25519\x00\x00\x00 " + rs.randbytes(32)).decode()
    rsa_pub = base64.b64encode(b"\x00\x00\x00\x07ssh-rsa" + rs.randbytes(270)).decode()
    cert = base64.b64encode(rs.randbytes(700)).decode()
    cert_lines = "\n".join(cert[i:i + 64] for i in range(0, len(cert), 64))
    return f"""$ df -h
Filesystem      Size  Used Avail Use% Mounted on
/dev/nvme0n1p1   97G   41G   56G  43% /
tmpfs           7.8G     0  7.8G   0% /dev/shm
/dev/nvme1n1    492G  311G  181G  64% /var/lib/containerd
$ free -m
               total        used        free      shared  buff/cache   available
Mem:           15890        9211         812         112        5866        6321
Swap:              0           0           0
$ cat ~/.ssh/authorized_keys
ssh-ed25519 {pub} dana@laptop
ssh-rsa {rsa_pub} ci@jenkins
$ ssh -v bastion.acme.io 2>&1 | grep -E 'Server host key|Authenticated'
debug1: Server host key: ssh-ed25519 SHA256:{base64.b64encode(rs.randbytes(32)).decode().rstrip('=')}
Authenticated to bastion.acme.io ([203.0.113.7]:22) using "publickey".
$ wg show wg0
interface: wg0
  public key: {base64.b64encode(rs.randbytes(32)).decode()}
  private key: (hidden)
  listening port: 51820

peer: {base64.b64encode(rs.randbytes(32)).decode()}
  preshared key: (hidden)
  endpoint: 203.0.113.44:51820
  allowed ips: 10.99.0.2/32
  latest handshake: 1 minute, 12 seconds ago
  transfer: 1.21 GiB received, 388.40 MiB sent
$ openssl s_client -connect api.acme.io:443 -showcerts </dev/null 2>/dev/null | sed -n '/BEGIN/,/END/p' | head -13
-----BEGIN CERTIFICATE-----
{cert_lines}
-----END CERTIFICATE-----
$ openssl x509 -in api.crt -noout -subject -issuer -dates
subject=CN = api.acme.io
issuer=C = US, O = Let's Encrypt, CN = R11
notBefore=Oct 30 08:11:02 2026 GMT
notAfter=Jan 28 08:11:01 2027 GMT
$ consul members
Node      Address             Status  Type    Build   Protocol  DC    Partition  Segment
consul-1  10.20.0.11:8301     alive   server  1.20.1  2         dc1   default    <all>
consul-2  10.20.0.12:8301     alive   server  1.20.1  2         dc1   default    <all>
consul-3  10.20.0.13:8301     alive   server  1.20.1  2         dc1   default    <all>
$ consul acl token list | grep -E 'AccessorID|Description' | head -4
AccessorID:       {uuid(rs)}
Description:      Anonymous Token
AccessorID:       {uuid(rs)}
Description:      prometheus scrape
$ vault status
Key                     Value
---                     -----
Seal Type               awskms
Recovery Seal Type      shamir
Initialized             true
Sealed                  false
Total Recovery Shares   5
Threshold               3
Version                 1.18.2
Storage Type            raft
Cluster Name            vault-prod
Cluster ID              {uuid(rs)}
HA Enabled              true
$ journalctl -u sshd --since today | tail -4
Dec 02 11:02:11 bastion sshd[44120]: Accepted publickey for dana from 198.51.100.23 port 53211 ssh2: ED25519 SHA256:{base64.b64encode(rs.randbytes(32)).decode().rstrip('=')}
Dec 02 11:40:09 bastion sshd[44802]: Failed password for invalid user admin from 45.155.205.12 port 40122 ssh2
Dec 02 11:40:11 bastion sshd[44802]: Connection closed by invalid user admin 45.155.205.12 port 40122 [preauth]
Dec 02 12:01:55 bastion sudo[45011]:     dana : TTY=pts/0 ; PWD=/home/dana ; USER=root ; COMMAND=/usr/bin/systemctl restart vault-agent
"""


def db_benign() -> str:
    rs = _rs("db_benign")
    rows = "\n".join(f" {i:>3} | {uuid(rs)} | {rs.choice(('active', 'revoked', 'expired'))}  | {rs.choice(('read', 'write', 'admin'))}  | 2026-{rs.randint(1, 11):02}-{rs.randint(1, 28):02}" for i in range(1, 16))
    return f"""app=> SELECT id, key_id, status, scope, created FROM api_keys ORDER BY id LIMIT 15;
  id |                key_id                | status  | scope | created
-----+--------------------------------------+---------+-------+------------
{rows}
(15 rows)

app=> \\d users
                                Table "public.users"
      Column       |           Type           | Collation | Nullable | Default
-------------------+--------------------------+-----------+----------+---------
 id                | bigint                   |           | not null |
 email             | text                     |           | not null |
 password_hash     | text                     |           | not null |
 password_changed  | timestamp with time zone |           |          |
 api_token_count   | integer                  |           | not null | 0
Indexes:
    "users_pkey" PRIMARY KEY, btree (id)
    "users_email_key" UNIQUE CONSTRAINT, btree (email)

mysql> SHOW VARIABLES LIKE '%password%';
+----------------------------------------------+-----------------+
| Variable_name                                | Value           |
+----------------------------------------------+-----------------+
| caching_sha2_password_auto_generate_rsa_keys | ON              |
| default_password_lifetime                    | 0               |
| password_history                             | 5               |
| password_require_current                     | OFF             |
| validate_password.length                     | 12              |
+----------------------------------------------+-----------------+
5 rows in set (0.01 sec)

127.0.0.1:6379> CONFIG GET maxmemory*
1) "maxmemory"
2) "4294967296"
3) "maxmemory-policy"
4) "allkeys-lru"
127.0.0.1:6379> INFO keyspace
# Keyspace
db0:keys=182231,expires=180112,avg_ttl=3311022
127.0.0.1:6379> SCAN 0 MATCH session:* COUNT 3
1) "{rs.randint(1000, 9999)}"
2) 1) "session:{hexs(rs, 32)}"
   2) "session:{hexs(rs, 32)}"
   3) "session:{hexs(rs, 32)}"
rs0 [direct: primary] admin> db.getUsers({{filter: {{user: "reporting"}}}})
{{
  users: [
    {{
      _id: 'admin.reporting',
      userId: UUID('{uuid(rs)}'),
      user: 'reporting',
      db: 'admin',
      roles: [ {{ role: 'read', db: 'orders' }} ],
      mechanisms: [ 'SCRAM-SHA-1', 'SCRAM-SHA-256' ]
    }}
  ],
  ok: 1
}}
"""


def docker_ps() -> str:
    rs = _rs("docker_ps")
    out = ["$ docker ps --format 'table {{.ID}}\\t{{.Image}}\\t{{.Status}}\\t{{.Names}}'", "CONTAINER ID   IMAGE                                   STATUS          NAMES"]
    for app in APPS + ("postgres:16", "redis:7.4", "vault:1.18"):
        out.append(f"{hexs(rs, 12)}   {('registry.acme.io/' + app + ':' + str(rs.randint(1, 9)) + '.' + str(rs.randint(0, 20))) if ':' not in app else app:<39} Up {rs.randint(1, 59)} minutes   {app.split(':')[0]}-{rs.randint(1, 3)}")
    out += ["$ docker inspect --format '{{json .Config.Env}}' gateway-1",
            '["PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin","GATEWAY_PORT=8443","TOKEN_TTL=3600","API_KEY_HEADER=X-Api-Key","SECRETS_DIR=/run/secrets","PASSWORD_FILE=/run/secrets/gateway_db"]',
            "$ docker compose ps", "NAME        IMAGE          COMMAND                  SERVICE   CREATED       STATUS       PORTS",
            "sentry-1    getsentry/sentry:24.11.0   \"/etc/sentry/entrypoi…\"   web       3 hours ago   Up 3 hours   0.0.0.0:9000->9000/tcp",
            "postgres-1  postgres:16    \"docker-entrypoint.s…\"   postgres  3 hours ago   Up 3 hours   5432/tcp"]
    return "\n".join(out) + "\n"


FILES: dict[str, Callable[[], str]] = {
    "kubectl.txt": kubectl, "nginx.txt": nginx, "json_logs.txt": json_logs, "git.txt": git,
    "systemctl.txt": systemctl, "prometheus.txt": prometheus, "terraform.txt": terraform, "digests.txt": digests,
    "urls.txt": urls, "prose.txt": prose, "config_nonsecret.txt": config_nonsecret, "ci_masked.txt": ci_masked,
    "host_misc.txt": host_misc, "db_benign.txt": db_benign, "docker_ps.txt": docker_ps,
}


def benign_files() -> dict[str, str]:
    """File name -> text, each generated from its own seed."""
    _ = ALNUM
    return {name: make() for name, make in FILES.items()}
