# ruff: noqa: E501  (output lines as tools print them; splitting them would change their shape)
"""Leak cases: Kubernetes and Helm (secrets, configmaps holding credentials, helm values, describe, logs)."""

CASES: list[tuple[str, str]] = [
    ("kubectl-get-secret-yaml", """apiVersion: v1
data:
  DB_PASSWORD: {{k8s}}
  DB_USER: YmlsbGluZw==
  STRIPE_KEY: {{k8s}}
kind: Secret
metadata:
  creationTimestamp: "2026-11-30T08:12:44Z"
  name: billing-env
  namespace: billing
  resourceVersion: "88172311"
  uid: {{~uuid}}
type: Opaque
"""),
    ("kubectl-get-secret-json", """{
    "apiVersion": "v1",
    "data": {
        "password": "{{k8s}}",
        "username": "YWRtaW4="
    },
    "kind": "Secret",
    "metadata": {
        "name": "grafana-admin",
        "namespace": "monitoring"
    },
    "type": "Opaque"
}
"""),
    ("kubectl-secret-tls", """apiVersion: v1
kind: Secret
type: kubernetes.io/tls
metadata:
  name: wildcard-acme-io
  namespace: ingress-nginx
data:
  tls.crt: LS0tLS1CRUdJTiBDRVJUSUZJQ0FURS0tLS0tCk1JSUZhekNDQTFPZ0F3SUJBZ0lVQ2xB
  tls.key: {{b64_64}}{{b64_64}}
"""),
    ("kubectl-dockerconfigjson", """apiVersion: v1
kind: Secret
metadata:
  name: regcred
  namespace: apps
type: kubernetes.io/dockerconfigjson
data:
  .dockerconfigjson: {{b64_64}}{{b64_32}}
"""),
    ("kubectl-secret-stringdata-apply", """$ kubectl apply --dry-run=client -o yaml -f - <<EOF
apiVersion: v1
kind: Secret
metadata:
  name: smtp
  namespace: notifications
stringData:
  SMTP_USERNAME: apikey
  SMTP_PASSWORD: {{sg}}
  SMTP_HOST: smtp.sendgrid.net
EOF
"""),
    ("kubectl-configmap-creds", """apiVersion: v1
kind: ConfigMap
metadata:
  name: worker-config
  namespace: jobs
data:
  application.properties: |
    spring.datasource.url=jdbc:postgresql://pg-main.db.svc:5432/jobs
    spring.datasource.username=jobs
    spring.datasource.password={{pw}}
    spring.rabbitmq.addresses=amqp://jobs:{{upw}}@rabbitmq.mq.svc:5672/
    management.endpoints.web.exposure.include=health,info
"""),
    ("kubectl-describe-pod-env", """Name:             payments-api-7d9c8b6f5-x2kqp
Namespace:        payments
Priority:         0
Node:             ip-10-42-3-17.eu-west-1.compute.internal/10.42.3.17
Status:           Running
Containers:
  api:
    Image:          registry.acme.io/payments-api:3.8.1
    Port:           8080/TCP
    State:          Running
      Started:      Wed, 02 Dec 2026 06:41:09 +0000
    Ready:          True
    Environment:
      SPRING_PROFILES_ACTIVE:  prod
      PAYPAL_CLIENT_SECRET:    {{b62_40}}
      REDIS_PASSWORD:          {{pw}}
      DB_PASSWORD:             <set to the key 'password' in secret 'payments-db'>  Optional: false
    Mounts:
      /var/run/secrets/kubernetes.io/serviceaccount from kube-api-access-8zq2n (ro)
"""),
    ("kubectl-get-pod-yaml-env", """spec:
  containers:
  - env:
    - name: GITHUB_TOKEN
      value: {{ghp}}
    - name: NPM_TOKEN
      value: {{npm}}
    - name: HOME
      value: /home/runner
    image: ghcr.io/acme/runner:2.319.1
    name: runner
"""),
    ("kubectl-get-sa-token", """$ kubectl -n ci create token deployer --duration=24h
{{jwt}}
"""),
    ("kubectl-legacy-sa-secret", """Name:         deployer-token-7xk2p
Namespace:    ci
Labels:       <none>
Annotations:  kubernetes.io/service-account.name: deployer
              kubernetes.io/service-account.uid: {{~uuid}}

Type:  kubernetes.io/service-account-token

Data
====
ca.crt:     1099 bytes
namespace:  2 bytes
token:      {{jwt}}
"""),
    ("kubeconfig-view-raw", """apiVersion: v1
clusters:
- cluster:
    certificate-authority-data: LS0tLS1CRUdJTiBDRVJUSUZJQ0FURS0tLS0tCk1JSUMvakNDQWVhZ0F3SUJBZ0lCQURBTkJna3Foa2lHOXcwQkFRc0ZBREFWTVJNd0VRWURWUVFERXdwcmRXSmwKY201bGRHVnpNQjRYRFRJMk1URXlNREE0TURBd01Gb1hEVE0yTVRFeE9EQTRNREF3TUZvd0ZURVRNQkVHQTFVRQpBeE1LYTNWaVpYSnVaWFJsY3pDQ0FTSXdEUVlKS29aSWh2Y05BUUVCQlFBRGdnRVBBRENDQVFvQ2dnRUJBTGQ3Cg==
    server: https://10.0.0.1:6443
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
    client-certificate-data: LS0tLS1CRUdJTiBDRVJUSUZJQ0FURS0tLS0tCk1JSURJVENDQWdtZ0F3SUJBZ0lJ
    client-key-data: {{b64_64}}{{b64_64}}{{b64_64}}
- name: oidc
  user:
    token: {{jwt}}
"""),
    ("helm-get-values", """$ helm get values keycloak -n auth
USER-SUPPLIED VALUES:
auth:
  adminUser: admin
  adminPassword: {{pw}}
postgresql:
  auth:
    password: {{pw}}
    postgresPassword: {{pw}}
ingress:
  enabled: true
  hostname: sso.acme.io
"""),
    ("helm-get-values-all-json", """$ helm get values argo-cd -n argocd -o json
{"configs":{"secret":{"argocdServerAdminPassword":"$2a$10${{~id12}}{{~id12}}{{~id12}}abcdefghijklm","githubSecret":"{{hex40}}"},"repositories":{"infra":{"url":"https://github.com/acme/infra.git","password":"{{ghp}}","username":"acme-bot"}}}}
"""),
    ("helm-install-set-trace", """+ helm upgrade --install redis bitnami/redis --namespace cache --set auth.password={{pw}} --set replica.replicaCount=2 --wait
Release "redis" has been upgraded. Happy Helming!
NAME: redis
LAST DEPLOYED: Wed Dec  2 07:41:11 2026
NAMESPACE: cache
STATUS: deployed
REVISION: 14
"""),
    ("kubectl-logs-app-dumps-config", """2026-12-02T07:40:01.118Z INFO  Starting worker v4.2.0 (commit 1f9e0ac)
2026-12-02T07:40:01.120Z DEBUG Loaded config: {'broker_url': 'redis://:{{upw}}@redis-master.cache.svc:6379/0', 'result_backend': 'db+postgresql://worker:{{upw}}@pg.db.svc/worker', 'timezone': 'UTC'}
2026-12-02T07:40:01.331Z INFO  Connected to redis-master.cache.svc:6379
"""),
    ("kubectl-get-secret-go-template-decoded", """$ kubectl get secret -n db pg-superuser -o go-template='{{range $k,$v := .data}}{{printf "%s: " $k}}{{$v | base64decode}}{{"\\n"}}{{end}}'
password: {{pw}}
username: postgres
"""),
    ("sealed-secrets-plain-input", """$ cat secret-plain.yaml
apiVersion: v1
kind: Secret
metadata:
  name: mailgun
  namespace: marketing
stringData:
  api-key: {{mailgun}}
  domain: mg.acme.io
"""),
    ("external-secrets-describe", """Name:         vault-backend
Namespace:    external-secrets
Kind:         ClusterSecretStore
Spec:
  Provider:
    Vault:
      Auth:
        Token Secret Ref:
          Key:   token
          Name:  vault-token
      Path:      secret
      Server:    https://vault.acme.io:8200
Status:
  Conditions:
    Message:   could not validate provider: token {{hvs}} is expired
    Reason:    InvalidProviderConfig
"""),
    ("argocd-repo-secret-yaml", """apiVersion: v1
kind: Secret
metadata:
  name: repo-infra
  namespace: argocd
  labels:
    argocd.argoproj.io/secret-type: repository
stringData:
  type: git
  url: https://gitlab.acme.io/platform/infra.git
  username: argocd
  password: {{glpat}}
"""),
    ("kubectl-exec-env", """$ kubectl exec -n shop deploy/storefront -- env
PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
HOSTNAME=storefront-6f7d9c-abcde
SHOPIFY_ADMIN_TOKEN={{shpat}}
SHOPIFY_API_SECRET={{shpss}}
ALGOLIA_ADMIN_KEY={{hex32}}
KUBERNETES_SERVICE_HOST=172.20.0.1
KUBERNETES_PORT=tcp://172.20.0.1:443
HOME=/root
"""),
    ("kustomize-secret-generator", """$ kustomize build overlays/prod | grep -A6 'kind: Secret'
kind: Secret
metadata:
  name: app-secrets-9h4c2mkt7g
data:
  SECRET_KEY_BASE: {{k8s}}
  OPENAI_API_KEY: {{k8s}}
type: Opaque
"""),
]
