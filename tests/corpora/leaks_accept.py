# ruff: noqa: E501  (a corpus of output lines as tools print them; splitting them would hide their shape)
"""Acceptance corpus of issue #11, written by a checker who had not seen the others: 142 cases, 185 secrets, as
an on-call engineer's tools print them (cloud keys, Kubernetes and Helm, Docker auths, URLs and DSNs, connection
strings, .env/ini/YAML/properties/TOML/HCL with symbol-rich values, password files and command lines, private
keys, vendor tokens, JWTs, Vault/Consul/Nomad, Terraform and CI logs).

Every value comes from a seeded RNG at import (no real credential, nothing for a secret scanner to flag).
``ACCEPT_LEAKS`` are the cases the sanitizer redacts (part of ``tests/corpora/leaks.LEAKS``); ``ACCEPT_OPEN`` the
ones it still leaks, left for a decision (named in the README's targets; ``bench/bench_sanitize.py`` counts them).
"""

from __future__ import annotations

import base64
import json
import random
import re
import string
import urllib.parse

from tests.corpora.leak_case import Leak

R = random.Random(20261201)
AL = string.ascii_letters + string.digits
HEX = "0123456789abcdef"
SYM = "!#$%^&*()-_=+[]{};:,.<>/?~@"


def rs(n: int, alpha: str = AL) -> str:
    return "".join(R.choice(alpha) for _ in range(n))


def pw(n: int = 18, first: str | None = None) -> str:
    """A generated, symbol-rich password (two symbols, two digits), optionally starting with ``first``."""
    s = list(rs(n - 4) + rs(2, SYM) + rs(2, string.digits))
    R.shuffle(s)
    v = "".join(s)
    return (first + v[len(first):]) if first else v


def b64(s: str | bytes) -> str:
    return base64.b64encode(s.encode() if isinstance(s, str) else s).decode()


def b64bytes(n: int) -> str:
    return base64.b64encode(bytes(R.randrange(256) for _ in range(n))).decode()


def hexs(n: int) -> str:
    return rs(n, HEX)


def uuid() -> str:
    h = hexs(32)
    return f"{h[:8]}-{h[8:12]}-4{h[13:16]}-a{h[17:20]}-{h[20:]}"


def pem(kind: str, nbytes: int = 600) -> tuple[str, str]:
    body = b64bytes(nbytes)
    lines = [body[i:i + 64] for i in range(0, len(body), 64)]
    return f"-----BEGIN {kind}-----\n" + "\n".join(lines) + f"\n-----END {kind}-----", body


CASES: list[tuple[str, str, list[str]]] = []


def case(fmt: str, text: str, secrets: list[str]) -> None:
    CASES.append((fmt, text, secrets))


# ---- cloud -----------------------------------------------------------------------------------------------
ak, sk, st = "AKIA" + rs(16, string.ascii_uppercase + "234567"), rs(40, AL + "/+"), "FwoGZXIvYXdzE" + rs(200, AL + "/+")
case("aws credentials file", f"$ cat ~/.aws/credentials\n[default]\naws_access_key_id = {ak}\naws_secret_access_key = {sk}\naws_session_token = {st}\nregion = eu-west-1\n", [ak, sk, st])
ak2, sk2 = "AKIA" + rs(16, string.ascii_uppercase + "234567"), rs(40, AL + "/+")
case("aws env exports", f"export AWS_ACCESS_KEY_ID={ak2}\nexport AWS_SECRET_ACCESS_KEY={sk2}\nexport AWS_DEFAULT_REGION=us-east-1\n", [ak2, sk2])
ak3, sk3, st3 = "ASIA" + rs(16, string.ascii_uppercase + "234567"), rs(40, AL + "/+"), "IQoJb3JpZ2luX2VjE" + rs(300, AL + "/+") + "=="
case("aws sts assume-role json", json.dumps({"Credentials": {"AccessKeyId": ak3, "SecretAccessKey": sk3, "SessionToken": st3, "Expiration": "2026-12-01T22:11:03+00:00"}, "AssumedRoleUser": {"AssumedRoleId": "AROA3XFRBF23EXAMPLE:ops", "Arn": "arn:aws:sts::123456789012:assumed-role/ops/ops"}}, indent=4), [ak3, sk3, st3])
ak4, sk4 = "AKIA" + rs(16, string.ascii_uppercase + "234567"), rs(40, AL + "/+")
case("aws iam create-access-key json", json.dumps({"AccessKey": {"UserName": "ci-deployer", "AccessKeyId": ak4, "Status": "Active", "SecretAccessKey": sk4, "CreateDate": "2026-12-01T20:01:44+00:00"}}, indent=4), [ak4, sk4])
gpem, gbody = pem("PRIVATE KEY", 1200)
gkid = hexs(40)
case("gcp service account json", json.dumps({"type": "service_account", "project_id": "acme-prod-231", "private_key_id": gkid, "private_key": gpem + "\n", "client_email": "deployer@acme-prod-231.iam.gserviceaccount.com", "client_id": "10" + rs(19, string.digits), "auth_uri": "https://accounts.google.com/o/oauth2/auth", "token_uri": "https://oauth2.googleapis.com/token"}, indent=2), [gbody])
gpem2, gbody2 = pem("PRIVATE KEY", 1200)
case("gcp service account json one line (kubectl logs)", "creds loaded: " + json.dumps({"type": "service_account", "private_key_id": hexs(40), "private_key": gpem2 + "\n", "client_email": "x@p.iam.gserviceaccount.com"}), [gbody2])
azk = b64bytes(64)
case("azure storage connection string", f"AZURE_STORAGE_CONNECTION_STRING=DefaultEndpointsProtocol=https;AccountName=acmelogs01;AccountKey={azk};EndpointSuffix=core.windows.net\n", [azk])
azk2 = b64bytes(64)
case("azure connection string in json", json.dumps({"connectionString": f"DefaultEndpointsProtocol=https;AccountName=acmebk;AccountKey={azk2}"}), [azk2])
sig = b64bytes(32)
case("azure SAS url", f"azcopy copy 'https://acmelogs01.blob.core.windows.net/backups/db.tar.gz?sv=2022-11-02&ss=b&srt=sco&sp=rwdlac&se=2026-12-31T00:00:00Z&st=2026-12-01T00:00:00Z&spr=https&sig={urllib.parse.quote(sig, safe='')}' ./db.tar.gz\n", [sig, urllib.parse.quote(sig, safe="")])
sig2 = b64bytes(32)
case("azure SAS token bare query", f"SAS token: sv=2021-08-06&ss=bfqt&srt=sco&sp=rl&se=2027-01-01T00:00:00Z&sig={urllib.parse.quote(sig2, safe='')}\n", [sig2, urllib.parse.quote(sig2, safe="")])
sbk = b64bytes(32)
case("azure service bus connection string", f"Endpoint=sb://acme-bus.servicebus.windows.net/;SharedAccessKeyName=RootManageSharedAccessKey;SharedAccessKey={sbk}\n", [sbk])
azsp = rs(8) + "~" + rs(31, AL + "._-~")
case("az ad sp create-for-rbac json", json.dumps({"appId": uuid(), "displayName": "ci-sp", "password": azsp, "tenant": uuid()}, indent=2), [azsp])
azkeys = [b64bytes(64), b64bytes(64)]
case("az storage account keys list", json.dumps([{"creationTime": "2026-11-01T10:00:00+00:00", "keyName": "key1", "permissions": "FULL", "value": azkeys[0]}, {"creationTime": "2026-11-01T10:00:00+00:00", "keyName": "key2", "permissions": "FULL", "value": azkeys[1]}], indent=2), azkeys)
gtok = "ya29." + rs(150, AL + "-_")
case("gcloud auth print-access-token bare", gtok + "\n", [gtok])
gkey = "AIza" + rs(35, AL + "-_")
case("google api key in config", f"maps:\n  api_key: {gkey}\n", [gkey])

# ---- kubernetes ------------------------------------------------------------------------------------------
kp, ku, kt = pw(20), "app_user", rs(40)
case("kubectl get secret -o yaml", f"""apiVersion: v1
data:
  password: {b64(kp)}
  username: {b64(ku)}
  api-token: {b64(kt)}
kind: Secret
metadata:
  creationTimestamp: "2026-11-30T09:12:44Z"
  name: db-credentials
  namespace: payments
  resourceVersion: "8812734"
  uid: {uuid()}
type: Opaque
""", [kp, b64(kp), kt, b64(kt)])
kp2, kk2 = pw(24, first="7"), rs(32)
case("kubectl get secret -o json", json.dumps({"apiVersion": "v1", "data": {"DB_PASSWORD": b64(kp2), "SECRET_KEY": b64(kk2)}, "kind": "Secret", "metadata": {"name": "app-env", "namespace": "web"}, "type": "Opaque"}, indent=4), [kp2, b64(kp2), kk2, b64(kk2)])
kp3 = pw(16)
case("kubectl get secret -o json one line", json.dumps({"kind": "Secret", "data": {"redis-password": b64(kp3)}, "metadata": {"name": "redis"}}), [kp3, b64(kp3)])
sd1, sd2 = pw(20, first=";"), pw(22)
case("Secret manifest stringData", f"""apiVersion: v1
kind: Secret
metadata:
  name: smtp
stringData:
  SMTP_PASSWORD: "{sd1}"
  smtp-user: mailer@acme.example
  api_key: '{sd2}'
""", [sd1, sd2])
sajwt = "eyJhbGciOiJSUzI1NiIsImtpZCI6I" + rs(20) + "." + base64.urlsafe_b64encode(json.dumps({"iss": "kubernetes/serviceaccount", "sub": "system:serviceaccount:ci:deployer", "jti": uuid()}).encode()).decode().rstrip("=") + "." + rs(342, AL + "-_")
case("kubectl describe secret (sa token)", f"""Name:         deployer-token-x7k2p
Namespace:    ci
Labels:       <none>
Annotations:  kubernetes.io/service-account.name: deployer

Type:  kubernetes.io/service-account-token

Data
====
ca.crt:     1099 bytes
namespace:  2 bytes
token:      {sajwt}
""", [sajwt.split(".")[2], sajwt.split(".")[1]])
hp1, hp2, hp3 = pw(20), pw(18, first="4"), rs(32)
case("helm get values", f"""USER-SUPPLIED VALUES:
auth:
  postgresPassword: {hp1}
  password: {hp2}
  username: app
redis:
  auth:
    password: "{hp3}"
replicaCount: 3
""", [hp1, hp2, hp3])
hp4 = pw(22, first="}")
case("helm values.yaml (quoted)", f"""grafana:
  adminUser: admin
  adminPassword: '{hp4}'
  persistence:
    enabled: true
""", [hp4])
dauth_u, dauth_p = "ci-bot", pw(20)
dj = json.dumps({"auths": {"registry.acme.example": {"auth": b64(f"{dauth_u}:{dauth_p}")}}}, indent=2)
case("docker config.json auths", dj, [dauth_p, b64(f"{dauth_u}:{dauth_p}")])
dp2 = rs(36)
dj2 = json.dumps({"auths": {"ghcr.io": {"username": "acme-ci", "password": dp2, "auth": b64("acme-ci:" + dp2)}}})
case("docker config auths with password field", dj2, [dp2, b64("acme-ci:" + dp2)])
dp3 = pw(20)
inner = json.dumps({"auths": {"quay.io": {"auth": b64("robot+ci:" + dp3)}}})
case(".dockerconfigjson in Secret yaml", f"""apiVersion: v1
kind: Secret
type: kubernetes.io/dockerconfigjson
metadata:
  name: regcred
data:
  .dockerconfigjson: {b64(inner)}
""", [dp3, b64(inner)])
kcd, kct = b64bytes(900), rs(64, HEX)
case("kubeconfig client-key-data and token", f"""users:
- name: admin@prod
  user:
    client-certificate-data: {b64bytes(60)}
    client-key-data: {kcd}
- name: ci
  user:
    token: {kct}
""", [kcd, kct])
ep = pw(20)
case("pod spec env name/value pair", f"""    env:
    - name: LOG_LEVEL
      value: info
    - name: DB_PASSWORD
      value: "{ep}"
""", [ep])
lit = pw(16, first="&")
case("kubectl create secret --from-literal (history)", f"  512  kubectl -n web create secret generic app --from-literal=username=app --from-literal=password='{lit}'\n", [lit])

# ---- URLs / DSNs -----------------------------------------------------------------------------------------
u1 = rs(6) + "/" + rs(8) + "+" + rs(4)
case("postgres url with / in password", f"DATABASE_URL=postgres://app:{u1}@db.internal:5432/orders?sslmode=require\n", [u1])
u2 = rs(7) + "@" + rs(9)
case("mysql url with raw @ in password", f"connecting to mysql://root:{u2}@10.2.3.4:3306/shop\n", [u2])
u3 = rs(6) + "%40" + rs(6) + "%2F" + rs(5)
case("url with %40 encoded password", f'{{"level":"info","msg":"db connect","dsn":"postgresql://reporter:{u3}@pg-ro.acme.internal/analytics"}}\n', [u3, urllib.parse.unquote(u3)])
u4 = rs(32)
case("redis url password only", f"REDIS_URL=redis://:{u4}@redis-master.cache.svc:6379/0\n", [u4])
u5 = pw(18)
u5q = urllib.parse.quote(u5, safe="")
case("amqp url quoted password", f"broker_url = amqp://celery:{u5q}@rabbitmq:5672/prod\n", [u5q, u5])
u6 = rs(24)
case("mongodb+srv url", f"MONGO_URI=\"mongodb+srv://svc-orders:{u6}@cluster0.ab1cd.mongodb.net/orders?retryWrites=true&w=majority\"\n", [u6])
u7 = pw(14)
case("go mysql dsn tcp()", f"2026/12/01 20:14:03 dsn: orders:{u7}@tcp(mysql-primary:3306)/orders?parseTime=true\n", [u7])
u8 = rs(20)
case("git-credentials https", f"https://oauth2:{u8}@gitlab.acme.example\n", [u8])
u9 = rs(40, HEX)
case("pip.conf index-url with token", f"[global]\nindex-url = https://__token__:{u9}@pypi.acme.example/simple/\n", [u9])
u10 = rs(12) + ":" + rs(6)
case("url password containing colon", f"proxy=http://squid:{u10}@proxy.corp:3128\n", [u10])
u11 = pw(16)
case("ftp url in log", f"Dec  1 20:11:02 backup01 lftp[2211]: open ftp://backup:{urllib.parse.quote(u11, safe='')}@ftp.vendor.example/\n", [urllib.parse.quote(u11, safe=""), u11])

# ---- connection strings ----------------------------------------------------------------------------------
j1 = pw(16)
case("jdbc sqlserver password=", f"spring.datasource.url=jdbc:sqlserver://sql01.acme.local:1433;databaseName=crm;user=sa;password={j1};encrypt=true\n", [j1])
j2 = rs(18)
case("jdbc postgresql query password", f"jdbc:postgresql://pg.acme.local:5432/ledger?user=ledger&password={j2}&ssl=true\n", [j2])
j3 = pw(14, first=",")
case("odbc Pwd=", f"Driver={{ODBC Driver 18 for SQL Server}};Server=tcp:sql-prod.database.windows.net,1433;Database=crm;Uid=crmapp;Pwd={j3};Encrypt=yes;\n", [j3])
j4 = pw(20)
case("ado.net Password= in appsettings.json", json.dumps({"ConnectionStrings": {"Default": f"Server=sql01;Database=Orders;User Id=orders_app;Password='{j4}';TrustServerCertificate=True"}}, indent=2), [j4])
j5 = rs(16)
case("ado.net password quoted", f"Data Source=ora01:1521/ORCL;User Id=scott;Password=\"{j5}\";\n", [j5])
j6 = pw(12)
case("npgsql connection string", f"Host=pg01;Port=5432;Username=svc;Password={j6};Database=app\n", [j6])

# ---- assignments -----------------------------------------------------------------------------------------
env_vals = {
    "DB_PASS": pw(16, first="3"),
    "ENCRYPTION_KEY": rs(32),
    "SIGNING_KEY": rs(48, HEX),
    "APP_KEY": "base64:" + b64bytes(32),
    "SECRET_KEY_BASE": rs(128, HEX),
    "STRIPE_WEBHOOK_SECRET": "whsec_" + rs(32),
    "JWT_SECRET": pw(24, first=")"),
    "MAILGUN_API_KEY": "key-" + rs(32, HEX),
    "SENTRY_AUTH_TOKEN": "sntrys_" + rs(60),
    "CLOUDFLARE_API_TOKEN": rs(40, AL + "_-"),
    "DATADOG_API_KEY": rs(32, HEX),
    "ADMIN_PASSWORD": pw(14, first="]"),
    "SESSION_SECRET": pw(20, first="&"),
    "OAUTH_CLIENT_SECRET": rs(35, AL + "-_"),
    "MASTER_KEY": rs(32, HEX),
}
for name, v in env_vals.items():
    case(f".env {name}", f"{name}={v}\n", [v[7:] if v.startswith("base64:") else v])
case(".env quoted with export", f"export REDIS_PASSWORD=\"{(v1 := pw(20, first='9'))}\"\nexport PGPASSWORD='{(v2 := pw(16))}'\n", [v1, v2])
iv1, iv2 = pw(18, first=";"), pw(20)
case("ini [database] password", f"[database]\nhost = db01\nuser = grafana\npassword = {iv1}\n\n[security]\nsecret_key = {iv2}\n", [iv1, iv2])
yv1, yv2, yv3 = pw(16, first=","), pw(24), pw(20, first="1")
case("yaml config passwords", f"smtp:\n  host: smtp.acme.example\n  password: {yv1}\noauth:\n  client_secret: {yv2}\nldap:\n  bind_password: {yv3}\n", [yv1, yv2, yv3])
pv1, pv2 = pw(16), pw(18, first="}")
case("java properties", f"spring.datasource.username=orders\nspring.datasource.password={pv1}\nspring.mail.password={pv2}\n", [pv1, pv2])
tv1, tv2 = pw(20), rs(40)
case("toml", f'[database]\nuser = "app"\npassword = "{tv1}"\n\n[github]\ntoken = "{tv2}"\n', [tv1, tv2])
hv1, hv2 = pw(20), rs(40, AL + "/+")
case("hcl terraform tfvars", f'db_password = "{hv1}"\naws_secret_key = "{hv2}"\ninstance_count = 3\n', [hv1, hv2])
xv = pw(16)
case("maven settings.xml", f"<server>\n  <id>nexus</id>\n  <username>deploy</username>\n  <password>{xv}</password>\n</server>\n", [xv])
jl = pw(18)
case("json log with password field", f'{{"ts":"2026-12-01T20:01:02Z","level":"debug","msg":"login request","user":"ops","password":"{jl}"}}\n', [jl])
rq = pw(20, first="5")
case("redis.conf requirepass", f"requirepass {rq}\nmasterauth {rq}\n", [rq])
au = pw(14)
case("sql ALTER USER in log", f"2026-12-01 20:02:11 UTC [4412] LOG:  statement: ALTER USER reporting WITH PASSWORD '{au}';\n", [au])
dr = pw(18)
case("docker inspect Env array", json.dumps([{"Config": {"Env": ["PATH=/usr/local/sbin:/usr/local/bin", f"POSTGRES_PASSWORD={dr}", "PGDATA=/var/lib/postgresql/data"]}}], indent=4), [dr])
sy = rs(40)
case("systemctl cat Environment=", f"# /etc/systemd/system/exporter.service\n[Service]\nEnvironment=\"API_TOKEN={sy}\"\nExecStart=/usr/local/bin/exporter\n", [sy])
wg = b64bytes(32)
case("wireguard PrivateKey", f"[Interface]\nAddress = 10.8.0.1/24\nPrivateKey = {wg}\nListenPort = 51820\n", [wg])
rb = pw(16)
case("rabbitmq.conf default_pass", f"default_user = admin\ndefault_pass = {rb}\n", [rb])
gf = pw(16, first="2")
case("grafana.ini admin_password", f"[security]\nadmin_user = admin\nadmin_password = {gf}\n", [gf])

# ---- password files / command lines ---------------------------------------------------------------------
ht1 = "$apr1$" + rs(8, AL + "./") + "$" + rs(22, AL + "./")
ht2 = "$2y$05$" + rs(53, AL + "./")
case("htpasswd", f"admin:{ht1}\nmetrics:{ht2}\n", [ht1[6:], ht2[7:]])
pg1, pg2 = pw(16), pw(20, first=":")
case(".pgpass", f"db01.acme.local:5432:orders:orders_app:{pg1}\n*:*:*:postgres:{pg2.replace(':', '')}\n", [pg1, pg2.replace(":", "")])
nr = pw(16)
case(".netrc", f"machine api.heroku.com\n  login ops@acme.example\n  password {nr}\n", [nr])
nr2 = rs(40)
case(".netrc one line", f"machine github.com login acme-bot password {nr2}\n", [nr2])
my = rs(14)
case("mysql -p in ps aux", f"root      4411  0.0  0.1  23456  5432 pts/0    S+   20:11   0:00 mysql -u root -p{my} -h db01 shop\n", [my])
my2 = pw(12)
case("mysqldump --password=", f"+ mysqldump --user=backup --password='{my2}' --single-transaction shop\n", [my2])
cu = pw(16)
case("curl -u user:password", f"$ curl -sS -u deploy:{cu} https://jenkins.acme.example/job/x/build\n", [cu])
cu2 = rs(30)
case("curl -H Authorization Bearer", f"curl -H 'Authorization: Bearer {cu2}' https://api.acme.example/v1/ping\n", [cu2])
ba = "svc:" + pw(14)
case("curl -H Authorization Basic", f"> Authorization: Basic {b64(ba)}\n", [b64(ba), ba[4:]])
sp = pw(14)
case("sshpass -p", f"sshpass -p '{sp}' ssh -o StrictHostKeyChecking=no ops@10.0.3.7 uptime\n", [sp])
pgc = pw(16)
case("PGPASSWORD inline env in CI", f"+ PGPASSWORD={pgc} psql -h db01 -U app -c 'select 1'\n", [pgc])
dk = pw(16)
case("docker run -e in ps", f"docker run -d -e MYSQL_ROOT_PASSWORD={dk} -p 3306:3306 mysql:8.0\n", [dk])
rd = rs(24)
case("redis-cli -a", f"$ redis-cli -h cache01 -a {rd} INFO replication\n", [rd])

# ---- keys ------------------------------------------------------------------------------------------------
k1, k1b = pem("RSA PRIVATE KEY", 1190)
case("PEM RSA private key", k1 + "\n", [k1b])
k2, k2b = pem("EC PRIVATE KEY", 121)
case("PEM EC private key", k2 + "\n", [k2b])
k3b = b64bytes(400)
k3 = "-----BEGIN OPENSSH PRIVATE KEY-----\n" + "\n".join(k3b[i:i + 70] for i in range(0, len(k3b), 70)) + "\n-----END OPENSSH PRIVATE KEY-----\n"
case("OpenSSH private key", k3, [k3b])
k4, k4b = pem("ENCRYPTED PRIVATE KEY", 1250)
case("PKCS8 encrypted private key", k4 + "\n", [k4b])
k5, k5b = pem("PRIVATE KEY", 48)
case("PKCS8 ed25519 private key in cat output", "$ cat tls.key\n" + k5 + "\n", [k5b])
ppub, ppriv, pmac = b64bytes(270), b64bytes(640), hexs(64)
ppk = ("PuTTY-User-Key-File-3: ssh-rsa\nEncryption: none\nComment: rsa-key-20261201\nPublic-Lines: 6\n" + "\n".join(ppub[i:i + 64] for i in range(0, len(ppub), 64)) + "\nKey-Derivation: Argon2id\nPrivate-Lines: 14\n" + "\n".join(ppriv[i:i + 64] for i in range(0, len(ppriv), 64)) + f"\nPrivate-MAC: {pmac}\n")
case("PuTTY ppk", ppk, [ppriv, pmac])
k6, k6b = pem("RSA PRIVATE KEY", 1190)
case("PEM key in k8s tls secret stringData", "stringData:\n  tls.key: |\n" + "\n".join("    " + line for line in k6.splitlines()) + "\n", [k6b])

# ---- tokens ----------------------------------------------------------------------------------------------
t = {
    "slack bot token": "xoxb-" + rs(12, string.digits) + "-" + rs(13, string.digits) + "-" + rs(24),
    "slack user token": "xoxp-" + rs(12, string.digits) + "-" + rs(12, string.digits) + "-" + rs(13, string.digits) + "-" + rs(32, HEX),
    "slack app token": "xapp-1-A" + rs(10, string.ascii_uppercase + string.digits) + "-" + rs(13, string.digits) + "-" + rs(64, HEX),
    "github classic pat": "ghp_" + rs(36),
    "github fine-grained pat": "github_pat_" + rs(22) + "_" + rs(59),
    "github app install token": "ghs_" + rs(36),
    "gitlab pat": "glpat-" + rs(20, AL + "-_"),
    "stripe live secret": "sk_live_" + rs(99),
    "stripe restricted": "rk_live_" + rs(99),
    "sendgrid": "SG." + rs(22, AL + "-_") + "." + rs(43, AL + "-_"),
    "npm token": "npm_" + rs(36),
    "pypi token": "pypi-AgEIcHlwaS5vcmc" + rs(150, AL + "-_"),
    "openai project key": "sk-proj-" + rs(156, AL + "-_"),
    "anthropic key": "sk-ant-api03-" + rs(93, AL + "-_") + "AA",
    "vault hvs token": "hvs." + rs(24),
    "vault hvb batch token": "hvb." + rs(138, AL + "_-"),
    "hugging face": "hf_" + rs(34),
    "digitalocean": "dop_v1_" + rs(64, HEX),
    "shopify": "shpat_" + rs(32, HEX),
    "doppler": "dp.st.prd." + rs(40),
    "linear": "lin_api_" + rs(40),
    "terraform cloud": rs(14) + ".atlasv1." + rs(67),
}
for fmt, v in t.items():
    case(fmt + " in log", f"2026-12-01T20:03:{R.randrange(10, 59)}Z WARN using credential {v} for request\n", [v])
slack_hook = "https://hooks.slack.com/services/T" + rs(8, string.ascii_uppercase + string.digits) + "/B" + rs(10, string.ascii_uppercase + string.digits) + "/" + rs(24)
case("slack webhook url", f"ALERT_WEBHOOK={slack_hook}\n", [slack_hook.rsplit("/", 1)[1]])
tw = rs(32, HEX)
case("twilio auth token env", f"TWILIO_ACCOUNT_SID=AC{rs(32, HEX)}\nTWILIO_AUTH_TOKEN={tw}\n", [tw])
twk = "SK" + rs(32, HEX)
tws = rs(32)
case("twilio api key + secret", f"twilio api:core:keys:create output\nSID                                 Secret\n{twk}  {tws}\n", [tws])
npmrc = "npm_" + rs(36)
case(".npmrc _authToken", f"//registry.npmjs.org/:_authToken={npmrc}\n", [npmrc])
npmrc2 = rs(8, HEX) + "-" + rs(4, HEX) + "-" + rs(4, HEX) + "-" + rs(4, HEX) + "-" + rs(12, HEX)
case(".npmrc _authToken legacy uuid", f"//npm.acme.example/:_authToken={npmrc2}\nalways-auth=true\n", [npmrc2])
jwt = "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9." + base64.urlsafe_b64encode(json.dumps({"sub": "u-" + rs(8), "role": "admin", "exp": 1800000000}).encode()).decode().rstrip("=") + "." + rs(43, AL + "-_")
case("JWT in nginx access log query", f'10.1.2.3 - - [01/Dec/2026:20:04:11 +0000] "GET /api/export?access_token={jwt}&fmt=csv HTTP/1.1" 200 5123 "-" "curl/8.4.0"\n', [jwt.split(".")[2], jwt.split(".")[1]])
jwt2 = "eyJhbGciOiJSUzI1NiJ9." + base64.urlsafe_b64encode(json.dumps({"iss": "acme", "sub": rs(10)}).encode()).decode().rstrip("=") + "." + rs(86, AL + "-_")
case("JWT bearer in json log", json.dumps({"level": "debug", "headers": {"authorization": "Bearer " + jwt2}}) + "\n", [jwt2.split(".")[2]])
ck = rs(43, AL + "-_")
case("session cookie in debug log", f"DEBUG request headers: Cookie: _session_id={ck}; theme=dark\n", [ck])

# ---- vault / consul / nomad ------------------------------------------------------------------------------
vt, va = "hvs." + rs(24), rs(24)
case("vault token create table", f"""Key                  Value
---                  -----
token                {vt}
token_accessor       {va}
token_duration       768h
token_renewable      true
token_policies       ["default" "deploy"]
""", [vt])
uk = [b64bytes(33) for _ in range(5)]
rt = "hvs." + rs(24)
case("vault operator init", "".join(f"Unseal Key {i + 1}: {k}\n" for i, k in enumerate(uk)) + f"\nInitial Root Token: {rt}\n\nVault initialized with 5 key shares and a key threshold of 3.\n", uk + [rt])
sid = uuid()
case("vault approle secret-id", f"""Key                   Value
---                   -----
secret_id             {sid}
secret_id_accessor    {uuid()}
secret_id_num_uses    0
secret_id_ttl         0s
""", [sid])
sid2 = uuid()
case("vault approle secret-id json", json.dumps({"request_id": uuid(), "data": {"secret_id": sid2, "secret_id_accessor": uuid(), "secret_id_ttl": 600}}, indent=2), [sid2])
csid = uuid()
case("consul acl token create", f"""AccessorID:       {uuid()}
SecretID:         {csid}
Description:      ci token
Local:            false
Create Time:      2026-12-01 20:05:33.123 +0000 UTC
Policies:
   {uuid()} - deploy
""", [csid])
nsid = uuid()
case("nomad acl token create", f"""Accessor ID  = {uuid()}
Secret ID    = {nsid}
Name         = ci
Type         = client
Global       = false
""", [nsid])
ct = uuid()
case("CONSUL_HTTP_TOKEN env", f"CONSUL_HTTP_TOKEN={ct}\nCONSUL_HTTP_ADDR=https://consul.acme.internal:8501\n", [ct])
vkv = pw(20)
case("vault kv get table", f"""====== Secret Path ======
secret/data/prod/db

======= Metadata =======
Key                Value
---                -----
created_time       2026-11-02T10:11:12.123Z
version            4

====== Data ======
Key         Value
---         -----
password    {vkv}
username    orders
""", [vkv])
vkv2 = rs(40)
case("vault kv get -format=json", json.dumps({"data": {"data": {"api_key": vkv2, "user": "svc"}, "metadata": {"version": 2}}}, indent=2), [vkv2])

# ---- terraform / CI --------------------------------------------------------------------------------------
tfp = pw(20)
case("terraform output -json sensitive", json.dumps({"db_password": {"sensitive": True, "type": "string", "value": tfp}, "endpoint": {"sensitive": False, "type": "string", "value": "db.acme.internal"}}, indent=2), [tfp])
tfp2 = pw(24)
case("terraform state show", f"""# aws_db_instance.main:
resource "aws_db_instance" "main" {{
    allocated_storage = 100
    engine            = "postgres"
    password          = "{tfp2}"
    username          = "root"
}}
""", [tfp2])
tfp3 = rs(40, AL + "/+")
case("terraform state pull json", json.dumps({"resources": [{"type": "aws_iam_access_key", "instances": [{"attributes": {"id": "AKIA" + rs(16, string.ascii_uppercase), "secret": tfp3, "user": "ci"}}]}]}, indent=2), [tfp3])
tfp4 = pw(18)
case("terraform output raw bare (with name)", f"$ terraform output -raw admin_password\n{tfp4}\n", [tfp4])
ci1, ci2 = rs(40), pw(20)
case("CI log echoing env (set -x)", f"+ export DEPLOY_TOKEN={ci1}\n+ export REGISTRY_PASSWORD={ci2}\n+ docker login -u ci --password-stdin registry.acme.example\nLogin Succeeded\n", [ci1, ci2])
ci3 = rs(32)
case("github actions env dump", f"Run ./deploy.sh\n  ./deploy.sh\n  shell: /usr/bin/bash -e {{0}}\n  env:\n    NPM_TOKEN: {ci3}\n    NODE_ENV: production\n", [ci3])
ci4 = pw(16)
case("printenv output", f"HOME=/root\nHOSTNAME=runner-7f9c\nMYSQL_ROOT_PASSWORD={ci4}\nPATH=/usr/bin:/bin\n", [ci4])
ci5 = rs(20)
case("docker login -p in ci log", f"$ docker login -u gitlab-ci-token -p {ci5} registry.gitlab.acme.example\nWARNING! Using --password via the CLI is insecure.\n", [ci5])


# Still leaking when this corpus was written (see the README's targets): left for a decision, not hidden.
OPEN = frozenset({
})


def _as_printed(secret: str, text: str) -> tuple[str, ...]:
    """A key body as the text holds it: wrapped at 64 (PEM, .ppk) or 70 (OpenSSH) characters a line; nothing for a
    decoded form the text holds only encoded (a URL's %40, a SAS sig's %2F: the encoded one is listed too)."""
    if secret in text:
        return (secret,)
    for width in (64, 70):
        lines = tuple(secret[i : i + width] for i in range(0, len(secret), width))
        if all(line in text for line in lines):
            return lines
    return ()


def _leak(fmt: str, text: str, secrets: list[str]) -> Leak:
    printed = tuple(line for secret in secrets for line in _as_printed(secret, text))
    if not printed:
        raise ValueError(f"no secret of {fmt!r} is in its text")
    return Leak(f"accept: {fmt}", text, printed)


ACCEPT_LEAKS: tuple[Leak, ...] = tuple(_leak(*case) for case in CASES if case[0] not in OPEN)
ACCEPT_OPEN: tuple[Leak, ...] = tuple(_leak(*case) for case in CASES if case[0] in OPEN)


def survives(secret: str, text: str, shown: str) -> bool:
    """Whether six characters of ``secret`` in a row are shown that the rest of ``text`` does not hold (a part
    of a secret is a leak too; a marker's kind, ``github_token``, is no part of one)."""
    rest = text.replace(secret, "\0")
    shown = re.sub(r"\[REDACTED:[^\]]*\]", "\0", shown)
    return any(secret[i : i + 6] in shown and secret[i : i + 6] not in rest for i in range(len(secret) - 5))
