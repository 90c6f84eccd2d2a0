# ruff: noqa: E501  (a corpus of output lines as tools print them; splitting them would hide their shape)
"""Long ordinary outputs for the third acceptance check (issue #11, `accept3`): a ``kubectl describe pods -A``, a
``journalctl`` of a busy host and a ``terraform plan`` of a large workspace, 64 KiB to 1 MiB, generated from a
seed so the same bytes come back on every run. They hold no secret, only the words and shapes around secrets
(``secretKeyRef``, ``password = (sensitive value)``, digests, UUIDs, container ids, query strings); one
sanitizer call must return each of them byte-identical."""

from __future__ import annotations

import random
import string

HEX = "0123456789abcdef"


def _hex(r: random.Random, n: int) -> str:
    return "".join(r.choice(HEX) for _ in range(n))


def _uuid(r: random.Random) -> str:
    h = _hex(r, 32)
    return f"{h[:8]}-{h[8:12]}-4{h[13:16]}-a{h[17:20]}-{h[20:]}"


def _name(r: random.Random) -> str:
    return "".join(r.choice(string.ascii_lowercase + string.digits) for _ in range(5))


_APPS = ("orders-api", "orders-worker", "billing-api", "checkout-web", "search-indexer", "notify", "ledger",
         "reports", "partner-gateway", "auth-proxy", "inventory", "pricing")


def kubectl_describe_pods(size: int, seed: int = 1) -> str:
    """``kubectl describe pods -A``: pods with env from secretKeyRef, mounts of service-account tokens and
    Secrets, image digests, container ids and events."""
    r = random.Random(seed)
    parts: list[str] = []
    total = 0
    while total < size:
        app = r.choice(_APPS)
        pod = f"{app}-{_hex(r, 9)}-{_name(r)}"
        node = f"ip-10-0-{r.randint(1, 9)}-{r.randint(2, 250)}.eu-west-1.compute.internal"
        ip = f"10.42.{r.randint(0, 15)}.{r.randint(2, 250)}"
        secret = f"{app}-{r.choice(('db', 'credentials', 'api-keys', 'tls'))}"
        text = f"""Name:             {pod}
Namespace:        {app.split('-')[0]}
Priority:         0
Service Account:  {app}
Node:             {node}/{node.split('.')[0].replace('ip-', '').replace('-', '.')}
Start Time:       Tue, 01 Dec 2026 {r.randint(0, 23):02d}:{r.randint(0, 59):02d}:{r.randint(0, 59):02d} +0000
Labels:           app.kubernetes.io/name={app}
                  pod-template-hash={_hex(r, 9)}
Annotations:      checksum/config: {_hex(r, 64)}
                  checksum/secret: {_hex(r, 64)}
                  kubectl.kubernetes.io/restartedAt: 2026-12-01T22:52:{r.randint(10, 59)}Z
Status:           Running
IP:               {ip}
Controlled By:    ReplicaSet/{pod.rsplit('-', 1)[0]}
Containers:
  {app}:
    Container ID:   containerd://{_hex(r, 64)}
    Image:          registry.acme.example/{app}:1.{r.randint(0, 60)}.{r.randint(0, 9)}
    Image ID:       registry.acme.example/{app}@sha256:{_hex(r, 64)}
    Port:           8080/TCP
    Host Port:      0/TCP
    State:          Running
      Started:      Tue, 01 Dec 2026 22:5{r.randint(0, 9)}:{r.randint(10, 59)} +0000
    Ready:          True
    Restart Count:  {r.randint(0, 3)}
    Limits:
      memory:  {r.choice((256, 512, 1024))}Mi
    Requests:
      cpu:      {r.choice((100, 250, 500))}m
      memory:   {r.choice((128, 256, 512))}Mi
    Liveness:   http-get http://:8080/healthz delay=10s timeout=1s period=10s #success=1 #failure=3
    Readiness:  http-get http://:8080/readyz delay=5s timeout=1s period=5s #success=1 #failure=3
    Environment:
      LOG_LEVEL:         info
      DB_HOST:           pg-{app.split('-')[0]}.db.svc
      DB_PASSWORD:       <set to the key 'password' in secret '{secret}'>  Optional: false
      API_TOKEN:         <set to the key 'api-token' in secret '{app}-api-keys'>  Optional: false
      TOKEN_TTL_SECONDS: 3600
      POD_NAME:          {pod} (v1:metadata.name)
    Mounts:
      /etc/{app}/tls from tls (ro)
      /var/run/secrets/kubernetes.io/serviceaccount from kube-api-access-{_name(r)} (ro)
Conditions:
  Type                        Status
  PodReadyToStartContainers   True
  Initialized                 True
  Ready                       True
  ContainersReady             True
  PodScheduled                True
Volumes:
  tls:
    Type:        Secret (a volume populated by a Secret)
    SecretName:  {app}-tls
    Optional:    false
  kube-api-access-{_name(r)}:
    Type:                    Projected (a volume that contains injected data from multiple sources)
    TokenExpirationSeconds:  3607
    ConfigMapName:           kube-root-ca.crt
    ConfigMapOptional:       <nil>
    DownwardAPI:             true
QoS Class:                   Burstable
Node-Selectors:              <none>
Tolerations:                 node.kubernetes.io/not-ready:NoExecute op=Exists for 300s
                             node.kubernetes.io/unreachable:NoExecute op=Exists for 300s
Events:
  Type     Reason     Age   From               Message
  ----     ------     ----  ----               -------
  Normal   Scheduled  41m   default-scheduler  Successfully assigned {app.split('-')[0]}/{pod} to {node}
  Normal   Pulled     41m   kubelet            Container image "registry.acme.example/{app}@sha256:{_hex(r, 64)}" already present on machine
  Warning  Unhealthy  40m   kubelet            Readiness probe failed: Get "http://{ip}:8080/readyz": dial tcp {ip}:8080: connect: connection refused


"""
        parts.append(text)
        total += len(text.encode())
    return "".join(parts)


def journalctl(size: int, seed: int = 2) -> str:
    """``journalctl`` of a busy host: sshd, sudo, kubelet, nginx access lines with query strings, JSON app logs
    with trace ids and token counts, cron, systemd."""
    r = random.Random(seed)
    lines: list[str] = []
    total = 0
    second = 0
    paths = ("/api/v1/orders", "/api/v1/tokens", "/account/reset-password", "/search", "/api/v1/keys",
             "/oauth2/authorize", "/healthz", "/static/app.js")
    while total < size:
        second += r.randint(0, 2)
        ts = f"Dec 02 {(second // 3600) % 24:02d}:{(second // 60) % 60:02d}:{second % 60:02d}"
        kind = r.randrange(9)
        pid = r.randint(1000, 99999)
        if kind == 0:
            line = (f"{ts} app-01 sshd[{pid}]: Accepted publickey for deploy from 10.0.{r.randint(0, 9)}."
                    f"{r.randint(2, 250)} port {r.randint(30000, 65000)} ssh2: ED25519 SHA256:"
                    + "".join(r.choice(string.ascii_letters + string.digits + "+/") for _ in range(43)))
        elif kind == 1:
            line = (f"{ts} app-01 sudo[{pid}]:   oncall : TTY=pts/{r.randint(0, 4)} ; PWD=/home/oncall ; USER=root ;"
                    f" COMMAND=/usr/bin/systemctl restart {r.choice(_APPS)}")
        elif kind == 2:
            line = (f"{ts} app-01 kubelet[1181]: I1202 {ts[7:]}.{r.randint(100000, 999999)}    1181 "
                    f"kubelet.go:2468] \"SyncLoop (PLEG): event for pod\" pod=\"{r.choice(_APPS)}/{r.choice(_APPS)}-"
                    f"{_hex(r, 9)}-{_name(r)}\" event={{\"ID\":\"{_uuid(r)}\",\"Type\":\"ContainerStarted\","
                    f"\"Data\":\"{_hex(r, 64)}\"}}")
        elif kind == 3:
            path = r.choice(paths)
            query = r.choice(("?page=2&per_page=50", "?q=password+reset&lang=en", "?token_type=bearer&limit=20",
                              "?step=2", "?response_type=code&client_id=orders-web&state=" + _hex(r, 16), ""))
            line = (f"{ts} web-01 nginx[{pid}]: 203.0.113.{r.randint(1, 250)} - - [02/Dec/2026:{ts[7:]} +0000] "
                    f"\"GET {path}{query} HTTP/1.1\" {r.choice((200, 200, 200, 302, 304, 404))} "
                    f"{r.randint(0, 90000)} \"-\" \"Mozilla/5.0\"")
        elif kind == 4:
            line = (f"{ts} app-01 orders-api[2231]: {{\"level\":\"info\",\"msg\":\"request done\",\"trace_id\":"
                    f"\"{_hex(r, 32)}\",\"span_id\":\"{_hex(r, 16)}\",\"user_id\":\"u_{_hex(r, 6)}\","
                    f"\"input_tokens\":{r.randint(10, 5000)},\"token_count\":{r.randint(10, 9000)},"
                    f"\"duration_ms\":{r.randint(1, 900)}}}")
        elif kind == 5:
            line = (f"{ts} app-01 CRON[{pid}]: (root) CMD (/usr/local/bin/rotate-keys --keep 2 --secret-path "
                    f"secret/data/{r.choice(_APPS)} >> /var/log/rotate-keys.log 2>&1)")
        elif kind == 6:
            line = (f"{ts} app-01 systemd[1]: Started {r.choice(_APPS)}.service - "
                    f"{r.choice(('Orders', 'Billing', 'Reports'))} service.")
        elif kind == 7:
            line = (f"{ts} app-01 orders-worker[2231]: time=2026-12-02T{ts[7:]}Z level=info msg=\"lease renewed\" "
                    f"lease_id=database/creds/readonly/{_hex(r, 8)} lease_duration=3600 renewable=true "
                    f"request_id={_uuid(r)}")
        else:
            line = (f"{ts} app-01 orders-worker[2231]: time=2026-12-02T{ts[7:]}Z level=warn msg=\"password "
                    f"authentication failed, retrying\" user=orders_app attempt={r.randint(1, 3)} backoff_ms="
                    f"{r.choice((250, 500, 1000))}")
        lines.append(line + "\n")
        total += len(line) + 1
    return "".join(lines)


def terraform_plan(size: int, seed: int = 3) -> str:
    """``terraform plan`` of a large workspace: many resources with sensitive values hidden, ARNs, ids, tags,
    random_password settings and policy JSON."""
    r = random.Random(seed)
    parts = ["Terraform used the selected providers to generate the following execution plan. Resource actions are"
             " indicated with the following symbols:\n  + create\n  ~ update in-place\n\nTerraform will perform"
             " the following actions:\n\n"]
    total = len(parts[0])
    n = 0
    while total < size:
        n += 1
        app = r.choice(_APPS)
        kind = r.randrange(4)
        if kind == 0:
            text = f"""  # aws_db_instance.{app.replace('-', '_')}_{n} will be updated in-place
  ~ resource "aws_db_instance" "{app.replace('-', '_')}_{n}" {{
        id                       = "db-{''.join(r.choice(string.ascii_uppercase + string.digits) for _ in range(26))}"
      ~ instance_class           = "db.r6g.large" -> "db.r6g.xlarge"
        password                 = (sensitive value)
        username                 = "{app.replace('-', '_')}"
        kms_key_id               = "arn:aws:kms:eu-west-1:481516234200:key/{_uuid(r)}"
        tags                     = {{
            "Name"  = "{app}"
            "Owner" = "platform"
        }}
        # (41 unchanged attributes hidden)
    }}

"""
        elif kind == 1:
            text = f"""  # random_password.{app.replace('-', '_')}_{n} will be created
  + resource "random_password" "{app.replace('-', '_')}_{n}" {{
      + bcrypt_hash      = (sensitive value)
      + id               = (known after apply)
      + length           = {r.choice((16, 24, 32))}
      + min_special      = 2
      + override_special = "!#$%&*()-_=+[]{{}}<>:?"
      + result           = (sensitive value)
      + special          = true
    }}

"""
        elif kind == 2:
            text = f"""  # aws_secretsmanager_secret.{app.replace('-', '_')}_{n} will be created
  + resource "aws_secretsmanager_secret" "{app.replace('-', '_')}_{n}" {{
      + arn                            = (known after apply)
      + id                             = (known after apply)
      + kms_key_id                     = "arn:aws:kms:eu-west-1:481516234200:key/{_uuid(r)}"
      + name                           = "prod/{app}/credentials"
      + recovery_window_in_days        = 30
      + policy                         = jsonencode(
          + {{
              + Statement = [
                  + {{
                      + Action    = "secretsmanager:GetSecretValue"
                      + Effect    = "Allow"
                      + Principal = {{
                          + AWS = "arn:aws:iam::481516234200:role/{app}"
                        }}
                      + Resource  = "*"
                    }},
                ]
              + Version   = "2012-10-17"
            }}
        )
    }}

"""
        else:
            text = f"""  # kubernetes_deployment.{app.replace('-', '_')}_{n} will be updated in-place
  ~ resource "kubernetes_deployment" "{app.replace('-', '_')}_{n}" {{
        id               = "{app.split('-')[0]}/{app}"
      ~ spec {{
          ~ template {{
              ~ spec {{
                  ~ container {{
                      ~ image = "registry.acme.example/{app}@sha256:{_hex(r, 64)}" -> "registry.acme.example/{app}@sha256:{_hex(r, 64)}"
                        name  = "{app}"
                        env {{
                            name = "DB_PASSWORD"
                            value_from {{
                                secret_key_ref {{
                                    key  = "password"
                                    name = "{app}-db"
                                }}
                            }}
                        }}
                    }}
                }}
            }}
        }}
    }}

"""
        parts.append(text)
        total += len(text.encode())
    parts.append(f"Plan: {n // 2} to add, {n - n // 2} to change, 0 to destroy.\n")
    return "".join(parts)


def certificate_bundle(size: int, seed: int = 4) -> str:
    """``cat /etc/ssl/certs/ca-certificates.crt`` (or ``kubectl get cm kube-root-ca.crt -o yaml`` of a big bundle):
    public certificates, 64-column base64 between BEGIN/END CERTIFICATE lines, each after a comment naming it."""
    r = random.Random(seed)
    parts: list[str] = []
    total = 0
    alphabet = string.ascii_letters + string.digits + "+/"
    while total < size:
        body = "MII" + "".join(r.choice(alphabet) for _ in range(r.randint(1200, 1900)))
        body = body[: len(body) // 4 * 4]
        lines = "\n".join(body[i:i + 64] for i in range(0, len(body), 64))
        text = (f"# {r.choice(('Acme', 'Globex', 'Initech', 'Umbrella', 'Hooli'))} Root CA {r.randint(1, 99)}\n"
                f"-----BEGIN CERTIFICATE-----\n{lines}\n-----END CERTIFICATE-----\n")
        parts.append(text)
        total += len(text)
    return "".join(parts)


LONG_OUTPUTS = {
    "kubectl-describe-pods-300k": lambda: kubectl_describe_pods(300 << 10),
    "journalctl-1m": lambda: journalctl(1 << 20),
    "terraform-plan-200k": lambda: terraform_plan(200 << 10),
    "certificate-bundle-200k": lambda: certificate_bundle(200 << 10),
}
