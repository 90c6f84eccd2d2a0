# ruff: noqa: E501
"""Kubernetes and Helm: Secrets in YAML and JSON, decoded values, helm values, kubeconfigs, pod env."""

from __future__ import annotations

import base64
import json

from tests.corpora.accept6.values import (
    ALNUM,
    Family,
    Secret,
    b64,
    hexs,
    human_password,
    jwt,
    password,
    pem,
    pick,
    uuid,
)


def enc(value: str) -> str:
    return base64.b64encode(value.encode()).decode()


def build() -> Family:
    F = Family("k8s")

    rs = F.rng("get-secret-yaml")
    pw, key = password(rs, 20), "sk_live_" + pick(rs, ALNUM, 24)
    F.add("get-secret-yaml", f"""$ kubectl -n payments get secret payments-db -o yaml
apiVersion: v1
data:
  DB_PASSWORD: {enc(pw)}
  DB_USER: {enc('payments')}
  STRIPE_API_KEY: {enc(key)}
kind: Secret
metadata:
  creationTimestamp: "2026-09-14T10:22:31Z"
  name: payments-db
  namespace: payments
  resourceVersion: "88123419"
  uid: {uuid(rs)}
type: Opaque
""", Secret("b64-password", enc(pw)), Secret("b64-stripe", enc(key)))

    rs = F.rng("get-secret-json")
    pw, tok = human_password(rs), hexs(rs, 40)
    F.add("get-secret-json", json.dumps({
        "apiVersion": "v1", "kind": "Secret", "type": "Opaque",
        "data": {"password": enc(pw), "username": enc("grafana_admin"), "admin-api-token": enc(tok)},
        "metadata": {"name": "grafana-admin", "namespace": "monitoring", "uid": uuid(rs)}}, indent=4),
        Secret("b64-password", enc(pw)), Secret("b64-token", enc(tok)))

    rs = F.rng("get-secret-tls")
    block, _ = pem(rs, "EC PRIVATE KEY", 120)
    crt = enc(pem(rs, "CERTIFICATE", 700)[0])
    keyb = enc(block + "\n")
    F.add("get-secret-tls", f"""$ kubectl -n ingress get secret wildcard-acme-tls -o yaml
apiVersion: v1
data:
  tls.crt: {crt}
  tls.key: {keyb}
kind: Secret
metadata:
  annotations:
    cert-manager.io/certificate-name: wildcard-acme
    cert-manager.io/issuer-name: letsencrypt-prod
  name: wildcard-acme-tls
  namespace: ingress
type: kubernetes.io/tls
""", Secret("b64-tls-key", keyb[64:-64]))

    rs = F.rng("dockerconfigjson-decoded")
    pat = "ghp_" + pick(rs, ALNUM, 36)
    auth = enc("ci-bot:" + pat)
    F.add("dockerconfigjson-decoded", f"""$ kubectl get secret ghcr-pull -o jsonpath='{{.data.\\.dockerconfigjson}}' | base64 -d
{{"auths":{{"ghcr.io":{{"username":"ci-bot","password":"{pat}","auth":"{auth}"}}}}}}
""", Secret("github-pat", pat), Secret("docker-auth", auth))

    rs = F.rng("dockerconfigjson-encoded")
    pw = password(rs, 24)
    blob = enc(json.dumps({"auths": {"registry.acme.internal:5000": {"username": "puller", "password": pw,
                                                                     "auth": enc("puller:" + pw)}}}))
    F.add("dockerconfigjson-encoded", f"""apiVersion: v1
kind: Secret
metadata:
  name: registry-pull
  namespace: apps
type: kubernetes.io/dockerconfigjson
data:
  .dockerconfigjson: {blob}
""", Secret("b64-dockerconfig", blob))

    rs = F.rng("describe-pod-env")
    pw, tok = password(rs, 18), "xoxb-" + "-".join([pick(rs, "0123456789", 12), pick(rs, "0123456789", 13), pick(rs, ALNUM, 24)])
    F.add("describe-pod-env", f"""Containers:
  worker:
    Container ID:   containerd://{hexs(rs, 64)}
    Image:          registry.acme.internal:5000/alerts-worker:2.14.1
    Port:           <none>
    State:          Running
      Started:      Wed, 02 Dec 2026 09:14:22 +0000
    Ready:          True
    Restart Count:  0
    Environment:
      LOG_LEVEL:           info
      REDIS_HOST:          redis-master.cache.svc
      REDIS_PASSWORD:      {pw}
      SLACK_BOT_TOKEN:     {tok}
      DB_PASSWORD:         <set to the key 'password' in secret 'alerts-db'>  Optional: false
    Mounts:
      /var/run/secrets/kubernetes.io/serviceaccount from kube-api-access-8x2lq (ro)
""", Secret("password", pw), Secret("slack-token", tok))

    rs = F.rng("helm-get-values")
    p1, p2, p3 = password(rs, 16), human_password(rs), password(rs, 24)
    F.add("helm-get-values", f"""$ helm -n data get values orders-stack
USER-SUPPLIED VALUES:
postgresql:
  auth:
    database: orders
    postgresPassword: {p1}
    username: orders
    password: "{p2}"
redis:
  architecture: standalone
  auth:
    enabled: true
    password: '{p3}'
resources:
  limits:
    memory: 2Gi
""", Secret("password", p1), Secret("password", p2), Secret("password", p3))

    rs = F.rng("helm-get-values-json")
    pw, ak = password(rs, 20), hexs(rs, 32)
    F.add("helm-get-values-json", json.dumps({
        "grafana": {"adminPassword": pw, "persistence": {"enabled": True}},
        "datadog": {"apiKey": ak, "site": "datadoghq.eu"}, "replicaCount": 2}),
        Secret("password", pw), Secret("datadog-api-key", ak))

    rs = F.rng("configmap-application-properties")
    pw, js = password(rs, 20), b64(rs, 48)
    F.add("configmap-application-properties", f"""apiVersion: v1
data:
  application.properties: |
    server.port=8080
    spring.datasource.url=jdbc:postgresql://ledger-db:5432/ledger
    spring.datasource.username=ledger
    spring.datasource.password={pw}
    app.security.jwt.secret={js}
    management.endpoints.web.exposure.include=health,info
kind: ConfigMap
metadata:
  name: ledger-config
  namespace: finance
""", Secret("password", pw), Secret("jwt-secret", js))

    rs = F.rng("stringdata-dry-run")
    lit, tok = password(rs, 22), "glpat-" + pick(rs, ALNUM + "-_", 20)
    F.add("stringdata-dry-run", f"""$ kubectl create secret generic deploy-keys --from-literal=api-token={lit} --dry-run=client -o yaml
apiVersion: v1
data:
  api-token: {enc(lit)}
kind: Secret
metadata:
  creationTimestamp: null
  name: deploy-keys
---
apiVersion: v1
kind: Secret
metadata:
  name: gitlab-runner
stringData:
  runner-registration-token: ""
  runner-token: {tok}
""", Secret("literal", lit), Secret("b64-literal", enc(lit)), Secret("gitlab-token", tok))

    rs = F.rng("kubectl-exec-printenv")
    pw, sk, db = password(rs, 16), b64(rs, 32), password(rs, 14)
    F.add("kubectl-exec-printenv", f"""$ kubectl -n shop exec deploy/checkout -- printenv
PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
HOSTNAME=checkout-6c9f7d8b5-q2x7m
SESSION_SECRET={sk}
MYSQL_PWD={pw}
DATABASE_URL=mysql://checkout:{db}@mysql-primary.shop.svc:3306/checkout
KUBERNETES_SERVICE_HOST=10.96.0.1
KUBERNETES_PORT=tcp://10.96.0.1:443
HOME=/root
""", Secret("session-secret", sk), Secret("password", pw), Secret("url-password", db))

    rs = F.rng("kubeconfig-raw")
    keyblock, _ = pem(rs, "RSA PRIVATE KEY", 600)
    ckd = enc(keyblock + "\n")
    tok, core = jwt(rs)
    F.add("kubeconfig-raw", f"""$ kubectl config view --raw --minify
apiVersion: v1
clusters:
- cluster:
    certificate-authority-data: {enc(pem(rs, 'CERTIFICATE', 500)[0])}
    server: https://k8s-prod.acme.internal:6443
  name: prod
contexts:
- context:
    cluster: prod
    user: admin
  name: prod-admin
current-context: prod-admin
kind: Config
users:
- name: admin
  user:
    client-certificate-data: {enc(pem(rs, 'CERTIFICATE', 500)[0])}
    client-key-data: {ckd}
- name: ci
  user:
    token: {tok}
""", Secret("client-key", ckd[64:-64]), Secret("sa-token", core))

    rs = F.rng("app-log-dsn")
    pw = password(rs, 18)
    F.add("app-log-dsn", f"""$ kubectl -n reporting logs deploy/report-api --tail=5
{{"level":"info","ts":"2026-12-02T12:01:11.204Z","msg":"starting report-api","version":"3.8.0"}}
{{"level":"info","ts":"2026-12-02T12:01:11.206Z","msg":"config loaded","database":"postgresql://reporter:{pw}@pg-reporting-rw.reporting.svc:5432/reports?sslmode=verify-full"}}
{{"level":"info","ts":"2026-12-02T12:01:11.377Z","msg":"listening","addr":":8080"}}
""", Secret("url-password", pw))

    rs = F.rng("go-template-decoded")
    pw, rk = password(rs, 20), hexs(rs, 48)
    F.add("go-template-decoded", f"""$ kubectl get secret minio-creds -o go-template='{{{{range $k,$v := .data}}}}{{{{$k}}}}={{{{$v|base64decode}}}}{{{{"\\n"}}}}{{{{end}}}}'
rootPassword={pw}
rootUser=minio-admin
replication-key={rk}
""", Secret("password", pw), Secret("replication-key", rk))

    rs = F.rng("helm-get-manifest")
    pw, cookie = password(rs, 20), pick(rs, "ABCDEFGHIJKLMNOPQRSTUVWXYZ", 32)
    F.add("helm-get-manifest", f"""$ helm get manifest rabbit -n queue | head -30
---
# Source: rabbitmq/templates/secrets.yaml
apiVersion: v1
kind: Secret
metadata:
  name: rabbit-rabbitmq
  namespace: "queue"
  labels:
    app.kubernetes.io/name: rabbitmq
type: Opaque
data:
  rabbitmq-password: "{enc(pw)}"
  rabbitmq-erlang-cookie: "{enc(cookie)}"
""", Secret("b64-password", enc(pw)), Secret("b64-cookie", enc(cookie)))

    rs = F.rng("kustomize-secret-generator")
    pw = password(rs, 20)
    F.add("kustomize-secret-generator", f"""$ kustomize build overlays/prod | yq 'select(.kind == "Secret")'
apiVersion: v1
data:
  SMTP_PASSWORD: {enc(pw)}
kind: Secret
metadata:
  name: mailer-env-7c2fh9mgbk
  namespace: mailer
type: Opaque
""", Secret("b64-password", enc(pw)))

    rs = F.rng("rancher-bootstrap-password")
    pw = pick(rs, "bcdfghjklmnpqrstvwxz2456789", 28)
    F.add("rancher-bootstrap-password", f"""$ kubectl get secret --namespace cattle-system bootstrap-secret -o go-template='{{{{.data.bootstrapPassword|base64decode}}}}{{{{ "\\n" }}}}'
{pw}
""", Secret("bare-password", pw))

    rs = F.rng("flux-create-secret-export")
    pw = "github_pat_11" + pick(rs, "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567", 20) + "_" + pick(rs, ALNUM, 59)
    F.add("flux-create-secret-export", f"""$ flux create secret git infra-repo --url=https://github.com/acme/infra --username=flux --password=$GH_TOKEN --export
---
apiVersion: v1
kind: Secret
metadata:
  name: infra-repo
  namespace: flux-system
stringData:
  password: {pw}
  username: flux
""", Secret("github-pat", pw))

    rs = F.rng("sa-token-secret")
    tok, core = jwt(rs)
    F.add("sa-token-secret", f"""$ kubectl -n ci get secret ci-deployer-token -o jsonpath='{{.data.token}}' | base64 -d; echo
{tok}
""", Secret("sa-token", core))

    rs = F.rng("argocd-initial-admin")
    pw = pick(rs, ALNUM + "-", 16)
    F.add("argocd-initial-admin", f"""$ kubectl -n argocd get secret argocd-initial-admin-secret -o yaml
apiVersion: v1
data:
  password: {enc(pw)}
kind: Secret
metadata:
  name: argocd-initial-admin-secret
  namespace: argocd
type: Opaque
""", Secret("b64-password", enc(pw)))

    rs = F.rng("external-secret-debug")
    pw = password(rs, 26)
    F.add("external-secret-debug", f"""$ kubectl -n external-secrets logs deploy/external-secrets --tail=3
{{"level":"debug","ts":1764676812.118,"logger":"provider.vault","msg":"fetched secret","key":"kv/data/prod/billing","property":"db_password","value":"{pw}"}}
{{"level":"info","ts":1764676812.122,"logger":"controllers.ExternalSecret","msg":"reconciled secret","ExternalSecret":{{"name":"billing-db","namespace":"billing"}}}}
""", Secret("password", pw))

    rs = F.rng("pod-spec-env-literal")
    pw = human_password(rs)
    sg = "SG." + pick(rs, ALNUM + "-_", 22) + "." + pick(rs, ALNUM + "-_", 43)
    F.add("pod-spec-env-literal", f"""$ kubectl get deploy legacy-cron -o yaml | grep -A2 -- '- name:'
        - name: ADMIN_PASSWORD
          value: {pw}
        - name: SENDGRID_KEY
          value: {sg}
        - name: TZ
          value: Europe/Berlin
""", Secret("password", pw), Secret("sendgrid", sg))
    return F
