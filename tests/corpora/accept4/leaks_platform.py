# ruff: noqa: E501  (output lines as tools print them; splitting them would change their shape)
"""Secret-bearing output of Kubernetes, Helm, Terraform, Vault, cloud CLIs and secret managers."""

from __future__ import annotations

from tests.corpora.accept4.case import B64, HEX, URLSAFE, Case, b64, case, rnd

_PG = rnd("pg", 24)
_API = rnd("api", 40)
_JWT = ("eyJhbGciOiJSUzI1NiIsImtpZCI6I" + rnd("jwtk", 30) + "." + "eyJhdWQiOlsiaHR0cHM6Ly9rdWJlcm5ldGVzLmRlZmF1bHQu"
        + rnd("jwtb", 120, URLSAFE) + "." + rnd("jwts", 342, URLSAFE))
_AKID = "AKIA" + rnd("akid", 16, "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567")
_ASAK = rnd("asak", 40, B64)
_ASIA = "ASIA" + rnd("asia", 16, "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567")
_STS = "IQoJb3JpZ2luX2VjE" + rnd("sts", 300, B64)
_HVS = "hvs." + rnd("hvs", 24)
_AZKEY = rnd("azkey", 86, B64) + "=="
_AZKEY2 = rnd("azkey2", 86, B64) + "=="
_SIG = rnd("sassig", 43, B64) + "="

PLATFORM: list[Case] = [
    case("k8s-secret-yaml", "kubernetes secret data", """$ kubectl get secret payments-db -n payments -o yaml
apiVersion: v1
data:
  DB_HOST: cGF5bWVudHMtZGIucGF5bWVudHMuc3ZjLmNsdXN0ZXIubG9jYWw=
  DB_PASSWORD: <<pw>>
  DB_USER: cGF5bWVudHM=
  STRIPE_KEY: <<stripe>>
kind: Secret
metadata:
  creationTimestamp: "2026-10-14T09:12:44Z"
  name: payments-db
  namespace: payments
  resourceVersion: "48812731"
  uid: 0b5f6a1e-3c2d-4d8e-9f10-7a6b5c4d3e2f
type: Opaque
""", pw=b64(_PG), stripe=b64("sk_" + "live_" + rnd("stripe1", 24))),
    case("k8s-secret-json", "kubernetes secret data", """{
    "apiVersion": "v1",
    "data": {
        "password": "<<pw>>",
        "username": "YWRtaW4="
    },
    "kind": "Secret",
    "metadata": {
        "name": "grafana-admin",
        "namespace": "monitoring"
    },
    "type": "Opaque"
}
""", pw=b64(rnd("graf", 18))),
    case("k8s-secret-jsonpath-decoded", "kubernetes decoded value", """$ kubectl -n argocd get secret argocd-initial-admin-secret -o jsonpath="{.data.password}" | base64 -d
<<pw>>
$ echo done
done
""", pw=rnd("argoinit", 16, URLSAFE)),
    case("k8s-secret-tls", "kubernetes secret data", """apiVersion: v1
kind: Secret
type: kubernetes.io/tls
metadata:
  name: ingress-tls
data:
  tls.crt: LS0tLS1CRUdJTiBDRVJUSUZJQ0FURS0tLS0tCk1JSURCVENDQWUyZ0F3SUJBZ0lVRkZGTEZMRkxGTEZMRkxGTEZMRkxGTEZMRgo=
  tls.key: <<key>>
""", key=b64("-----BEGIN PRIVATE KEY-----\n" + rnd("tlskey", 64, B64) + "\n-----END PRIVATE KEY-----\n")),
    case("k8s-dockerconfigjson", "kubernetes secret data", """apiVersion: v1
data:
  .dockerconfigjson: <<dc>>
kind: Secret
metadata:
  name: regcred
type: kubernetes.io/dockerconfigjson
""", dc=b64('{"auths":{"registry.gitlab.com":{"username":"deploy","password":"' + rnd("glreg", 20)
            + '","auth":"' + b64("deploy:" + rnd("glreg", 20)) + '"}}}')),
    case("k8s-last-applied-stringdata", "kubernetes stringData in annotation", """metadata:
  annotations:
    kubectl.kubernetes.io/last-applied-configuration: |
      {"apiVersion":"v1","kind":"Secret","metadata":{"annotations":{},"name":"smtp","namespace":"mail"},"stringData":{"SMTP_PASSWORD":"<<pw>>","SMTP_USER":"postmaster"},"type":"Opaque"}
  name: smtp
""", pw=rnd("smtp", 20)),
    case("k8s-pod-env-value", "kubernetes pod env", """    env:
    - name: LOG_LEVEL
      value: info
    - name: DATABASE_PASSWORD
      value: <<pw>>
    - name: SENTRY_ENVIRONMENT
      value: production
    - name: REDIS_URL
      value: redis://:<<rpw>>@redis-master.cache.svc:6379/0
""", pw=rnd("podenv", 22), rpw=rnd("podredis", 18)),
    case("k8s-describe-pod-env", "kubernetes pod env", """Containers:
  api:
    Image:          registry.example.com/api:1.42.0
    Environment:
      PORT:               8080
      JWT_SIGNING_KEY:    <<key>>
      DB_PASSWORD:        <set to the key 'password' in secret 'api-db'>  Optional: false
""", key=rnd("jwtsign", 48)),
    case("k8s-exec-env", "environment dump", """$ kubectl exec -n shop deploy/checkout -- env
PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
HOSTNAME=checkout-7d9c8b7f5-x2x8k
DATABASE_URL=postgresql://checkout:<<pw>>@pg-primary.shop.svc:5432/checkout?sslmode=require
PAYPAL_CLIENT_SECRET=<<pp>>
KUBERNETES_SERVICE_HOST=10.96.0.1
HOME=/root
""", pw=_PG, pp=rnd("paypal", 80, URLSAFE)),
    case("k8s-configmap-properties", "config file in configmap", """apiVersion: v1
data:
  application.properties: |
    server.port=8080
    spring.datasource.url=jdbc:postgresql://orders-db:5432/orders
    spring.datasource.username=orders
    spring.datasource.password=<<pw>>
    management.endpoints.web.exposure.include=health,info
kind: ConfigMap
""", pw=rnd("cmprops", 16)),
    case("k8s-sa-token", "jwt", """$ kubectl create token ci-deployer -n ci --duration=1h
<<jwt>>
""", jwt=_JWT),
    case("kubeconfig-raw", "kubeconfig", """apiVersion: v1
clusters:
- cluster:
    certificate-authority-data: LS0tLS1CRUdJTiBDRVJUSUZJQ0FURS0tLS0tCk1JSUMvakNDQWVhZ0F3SUJBZ0lCQURBTkJna3Foa2lHOXcwQkFRc0ZBREFWTVJNd0VRWURWUVFERXdwcmRXSmwK
    server: https://10.20.0.10:6443
  name: prod
contexts:
- context:
    cluster: prod
    user: admin
  name: admin@prod
current-context: admin@prod
kind: Config
users:
- name: admin
  user:
    client-certificate-data: LS0tLS1CRUdJTiBDRVJUSUZJQ0FURS0tLS0tCk1JSURJVENDQWdtZ0F3SUJBZ0lJYnBLOUFrSQo=
    client-key-data: <<key>>
- name: ci
  user:
    token: <<tok>>
""", key=b64("-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEA" + rnd("kcfgkey", 120, B64) + "\n-----END RSA PRIVATE KEY-----\n"),
        tok=rnd("kcfgtok", 6, "abcdefghijklmnopqrstuvwxyz0123456789") + "." + rnd("kcfgtok2", 16, "abcdefghijklmnopqrstuvwxyz0123456789")),
    case("kubeconfig-gke-access-token", "kubeconfig", """users:
- name: gke_acme-prod_europe-west1_main
  user:
    auth-provider:
      config:
        access-token: ya29.<<tok>>
        cmd-args: config config-helper --format=json
        expiry: "2026-12-02T06:01:12Z"
      name: gcp
""", tok=rnd("ya29kc", 160, URLSAFE)),
    case("kubeadm-join", "bootstrap token", """You can now join any number of machines by running the following on each node as root:

kubeadm join 10.0.0.10:6443 --token <<tok>> \\
	--discovery-token-ca-cert-hash sha256:9f1d3c0e8b7a6f5e4d3c2b1a09f8e7d6c5b4a3928171605f4e3d2c1b0a998877
""", tok=rnd("kadm1", 6, "abcdefghijklmnopqrstuvwxyz0123456789") + "." + rnd("kadm2", 16, "abcdefghijklmnopqrstuvwxyz0123456789")),
    case("k3s-token", "bootstrap token", """$ sudo cat /var/lib/rancher/k3s/server/node-token
K10<<tok>>::server:<<pw>>
""", tok=rnd("k3s", 64, HEX), pw=rnd("k3spw", 32, HEX)),
    case("helm-get-values", "helm values", """$ helm get values keycloak -n auth
USER-SUPPLIED VALUES:
auth:
  adminUser: admin
  adminPassword: <<pw>>
postgresql:
  auth:
    password: <<pg>>
    postgresPassword: <<pg2>>
replicaCount: 2
""", pw=rnd("kcadmin", 14), pg=rnd("kcpg", 20), pg2=rnd("kcpg2", 20)),
    case("helm-set-ci", "command line in CI log", """+ helm upgrade --install api ./charts/api --namespace api --set image.tag=1.42.0 --set secrets.dbPassword=<<pw>> --set-string secrets.sentryDsn=https://<<sk>>@o450123.ingest.sentry.io/5512345 --wait --timeout 10m
Release "api" has been upgraded. Happy Helming!
""", pw=rnd("helmset", 18), sk=rnd("sentrykey", 32, HEX)),
    case("helm-notes-password", "printed password", """NOTES:
** Please be patient while the chart is being deployed **

RabbitMQ can be accessed within the cluster on port 5672 at rabbitmq.messaging.svc.cluster.local

To access for outside the cluster, perform the following steps:

Credentials:
    echo "Username      : user"
    echo "Password      : <<pw>>"
    echo "ErLang Cookie : <<cookie>>"
""", pw=rnd("rmqpw", 12), cookie=rnd("erlcookie", 32, "ABCDEFGHIJKLMNOPQRSTUVWXYZ")),
    case("tf-output-json", "terraform output", """$ terraform output -json
{
  "db_endpoint": {
    "sensitive": false,
    "type": "string",
    "value": "orders.c9xk2lq1.eu-west-1.rds.amazonaws.com:5432"
  },
  "db_password": {
    "sensitive": true,
    "type": "string",
    "value": "<<pw>>"
  },
  "deploy_key": {
    "sensitive": true,
    "type": "string",
    "value": "<<key>>"
  }
}
""", pw=rnd("tfout", 24) + "!#", key=rnd("tfdeploy", 40)),
    case("tf-output-raw", "terraform output", """$ terraform output -raw admin_password
<<pw>>$ exit
""", pw=rnd("tfraw", 20)),
    case("tf-state-show", "terraform state", """# aws_db_instance.main:
resource "aws_db_instance" "main" {
    allocated_storage                     = 100
    engine                                = "postgres"
    engine_version                        = "15.4"
    identifier                            = "orders-prod"
    instance_class                        = "db.r6g.large"
    password                              = "<<pw>>"
    username                              = "orders_admin"
}
""", pw=rnd("tfstate", 22)),
    case("tfvars", "terraform variables", """$ cat prod.auto.tfvars
region            = "eu-west-1"
cloudflare_api_token = "<<cf>>"
datadog_api_key   = "<<dd>>"
datadog_app_key   = "<<ddapp>>"
github_token      = "<<gh>>"
""", cf=rnd("cfapi", 40, URLSAFE), dd=rnd("ddapi", 32, HEX), ddapp=rnd("ddapp", 40, HEX), gh="ghp" + "_" + rnd("ghp1", 36)),
    case("tf-log-auth-header", "http debug log", """2026-12-02T04:11:09.114Z [DEBUG] provider.terraform-provider-github_v6.2.1: ---[ REQUEST ]---------------------------------------
GET /repos/acme/infra HTTP/1.1
Host: api.github.com
User-Agent: go-github/v57.0.0
Accept: application/vnd.github.v3+json
Authorization: Bearer <<tok>>
Accept-Encoding: gzip
""", tok="ghs" + "_" + rnd("ghs1", 36)),
    case("tfrc-credentials", "terraform cloud token", """$ cat ~/.terraform.d/credentials.tfrc.json
{
  "credentials": {
    "app.terraform.io": {
      "token": "<<tok>>"
    }
  }
}
""", tok=rnd("tfc1", 14) + ".atlasv1." + rnd("tfc2", 67)),
    case("vault-kv-get", "vault secret", """$ vault kv get secret/prod/billing
====== Secret Path ======
secret/data/prod/billing

======= Metadata =======
Key                Value
---                -----
created_time       2026-11-20T10:44:01.221Z
custom_metadata    <nil>
deletion_time      n/a
destroyed          false
version            7

====== Data ======
Key               Value
---               -----
db_password       <<pw>>
stripe_api_key    <<sk>>
username          billing
""", pw=rnd("vkv", 20), sk="rk_" + "live_" + rnd("rkl", 24)),
    case("vault-kv-get-json", "vault secret", """{
  "request_id": "d2b3e0a1-55cc-1e2f-9b9b-4a1a2b3c4d5e",
  "lease_id": "",
  "lease_duration": 0,
  "renewable": false,
  "data": {
    "data": {
      "client_secret": "<<cs>>",
      "webhook_signing_secret": "whsec_<<wh>>"
    },
    "metadata": {
      "created_time": "2026-11-02T08:00:00.000Z",
      "version": 3
    }
  }
}
""", cs=rnd("vjcs", 32), wh=rnd("whsec", 32)),
    case("vault-login", "vault token", """$ vault login -method=oidc role=sre
Success! You are now authenticated. The token information displayed below
is already stored in the token helper. You do NOT need to run "vault login"
again. Future Vault requests will automatically use this token.

Key                  Value
---                  -----
token                <<tok>>
token_accessor       Rk2pQ9sLmN4vX7bZ1cD8fG3h
token_duration       8h
token_renewable      true
token_policies       ["default" "sre"]
""", tok=_HVS),
    case("vault-database-creds", "dynamic credentials", """$ vault read database/creds/readonly
Key                Value
---                -----
lease_id           database/creds/readonly/Xq9aL2mP0sR7tU1vW3yZ5bC4
lease_duration     1h
lease_renewable    true
password           <<pw>>
username           v-oidc-sre-readonly-Qk2Lw9Xp8Zr7-1764648000
""", pw=rnd("vdb", 4, "ABCDEFGHIJKLMNOPQRSTUVWXYZ") + "-" + rnd("vdb2", 16)),
    case("vault-aws-creds", "cloud credentials", """Key                Value
---                -----
lease_id           aws/creds/deploy/3fQwErTyUiOp
lease_duration     15m
lease_renewable    false
access_key         <<ak>>
secret_key         <<sk>>
security_token     <<st>>
""", ak=_ASIA, sk=_ASAK, st=_STS),
    case("vault-operator-init", "unseal keys", """Unseal Key 1: <<k1>>
Unseal Key 2: <<k2>>
Unseal Key 3: <<k3>>

Initial Root Token: <<root>>

Vault initialized with 5 key shares and a key threshold of 3.
""", k1=rnd("unseal1", 44, B64), k2=rnd("unseal2", 44, B64), k3=rnd("unseal3", 44, B64), root="hvs." + rnd("root", 24)),
    case("vault-token-create", "vault token", """Key                  Value
---                  -----
token                hvb.<<tok>>
token_accessor       7QyL2vB9xKmN4pR8sT1uW6zA
token_duration       768h
""", tok=rnd("hvb", 120, URLSAFE)),
    case("aws-sts-assume-role", "cloud credentials", """{
    "Credentials": {
        "AccessKeyId": "<<ak>>",
        "SecretAccessKey": "<<sk>>",
        "SessionToken": "<<st>>",
        "Expiration": "2026-12-02T05:55:12+00:00"
    },
    "AssumedRoleUser": {
        "AssumedRoleId": "AROA3XFRBF535PLBIFPI4:oncall",
        "Arn": "arn:aws:sts::123456789012:assumed-role/OnCall/oncall"
    }
}
""", ak=_ASIA, sk=rnd("stssk", 40, B64), st=rnd("ststok", 356, B64)),
    case("aws-credentials-file", "cloud credentials", """$ cat ~/.aws/credentials
[default]
aws_access_key_id = <<ak>>
aws_secret_access_key = <<sk>>

[prod-admin]
aws_access_key_id=AKIAZZZZEXAMPLE2ABCD
aws_secret_access_key=<<sk2>>
region=eu-west-1
""", ak=_AKID, sk=_ASAK, sk2=rnd("awssk2", 40, B64)),
    case("aws-secretsmanager", "secret manager value", """{
    "ARN": "arn:aws:secretsmanager:eu-west-1:123456789012:secret:prod/orders/db-AbCdEf",
    "Name": "prod/orders/db",
    "VersionId": "a1b2c3d4-5678-90ab-cdef-EXAMPLE11111",
    "SecretString": "{\\"username\\":\\"orders\\",\\"password\\":\\"<<pw>>\\",\\"engine\\":\\"postgres\\",\\"host\\":\\"orders.cluster-c1.eu-west-1.rds.amazonaws.com\\",\\"port\\":5432}",
    "VersionStages": [
        "AWSCURRENT"
    ],
    "CreatedDate": "2026-09-12T10:00:00.123000+00:00"
}
""", pw=rnd("asmpw", 30, ALNUM_SYM := "ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz23456789")),
    case("aws-ssm-decrypted", "secret manager value", """{
    "Parameter": {
        "Name": "/prod/api/sendgrid_key",
        "Type": "SecureString",
        "Value": "SG.<<a>>.<<b>>",
        "Version": 4,
        "LastModifiedDate": "2026-10-01T12:00:00.000000+00:00",
        "ARN": "arn:aws:ssm:eu-west-1:123456789012:parameter/prod/api/sendgrid_key",
        "DataType": "text"
    }
}
""", a=rnd("sg1", 22, URLSAFE), b=rnd("sg2", 43, URLSAFE)),
    case("aws-iam-create-access-key", "cloud credentials", """{
    "AccessKey": {
        "UserName": "ci-deployer",
        "AccessKeyId": "<<ak>>",
        "Status": "Active",
        "SecretAccessKey": "<<sk>>",
        "CreateDate": "2026-12-02T04:40:00+00:00"
    }
}
""", ak="AKIA" + rnd("akid2", 16, "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567"), sk=rnd("iamsk", 40, B64)),
    case("aws-ecr-login-password", "registry token", """$ aws ecr get-login-password --region eu-west-1
<<tok>>
""", tok="eyJwYXlsb2FkIjoi" + rnd("ecr", 1200, B64)),
    case("aws-lambda-env", "function environment", """{
    "FunctionName": "thumbnailer",
    "Runtime": "python3.12",
    "Environment": {
        "Variables": {
            "BUCKET": "acme-thumbs",
            "OPENAI_API_KEY": "<<oa>>",
            "SLACK_WEBHOOK_URL": "https://hooks.slack.com/services/T024BE7LD/B07QX9U3P4M/<<wh>>"
        }
    },
    "MemorySize": 512
}
""", oa="sk-" + "proj-" + rnd("oai", 120, URLSAFE), wh=rnd("slackwh", 24)),
    case("aws-ecs-task-env", "name/value environment", """            "environment": [
                {
                    "name": "SPRING_PROFILES_ACTIVE",
                    "value": "prod"
                },
                {
                    "name": "SPRING_DATASOURCE_PASSWORD",
                    "value": "<<pw>>"
                },
                {
                    "name": "MAIL_SMTP_PASS",
                    "value": "<<smtp>>"
                }
            ],
""", pw=rnd("ecsenv", 20), smtp=rnd("ecssmtp", 16)),
    case("gcloud-access-token", "oauth token", """$ gcloud auth print-access-token
ya29.<<tok>>
""", tok=rnd("ya29", 200, URLSAFE)),
    case("gcp-sa-key-json", "service account key", """$ cat sa.json
{
  "type": "service_account",
  "project_id": "acme-prod",
  "private_key_id": "4b20c4ec2dd67c0c3a56d39a03c256a23ec5ec76",
  "private_key": "-----BEGIN PRIVATE KEY-----\\nMIIEvQIBADANBgkqhkiG9w0BAQEFAASCBKcwggSjAgEAAoIBAQ<<k1>>\\n<<k2>>\\n-----END PRIVATE KEY-----\\n",
  "client_email": "deployer@acme-prod.iam.gserviceaccount.com",
  "client_id": "109876543210987654321",
  "auth_uri": "https://accounts.google.com/o/oauth2/auth",
  "token_uri": "https://oauth2.googleapis.com/token"
}
""", k1=rnd("sak1", 14, B64), k2=rnd("sak2", 64, B64)),
    case("gcloud-secrets-access", "secret manager value", """$ gcloud secrets versions access latest --secret=smtp-relay-password --project=acme-prod
<<pw>>
""", pw=rnd("gsm", 18) + "%^"),
    case("gcloud-functions-env", "function environment", """environmentVariables:
  LOG_LEVEL: info
  MAILGUN_API_KEY: key-<<mg>>
  TWILIO_AUTH_TOKEN: <<tw>>
entryPoint: handle
""", mg=rnd("mailgun", 32, HEX), tw=rnd("twilio", 32, HEX)),
    case("gcp-api-key", "api key", """$ gcloud services api-keys get-key-string projects/123/locations/global/keys/abc
keyString: AIza<<k>>
""", k=rnd("aiza", 35, URLSAFE)),
    case("az-storage-keys", "azure storage key", """[
  {
    "creationTime": "2026-01-04T10:01:12.000000+00:00",
    "keyName": "key1",
    "permissions": "FULL",
    "value": "<<k1>>"
  },
  {
    "creationTime": "2026-01-04T10:01:12.000000+00:00",
    "keyName": "key2",
    "permissions": "FULL",
    "value": "<<k2>>"
  }
]
""", k1=_AZKEY, k2=_AZKEY2),
    case("az-connection-string", "azure storage key", """{
  "connectionString": "DefaultEndpointsProtocol=https;EndpointSuffix=core.windows.net;AccountName=acmelogs;AccountKey=<<k>>;BlobEndpoint=https://acmelogs.blob.core.windows.net/"
}
""", k=rnd("azconn", 86, B64) + "=="),
    case("az-sas-url", "azure sas", """Uploading to https://acmebackups.blob.core.windows.net/pg/2026-12-02.dump?sv=2022-11-02&ss=b&srt=co&sp=rwdlaciytfx&se=2026-12-03T04:00:00Z&st=2026-12-02T04:00:00Z&spr=https&sig=<<sig>>
100.0 %, 1832 Done, 0 Failed, 0 Pending, 0 Skipped, 1832 Total
""", sig=_SIG.replace("+", "%2B").replace("/", "%2F").replace("=", "%3D")),
    case("az-sp-create", "service principal", """{
  "appId": "5a1b2c3d-4e5f-6789-abcd-ef0123456789",
  "displayName": "github-deployer",
  "password": "<<pw>>",
  "tenant": "72f988bf-86f1-41af-91ab-2d7cd011db47"
}
""", pw=rnd("azsp1", 3) + "8Q~" + rnd("azsp2", 34, URLSAFE)),
    case("az-keyvault-secret", "secret manager value", """{
  "attributes": {
    "enabled": true,
    "recoveryLevel": "Recoverable+Purgeable"
  },
  "contentType": null,
  "id": "https://acme-kv.vault.azure.net/secrets/redis-password/0f9e8d7c6b5a4f3e2d1c0b9a8f7e6d5c",
  "name": "redis-password",
  "value": "<<v>>"
}
""", v=rnd("kvsec", 44, B64)),
    case("az-acr-credential", "registry password", """{
  "passwords": [
    {
      "name": "password",
      "value": "<<p1>>"
    },
    {
      "name": "password2",
      "value": "<<p2>>"
    }
  ],
  "username": "acmeregistry"
}
""", p1=rnd("acr1", 52), p2=rnd("acr2", 52)),
    case("az-servicebus-conn", "shared access key", """Endpoint=sb://acme-events.servicebus.windows.net/;SharedAccessKeyName=RootManageSharedAccessKey;SharedAccessKey=<<k>>
""", k=rnd("sbkey", 43, B64) + "="),
    case("az-cosmos-conn", "azure account key", """  "primaryMasterKey": "<<k>>",
  "documentEndpoint": "https://acme-cosmos.documents.azure.com:443/",
""", k=rnd("cosmos", 86, B64) + "=="),
    case("doppler-secrets-table", "secret manager value", """┌────────────────────┬──────────────────────────────────────────────────┐
│ NAME               │ VALUE                                            │
├────────────────────┼──────────────────────────────────────────────────┤
│ DOPPLER_CONFIG     │ prd                                              │
│ DOPPLER_PROJECT    │ api                                              │
│ POSTMARK_TOKEN     │ <<pm>>             │
│ SESSION_SECRET     │ <<ss>>                 │
└────────────────────┴──────────────────────────────────────────────────┘
""", pm=rnd("postmark", 8, HEX) + "-" + rnd("pm2", 4, HEX) + "-" + rnd("pm3", 4, HEX) + "-" + rnd("pm4", 4, HEX) + "-" + rnd("pm5", 12, HEX), ss=rnd("sess", 32)),
    case("doppler-download-env", "dotenv", """$ doppler secrets download --no-file --format env
ALGOLIA_ADMIN_KEY="<<al>>"
DOPPLER_CONFIG="prd"
DOPPLER_ENVIRONMENT="prd"
PUSHER_SECRET="<<pu>>"
""", al=rnd("algolia", 32, HEX), pu=rnd("pusher", 20, HEX)),
    case("doppler-service-token", "service token", """export DOPPLER_TOKEN=dp.st.prd.<<t>>
""", t=rnd("dpst", 43)),
    case("op-item-get-password", "password manager value", """$ op item get "Prod DB" --fields label=password --reveal
<<pw>>
""", pw=rnd("op1", 20, "ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz23456789") + "-x"),
    case("op-item-get-json", "password manager value", """{
  "id": "q3lq2y5nbv4ho6cvmbzx7jrsim",
  "title": "Mailgun",
  "fields": [
    {
      "id": "username",
      "type": "STRING",
      "purpose": "USERNAME",
      "label": "username",
      "value": "postmaster@mg.acme.io"
    },
    {
      "id": "password",
      "type": "CONCEALED",
      "purpose": "PASSWORD",
      "label": "password",
      "value": "<<pw>>"
    }
  ]
}
""", pw=rnd("opjson", 24)),
    case("op-read", "password manager value", """$ op read "op://Infra/Cloudflare/credential"
<<tok>>
""", tok=rnd("opread", 40, URLSAFE)),
    case("consul-acl-token-create", "consul token", """AccessorID:       b5d0a4c2-7e1f-4a3b-9c8d-2e6f1a0b3c4d
SecretID:         <<sid>>
Description:      ci deploy token
Local:            false
Create Time:      2026-12-02 04:31:10.123 +0000 UTC
Policies:
   9f1e2d3c-4b5a-6978-8a9b-0c1d2e3f4a5b - deploy
""", sid="3e1f7c2a-9b4d-4e8f-a6c1-" + rnd("consulsid", 12, HEX)),
    case("consul-kv-get", "printed password", """$ consul kv get config/billing/db_password
<<pw>>
""", pw=rnd("consulkv", 18)),
    case("consul-keygen", "gossip key", """$ consul keygen
<<k>>
""", k=rnd("gossip", 43, B64) + "="),
    case("nomad-acl-bootstrap", "nomad token", """Accessor ID  = 1c2d3e4f-5a6b-7c8d-9e0f-a1b2c3d4e5f6
Secret ID    = <<sid>>
Name         = Bootstrap Token
Type         = management
Global       = true
Create Time  = 2026-12-02 04:32:01.010 +0000 UTC
Expiry Time  = <none>
""", sid="0a9b8c7d-6e5f-4a3b-8c2d-" + rnd("nomadsid", 12, HEX)),
    case("nomad-var-get", "nomad variable", """Namespace   = default
Path        = nomad/jobs/web
Create Time = 2026-11-30T12:00:00Z

Items
db_pass  = <<pw>>
db_user  = web
""", pw=rnd("nomadvar", 18)),
    case("nomad-job-template", "job spec", """      template {
        data        = <<EOT
DB_URL=mysql://web:<<pw>>@mysql.service.consul:3306/web
EOT
        destination = "secrets/file.env"
        env         = true
      }
""", pw=rnd("nomadtpl", 16)),
]
