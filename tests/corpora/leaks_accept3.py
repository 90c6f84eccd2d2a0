# ruff: noqa: E501  (a corpus of output lines as tools print them; splitting them would hide their shape)
"""The third fresh-context acceptance check's secret corpus (issue #11, `accept3`): output as cloud CLIs, kubectl,
helm, terraform, ansible, CI logs, docker, database clients, env dumps, config files, debug logs and stack traces
print it, each secret a random value (``tests/corpora/accept3_values.py``). Written without reading the
project's other corpora. ``Leak.secrets`` holds the sensitive part of each value (a vendor token's random part
after its public prefix, a JWT's payload and signature, a PEM key's body)."""

from __future__ import annotations

import re

from tests.corpora.accept3_values import (
    BECH32,
    alnum,
    b64,
    b64_of,
    b64url,
    hexs,
    human_password,
    jwt,
    lower_alnum,
    password,
    pem_body,
    pick,
    reseed,
    upper_alnum,
    uuid4,
)
from tests.corpora.leak_case import Leak

CASES: list[Leak] = []
reseed()


def case(family: str, text: str, *secrets: str) -> None:
    assert secrets and all(s in text for s in secrets), family
    CASES.append(Leak(family, text, tuple(secrets)))


# --- AWS -------------------------------------------------------------------------------------------------------
ak, sk, st = "ASIA" + upper_alnum(16), alnum(40), "IQoJb3JpZ2luX2VjE" + b64(300).replace("\n", "")
case("aws-sts-assume-role-json", f"""{{
    "Credentials": {{
        "AccessKeyId": "{ak}",
        "SecretAccessKey": "{sk}",
        "SessionToken": "{st}",
        "Expiration": "2026-12-02T03:14:07+00:00"
    }},
    "AssumedRoleUser": {{
        "AssumedRoleId": "AROA3XFRBF23KQ4EXAMP:oncall",
        "Arn": "arn:aws:sts::481516234200:assumed-role/OnCall/oncall"
    }}
}}""", sk, st)
ak2, sk2 = "AKIA" + upper_alnum(16), alnum(40)
case("aws-iam-create-access-key", f"""{{
    "AccessKey": {{
        "UserName": "ci-deployer",
        "AccessKeyId": "{ak2}",
        "Status": "Active",
        "SecretAccessKey": "{sk2}",
        "CreateDate": "2026-12-02T01:02:03+00:00"
    }}
}}""", sk2)
sk3 = alnum(40)
case("aws-credentials-file", f"""$ cat ~/.aws/credentials
[default]
aws_access_key_id = AKIA{upper_alnum(16)}
aws_secret_access_key = {sk3}
region = eu-west-1
""", sk3)
sk4, st4 = alnum(40), "FwoGZXIvYXdzE" + b64(220)
case("aws-export-credentials-env", f"""export AWS_ACCESS_KEY_ID=ASIA{upper_alnum(16)}
export AWS_SECRET_ACCESS_KEY={sk4}
export AWS_SESSION_TOKEN={st4}
export AWS_CREDENTIAL_EXPIRATION=2026-12-02T04:00:00+00:00""", sk4, st4)
pw5 = password(24, "!#%^*-_+=.")
case("aws-secretsmanager-secretstring", f"""{{
    "ARN": "arn:aws:secretsmanager:us-east-1:481516234200:secret:prod/orders/db-Xk3v9Q",
    "Name": "prod/orders/db",
    "VersionId": "{uuid4()}",
    "SecretString": "{{\\"username\\":\\"orders_app\\",\\"password\\":\\"{pw5}\\",\\"engine\\":\\"postgres\\",\\"host\\":\\"orders.cluster-c9x.us-east-1.rds.amazonaws.com\\",\\"port\\":5432}}",
    "VersionStages": [
        "AWSCURRENT"
    ],
    "CreatedDate": "2026-11-30T09:12:44.518000+00:00"
}}""", pw5)
pw6 = password(18)
case("aws-ssm-get-parameter-securestring", f"""{{
    "Parameter": {{
        "Name": "/prod/payments/db_password",
        "Type": "SecureString",
        "Value": "{pw6}",
        "Version": 7,
        "LastModifiedDate": "2026-11-28T16:40:01.204000+00:00",
        "ARN": "arn:aws:ssm:eu-central-1:481516234200:parameter/prod/payments/db_password",
        "DataType": "text"
    }}
}}""", pw6)
pw7, tok7 = password(22), "sk_live_" + alnum(99)
case("aws-lambda-environment", f"""{{
    "FunctionName": "invoice-mailer",
    "Runtime": "python3.12",
    "Environment": {{
        "Variables": {{
            "LOG_LEVEL": "info",
            "DB_PASSWORD": "{pw7}",
            "STRIPE_API_KEY": "{tok7}",
            "QUEUE_URL": "https://sqs.eu-west-1.amazonaws.com/481516234200/invoices"
        }}
    }},
    "MemorySize": 512
}}""", pw7, tok7[8:])
pw8 = password(20)
case("aws-ecs-task-definition-env", f"""            "environment": [
                {{
                    "name": "SPRING_PROFILES_ACTIVE",
                    "value": "prod"
                }},
                {{
                    "name": "SPRING_DATASOURCE_PASSWORD",
                    "value": "{pw8}"
                }}
            ],""", pw8)
pw9 = human_password()
case("aws-rds-create-echo", f"""+ aws rds create-db-instance --db-instance-identifier reports --engine postgres --master-username reports_admin --master-user-password '{pw9}' --allocated-storage 50
{{
    "DBInstance": {{
        "DBInstanceIdentifier": "reports",
        "DBInstanceStatus": "creating"
    }}
}}""", pw9)
ecr = "eyJwYXlsb2FkIjoi" + b64(600)
case("aws-ecr-login-password-echoed", f"""$ aws ecr get-login-password --region eu-west-1
{ecr}
""", ecr[16:])
# --- Azure -----------------------------------------------------------------------------------------------------
k10a, k10b = b64(64), b64(64)
case("az-storage-keys-list", f"""[
  {{
    "creationTime": "2026-10-01T08:11:43.119853+00:00",
    "keyName": "key1",
    "permissions": "FULL",
    "value": "{k10a}"
  }},
  {{
    "creationTime": "2026-10-01T08:11:43.119853+00:00",
    "keyName": "key2",
    "permissions": "FULL",
    "value": "{k10b}"
  }}
]""", k10a, k10b)
k11 = b64(64)
case("az-storage-connection-string", f"""{{
  "connectionString": "DefaultEndpointsProtocol=https;EndpointSuffix=core.windows.net;AccountName=stprodlogs01;AccountKey={k11};BlobEndpoint=https://stprodlogs01.blob.core.windows.net/"
}}""", k11)
pw12 = alnum(3) + "8Q~" + alnum(30) + "_" + alnum(3)
case("az-ad-sp-create-for-rbac", f"""Creating 'Contributor' role assignment under scope '/subscriptions/{uuid4()}'
The output includes credentials that you must protect. Be sure that you do not include these credentials in your code or check the credentials into your source control. For more information, see https://aka.ms/azadsp-cli
{{
  "appId": "{uuid4()}",
  "displayName": "gh-actions-deployer",
  "password": "{pw12}",
  "tenant": "{uuid4()}"
}}""", pw12)
sig13 = b64(32).replace("+", "%2B").replace("/", "%2F").replace("=", "%3D")
case("az-sas-url", f"""Uploading to https://stprodlogs01.blob.core.windows.net/exports/2026-12-01.csv.gz?sv=2022-11-02&ss=b&srt=co&sp=rwlac&se=2026-12-03T00:00:00Z&st=2026-12-01T00:00:00Z&spr=https&sig={sig13}
100.0 %, 42 Done, 0 Failed, 0 Pending, 0 Skipped, 42 Total""", sig13)
v14 = password(32, "-_.~")
case("az-keyvault-secret-show", f"""{{
  "attributes": {{
    "enabled": true,
    "recoveryLevel": "Recoverable+Purgeable"
  }},
  "contentType": null,
  "id": "https://kv-prod-weu.vault.azure.net/secrets/orders-db-password/3c1b0e9d8f7a4b2c9e1d0f6a5b4c3d2e",
  "name": "orders-db-password",
  "tags": {{}},
  "value": "{v14}"
}}""", v14)
at15, _ = jwt('{"aud":"https://management.core.windows.net/","iss":"https://sts.windows.net/' + uuid4() + '/","oid":"' + uuid4() + '"}')
case("az-account-get-access-token", f"""{{
  "accessToken": "{at15}",
  "expiresOn": "2026-12-02 02:51:07.000000",
  "expires_on": 1795920667,
  "subscription": "{uuid4()}",
  "tenant": "{uuid4()}",
  "tokenType": "Bearer"
}}""", at15.split(".", 1)[1])
# --- GCP -------------------------------------------------------------------------------------------------------
pk16 = pem_body(1190)
case("gcp-service-account-key", f"""{{
  "type": "service_account",
  "project_id": "acme-prod-4821",
  "private_key_id": "{hexs(40)}",
  "private_key": "-----BEGIN PRIVATE KEY-----\\n{pk16.replace(chr(10), chr(92) + 'n')}\\n-----END PRIVATE KEY-----\\n",
  "client_email": "deployer@acme-prod-4821.iam.gserviceaccount.com",
  "client_id": "10947{''.join(str(i % 10) for i in range(16))}",
  "token_uri": "https://oauth2.googleapis.com/token"
}}""", pk16.split("\n")[3], pk16.split("\n")[10])
ya17 = "ya29.a0AfB_by" + b64url(120)
case("gcloud-print-access-token-echoed", f"""$ gcloud auth print-access-token
{ya17}""", ya17[13:])
aiza = "AIzaSy" + b64url(25)[:33]
case("gcp-api-key-in-url", f"""DEBUG: GET https://maps.googleapis.com/maps/api/geocode/json?address=1600+Amphitheatre&key={aiza} -> 200 (143 ms)""", aiza[6:])
pw19 = password(16)
case("gcloud-sql-users-create", f"""+ gcloud sql users create reporting --instance=pg-prod-1 --password={pw19}
Creating Cloud SQL user...done.
Created user [reporting].""", pw19)
# --- other clouds ----------------------------------------------------------------------------------------------
do20 = "dop_v1_" + hexs(64)
case("digitalocean-token-env", f"""DIGITALOCEAN_ACCESS_TOKEN={do20}
DO_REGION=fra1""", do20[7:])
pw21, sk21 = password(20), hexs(128)
case("heroku-config", f"""=== acme-api Config Vars
DATABASE_URL:        postgres://u3kd9af0s1:{pw21}@ec2-54-73-12-88.eu-west-1.compute.amazonaws.com:5432/d8s7f6g5h4
LOG_LEVEL:           info
SECRET_KEY_BASE:     {sk21}
WEB_CONCURRENCY:     4""", pw21, sk21)
hk22 = uuid4()
case("heroku-netrc", f"""machine api.heroku.com
  login ops@acme.example
  password {hk22}
machine git.heroku.com
  login ops@acme.example
  password {hk22}""", hk22)
# --- Kubernetes ------------------------------------------------------------------------------------------------
pw23, user23 = password(24), "orders_app"
case("kubectl-get-secret-yaml", f"""apiVersion: v1
data:
  password: {b64_of(pw23)}
  username: {b64_of(user23)}
kind: Secret
metadata:
  creationTimestamp: "2026-11-29T10:22:31Z"
  name: orders-db
  namespace: orders
  resourceVersion: "88123401"
  uid: {uuid4()}
type: Opaque""", b64_of(pw23))
tok24 = alnum(48)
case("kubectl-get-secret-json", f"""{{
    "apiVersion": "v1",
    "data": {{
        "api-token": "{b64_of(tok24)}",
        "endpoint": "{b64_of('https://api.partner.example/v2')}"
    }},
    "kind": "Secret",
    "metadata": {{
        "name": "partner-api",
        "namespace": "billing"
    }},
    "type": "Opaque"
}}""", b64_of(tok24))
pw25 = password(20)
case("kubectl-dry-run-stringdata", f"""apiVersion: v1
kind: Secret
metadata:
  name: grafana-admin
  namespace: monitoring
stringData:
  admin-user: admin
  admin-password: {pw25}
type: Opaque""", pw25)
pw26 = human_password()
case("kubectl-jsonpath-base64-d", f"""$ kubectl -n orders get secret orders-db -o jsonpath='{{.data.password}}' | base64 -d
{pw26}""", pw26)
pw27 = password(18)
case("kubectl-configmap-database-url", f"""apiVersion: v1
data:
  DATABASE_URL: postgresql://reports:{pw27}@pg-reports.db.svc.cluster.local:5432/reports?sslmode=require
  LOG_FORMAT: json
kind: ConfigMap
metadata:
  name: reports-env""", pw27)
pw28, tok28 = password(16), alnum(40)
case("kubectl-describe-pod-env", f"""Containers:
  api:
    Image:          registry.acme.example/orders/api:1.42.0
    Port:           8080/TCP
    Environment:
      DB_HOST:       pg-orders.db.svc
      DB_PASSWORD:   {pw28}
      PARTNER_TOKEN: {tok28}
      POD_NAME:      orders-api-7c9f8d6b5-x2kqp (v1:metadata.name)
    Mounts:
      /var/run/secrets/kubernetes.io/serviceaccount from kube-api-access-7xk2p (ro)""", pw28, tok28)
pw29 = password(22)
case("kubectl-get-pod-yaml-env", f"""    env:
    - name: POSTGRES_USER
      value: keycloak
    - name: KC_DB_PASSWORD
      value: {pw29}
    - name: KC_HOSTNAME
      value: sso.acme.example""", pw29)
pw30, pw30b = password(20), password(20)
case("helm-get-values", f"""USER-SUPPLIED VALUES:
auth:
  database: app
  postgresPassword: {pw30}
  replicationPassword: {pw30b}
  username: app
primary:
  persistence:
    size: 50Gi""", pw30, pw30b)
pw31 = password(18)
case("helm-set-in-ci-log", f"""+ helm upgrade --install orders ./charts/orders --namespace orders --set image.tag=1.42.0 --set postgresql.auth.password={pw31} --wait --timeout 10m
Release "orders" has been upgraded. Happy Helming!""", pw31)
dc32 = b64_of('{"auths":{"registry.acme.example":{"username":"robot$ci","password":"' + (p32 := alnum(32)) + '","auth":"' + b64_of("robot$ci:" + p32) + '"}}}')
case("kubectl-dockerconfigjson", f"""apiVersion: v1
data:
  .dockerconfigjson: {dc32}
kind: Secret
metadata:
  name: regcred
type: kubernetes.io/dockerconfigjson""", dc32)
ck33 = b64_of("-----BEGIN RSA PRIVATE KEY-----\n" + pem_body(900) + "\n-----END RSA PRIVATE KEY-----\n")
t33, _ = jwt('{"iss":"kubernetes/serviceaccount","sub":"system:serviceaccount:ci:deployer"}')
case("kubeconfig-raw", f"""apiVersion: v1
clusters:
- cluster:
    certificate-authority-data: {b64_of('-----BEGIN CERTIFICATE-----' + chr(10) + 'MIIB')}
    server: https://10.20.0.1:6443
  name: prod
users:
- name: admin
  user:
    client-certificate-data: {b64_of('-----BEGIN CERTIFICATE-----' + chr(10) + 'MIIC')}
    client-key-data: {ck33}
- name: ci-deployer
  user:
    token: {t33}""", ck33[40:120], t33.split(".", 1)[1])
sat34, _ = jwt('{"iss":"kubernetes/serviceaccount","kubernetes.io/serviceaccount/namespace":"ci"}')
case("kubectl-sa-token-secret", f"""Name:         deployer-token
Namespace:    ci
Type:  kubernetes.io/service-account-token

Data
====
ca.crt:     1099 bytes
namespace:  2 bytes
token:      {sat34}""", sat34.split(".", 1)[1])
pw35 = password(20)
case("kubectl-create-secret-echoed", f"""$ kubectl create secret generic smtp --from-literal=username=mailer --from-literal=password='{pw35}' -n notify
secret/smtp created""", pw35)
pw36 = alnum(16)
case("argocd-initial-password", f"""$ argocd admin initial-password -n argocd
{pw36}

 This password must be only used for first time login. We strongly recommend you update the password using `argocd account update-password`.""", pw36)
kt37 = lower_alnum(6) + "." + lower_alnum(16)
case("kubeadm-join", f"""Then you can join any number of worker nodes by running the following on each as root:

kubeadm join 10.20.0.10:6443 --token {kt37} \\
	--discovery-token-ca-cert-hash sha256:{hexs(64)}""", kt37[7:])
sw38 = "SWMTKN-1-" + lower_alnum(50) + "-" + lower_alnum(25)
case("docker-swarm-join-token", f"""To add a worker to this swarm, run the following command:

    docker swarm join --token {sw38} 10.0.4.11:2377
""", sw38[9:])
k3s39 = "K10" + hexs(64) + "::server:" + hexs(32)
case("k3s-node-token", f"""$ sudo cat /var/lib/rancher/k3s/server/node-token
{k3s39}""", k3s39[3:40], k3s39[-32:])
# --- Terraform -------------------------------------------------------------------------------------------------
pw40 = password(24)
case("terraform-output-json-sensitive", f"""{{
  "db_endpoint": {{
    "sensitive": false,
    "type": "string",
    "value": "orders.cluster-c9x.eu-west-1.rds.amazonaws.com"
  }},
  "db_master_password": {{
    "sensitive": true,
    "type": "string",
    "value": "{pw40}"
  }}
}}""", pw40)
pw41 = password(20)
case("terraform-show-json-state", f"""{{"format_version":"1.0","values":{{"root_module":{{"resources":[{{"address":"aws_db_instance.orders","mode":"managed","type":"aws_db_instance","name":"orders","values":{{"allocated_storage":100,"engine":"postgres","password":"{pw41}","username":"orders_admin"}}}}]}}}}}}""", pw41)
pw42 = password(20)
case("terraform-tfvars", f"""$ cat prod.auto.tfvars
region          = "eu-west-1"
instance_class  = "db.r6g.large"
db_password     = "{pw42}"
""", pw42)
pw43 = password(16)
case("tf-var-env-in-ci", f"""Run export TF_VAR_db_admin_password={pw43}
Initializing the backend...""", pw43)
tfc44 = alnum(14) + ".atlasv1." + alnum(67)
case("terraform-credentials-tfrc", f"""{{
  "credentials": {{
    "app.terraform.io": {{
      "token": "{tfc44}"
    }}
  }}
}}""", tfc44[:14], tfc44[23:])
pw45a, pw45b = password(16), password(16)
case("terraform-plan-nonsensitive-provider", f"""  # grafana_data_source.prometheus will be updated in-place
  ~ resource "grafana_data_source" "prometheus" {{
      ~ basic_auth_password = "{pw45a}" -> "{pw45b}"
        id                  = "12"
        name                = "Prometheus"
    }}""", pw45a, pw45b)
k46 = hexs(64)
case("terraform-debug-log-header", f"""2026-12-02T01:12:09.512Z [DEBUG] provider.terraform-provider-datadog: HTTP Request: GET /api/v1/validate HTTP/1.1
Host: api.datadoghq.eu
Dd-Api-Key: {hexs(32)}
Dd-Application-Key: {k46[:40]}
User-Agent: terraform-provider-datadog/3.46.0""", k46[:40])
# --- Ansible ---------------------------------------------------------------------------------------------------
pw47 = password(20)
case("ansible-vvv-module-args", f"""ok: [db01.prod] => {{
    "changed": false,
    "invocation": {{
        "module_args": {{
            "db": "orders",
            "login_host": "localhost",
            "login_password": "{pw47}",
            "login_user": "postgres",
            "name": "orders_app",
            "state": "present"
        }}
    }}
}}""", pw47)
pw48 = password(18)
case("ansible-vault-view", f"""$ ansible-vault view group_vars/prod/vault.yml
---
vault_orders_db_password: "{pw48}"
vault_smtp_relay_user: notify@acme.example""", pw48)
pw49 = human_password()
case("ansible-inventory-become-pass", f"""[web]
web01.prod ansible_host=10.0.3.21 ansible_user=deploy ansible_become_pass={pw49}
web02.prod ansible_host=10.0.3.22 ansible_user=deploy""", pw49)
pw50 = password(14)
case("ansible-debug-var", f"""TASK [debug] ******************************************************************
ok: [app01] => {{
    "redis_password": "{pw50}"
}}""", pw50)
# --- CI logs ---------------------------------------------------------------------------------------------------
gh51 = "ghp_" + alnum(36)
case("git-remote-v-token", f"""origin	https://ci-bot:{gh51}@github.com/acme/orders.git (fetch)
origin	https://ci-bot:{gh51}@github.com/acme/orders.git (push)""", gh51[4:])
gl52 = "glpat-" + b64url(15)[:20]
case("git-clone-oauth2", f"""+ git clone https://oauth2:{gl52}@gitlab.acme.example/platform/terraform-live.git
Cloning into 'terraform-live'...""", gl52[6:])
ghs53 = "ghs_" + alnum(36)
case("gh-actions-x-access-token", f"""[command]/usr/bin/git config --local http.https://github.com/.extraheader AUTHORIZATION: basic {b64_of('x-access-token:' + ghs53)}
[command]/usr/bin/git -c protocol.version=2 fetch --no-tags https://x-access-token:{ghs53}@github.com/acme/web""", ghs53[4:], b64_of('x-access-token:' + ghs53)[20:])
gh54 = "github_pat_" + alnum(22) + "_" + alnum(59)
case("github-fine-grained-pat-env", f"""GH_TOKEN={gh54}""", gh54[11:])
gho55 = "gho_" + alnum(36)
case("gh-auth-status-t", f"""github.com
  ✓ Logged in to github.com account oncall-bot (keyring)
  - Active account: true
  - Git operations protocol: https
  - Token: {gho55}
  - Token scopes: 'gist', 'read:org', 'repo', 'workflow'""", gho55[4:])
rt56 = "glrt-" + b64url(15)[:20]
case("gitlab-runner-config-toml", f"""[[runners]]
  name = "k8s-runner-01"
  url = "https://gitlab.acme.example/"
  id = 118
  token = "{rt56}"
  token_obtained_at = 2026-10-02T08:11:00Z
  executor = "kubernetes\"""", rt56[5:])
jt57 = alnum(20)
case("set-x-trace-export", f"""+ export DEPLOY_ENV=prod
+ export JENKINS_API_TOKEN={hexs(34)}
+ export RELEASE_SIGNING_PASSPHRASE={jt57}
+ ./release.sh""", jt57)
bt58 = alnum(64)
case("set-x-curl-bearer", f"""+ curl -sS -X POST -H 'Authorization: Bearer {bt58}' -H 'Content-Type: application/json' https://deploy.acme.example/api/v1/releases -d @release.json
{{"id":4411,"status":"queued"}}""", bt58)
npm59 = "npm_" + alnum(36)
case("npm-config-authtoken", f"""; "user" config from /home/ci/.npmrc

//registry.npmjs.org/:_authToken = (protected)
//npm.acme.example/:_authToken={npm59}
registry = "https://registry.npmjs.org/\"""", npm59[4:])
npa60 = b64_of("ci-publisher:" + (p60 := password(18, "!#%*-_.")))
case("npmrc-auth", f"""$ cat .npmrc
registry=https://nexus.acme.example/repository/npm-group/
_auth={npa60}
always-auth=true""", npa60)
pw61 = password(20, "-_.~")
case("pip-config-index-url", f"""$ pip config list
global.index-url='https://pypi-reader:{pw61}@nexus.acme.example/repository/pypi-all/simple'
global.timeout='60'""", pw61)
pypi62 = "pypi-AgEIcHlwaS5vcmc" + b64url(120)
case("pypirc", f"""[distutils]
index-servers = pypi

[pypi]
username = __token__
password = {pypi62}""", pypi62[20:])
pw63 = password(16, "!#%^*-_+=")
case("maven-settings-xml", f"""    <server>
      <id>acme-releases</id>
      <username>deployer</username>
      <password>{pw63}</password>
    </server>""", pw63)
pw64 = password(16)
case("gradle-properties", f"""org.gradle.jvmargs=-Xmx2g
nexusUsername=gradle-ci
nexusPassword={pw64}
signing.keyId=24875D73
signing.password={(sp64 := password(14))}""", pw64, sp64)
pw65 = password(20, "!#%*-_.")
case("nuget-config", f"""    <packageSourceCredentials>
      <AcmeFeed>
        <add key="Username" value="az-devops" />
        <add key="ClearTextPassword" value="{pw65}" />
      </AcmeFeed>
    </packageSourceCredentials>""", pw65)
dauth66 = b64_of("ci$robot:" + (p66 := alnum(32)))
case("docker-config-json", f"""$ cat ~/.docker/config.json
{{
	"auths": {{
		"harbor.acme.example": {{
			"auth": "{dauth66}"
		}}
	}},
	"credsStore": ""
}}""", dauth66)
# --- Docker ----------------------------------------------------------------------------------------------------
pw67, key67 = password(20), alnum(32)
case("docker-inspect-env", f"""        "Env": [
            "POSTGRES_PASSWORD={pw67}",
            "APP_SECRET={key67}",
            "PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
            "PG_MAJOR=16"
        ],""", pw67, key67)
pw68 = password(20)
case("docker-compose-config", f"""services:
  mariadb:
    environment:
      MARIADB_DATABASE: wiki
      MARIADB_ROOT_PASSWORD: {pw68}
      MARIADB_USER: wiki
    image: mariadb:11.4""", pw68)
pw69 = password(18)
case("ps-docker-run-e", f"""root      41235  0.2  0.1 1340212 48120 ?  Sl   01:02   0:03 /usr/bin/docker run -d --name minio -e MINIO_ROOT_USER=admin -e MINIO_ROOT_PASSWORD={pw69} -p 9000:9000 minio/minio server /data""", pw69)
k70 = alnum(32)
case("docker-history-no-trunc", f"""IMAGE          CREATED        CREATED BY                                                                                      SIZE
<missing>      3 days ago     /bin/sh -c #(nop)  ENV SENTRY_AUTH_TOKEN={k70}                                       0B
<missing>      3 days ago     /bin/sh -c #(nop) WORKDIR /app                                                                  0B""", k70)
# --- databases -------------------------------------------------------------------------------------------------
pw71 = password(18, "!#%^*-_+=.")
case("ps-mysql-p", f"""mysql    22801  0.0  0.0  21332  9912 pts/1    S+   01:21   0:00 mysql -h db-primary -u root -p{pw71} orders""", pw71)
pw72 = password(20)
case("redis-cli-config-get-requirepass", f"""127.0.0.1:6379> CONFIG GET requirepass
1) "requirepass"
2) "{pw72}"
127.0.0.1:6379> CONFIG GET maxmemory
1) "maxmemory"
2) "4294967296\"""", pw72)
pw73 = password(20, "-_.~")
case("mongodb-srv-uri", f"""Current Mongosh Log ID:	6750f0c8a1b2c3d4e5f60718
Connecting to:		mongodb+srv://<credentials>@cluster0.k3xq9.mongodb.net/?appName=mongosh+2.3.3
MONGODB_URI=mongodb+srv://reporting:{pw73}@cluster0.k3xq9.mongodb.net/analytics?retryWrites=true&w=majority""", pw73)
pw74 = password(18, "!#%^*-_+=.")
case("postgres-log-alter-role", f"""2026-12-02 01:14:22.481 UTC [918231] postgres@orders LOG:  statement: ALTER ROLE orders_app WITH LOGIN PASSWORD '{pw74}';""", pw74)
pw75 = password(16)
case("jdbc-url-password-param", f"""HikariPool-1 - Starting...
jdbcUrl=jdbc:postgresql://pg-orders:5432/orders?user=orders_app&password={pw75}&ssl=true""", pw75)
pw76 = password(16, "!#%^*-_+.")
case("jdbc-sqlserver", f"""spring.datasource.url=jdbc:sqlserver://sql-prod.acme.example:1433;databaseName=Billing;user=billing_app;password={pw76};encrypt=true;trustServerCertificate=false""", pw76)
pw77 = password(18, "!#%^*-_+.")
case("ado-net-appsettings", f"""  "ConnectionStrings": {{
    "Default": "Server=tcp:sql-prod.database.windows.net,1433;Initial Catalog=Billing;Persist Security Info=False;User ID=billing;Password={pw77};MultipleActiveResultSets=False;Encrypt=True;"
  }},""", pw77)
pw78 = password(14, "!#%^*-_+.")
case("odbc-connection-string", f"""DSN-less: DRIVER={{ODBC Driver 18 for SQL Server}};SERVER=10.4.2.9;DATABASE=erp;UID=erp_reader;PWD={pw78};TrustServerCertificate=yes""", pw78)
pw79 = password(14, "#%^*-_+")
case("ps-sqlplus", f"""oracle    7733  0.0  0.3  sqlplus -S system/{pw79}@//ora-prod.acme.example:1521/ORCLPDB1 @/tmp/check.sql""", pw79)
pw80 = password(24, "-_.~")
case("redis-url-empty-user", f"""celery beat v5.4.0 (opalescent) is starting.
REDIS_URL=redis://:{pw80}@redis-master.cache.svc:6379/2""", pw80)
pw81 = password(18, "-_.~")
case("amqp-url", f"""[2026-12-02 01:22:31,004: ERROR/MainProcess] consumer: Cannot connect to amqp://orders:{pw81}@rabbitmq.mq.svc:5672/orders: [Errno 111] Connection refused.""", pw81)
pw82 = password(20, "!#%^*-_+.")
case("kafka-jaas-config", f"""sasl.mechanism=SCRAM-SHA-512
security.protocol=SASL_SSL
sasl.jaas.config=org.apache.kafka.common.security.scram.ScramLoginModule required username="ingest" password="{pw82}";""", pw82)
pw83 = alnum(20)
case("elasticsearch-reset-password", f"""$ bin/elasticsearch-reset-password -u elastic
This tool will reset the password of the [elastic] user to an autogenerated value.
The password will be printed in the console.
Please confirm that you would like to continue [y/N]y


Password for the [elastic] user successfully reset.
New value: {pw83}""", pw83)
pw84 = password(16)
case("clickhouse-users-xml", f"""        <analytics>
            <password>{pw84}</password>
            <networks><ip>::/0</ip></networks>
            <profile>default</profile>
        </analytics>""", pw84)
pw85 = password(18, "!#%^*-_+=")
case("postgresql-conf-primary-conninfo", f"""primary_conninfo = 'host=10.0.5.11 port=5432 user=replicator password={pw85} sslmode=verify-full application_name=pg-replica-2'""", pw85)
pw86 = password(16, "#%^*-_+=")
case("libpq-dsn-in-log", f"""level=error msg="ping failed" dsn="host=pg-billing dbname=billing user=billing_app password={pw86} sslmode=require connect_timeout=5" err="dial tcp 10.0.5.12:5432: i/o timeout\"""", pw86)
pw87 = password(16)
case("pgpass", f"""$ cat ~/.pgpass
pg-orders.db.svc:5432:orders:orders_app:{pw87}
pg-reports.db.svc:5432:*:reporting:{(pw87b := password(16))}""", pw87, pw87b)
pw88 = password(18, "!#%^*-_+=")
case("redis-conf-requirepass", f"""# Require clients to issue AUTH <PASSWORD> before processing any other commands.
requirepass {pw88}
masterauth {pw88}
maxmemory-policy allkeys-lru""", pw88)
pw89 = password(18, "!#%^*-_+=")
case("redis-acl-setuser", f"""127.0.0.1:6379> ACL SETUSER reporting on >{pw89} ~reports:* +@read
OK""", pw89)
pw90 = password(16)
case("cqlsh-history", f"""$ history | tail -3
  511  nodetool status
  512  cqlsh -u cassandra -p {pw90} 10.0.7.4
  513  exit""", pw90)
ldap91 = b64_of("{SSHA}" + b64(24))
case("ldapsearch-userpassword", f"""dn: uid=svc-backup,ou=services,dc=acme,dc=example
objectClass: inetOrgPerson
uid: svc-backup
userPassword:: {ldap91}""", ldap91)
pw92 = password(18)
case("ps-ldapsearch-w", f"""ldapsearch -x -H ldaps://ldap.acme.example -D cn=admin,dc=acme,dc=example -w {pw92} -b ou=people,dc=acme,dc=example uid=jdoe""", pw92)
pw93 = password(20, "!#%^*-_+=.")
case("mysqldump-cron", f"""0 3 * * * /usr/bin/mysqldump --single-transaction --user=backup --password={pw93} --all-databases | gzip > /backup/all.sql.gz""", pw93)
# --- env dumps -------------------------------------------------------------------------------------------------
vals94 = {
    "STRIPE_SECRET_KEY": "sk_live_" + alnum(99),
    "SENDGRID_API_KEY": "SG." + b64url(16)[:22] + "." + b64url(32)[:43],
    "DJANGO_SECRET_KEY": password(50, "!#%^*-_+=(@)&$"),
    "JWT_SECRET": hexs(64),
    "SESSION_SECRET": alnum(40),
    "RAILS_MASTER_KEY": hexs(32),
    "NEXTAUTH_SECRET": b64(32),
    "OAUTH_CLIENT_SECRET": alnum(40),
    "WEBHOOK_SIGNING_SECRET": "whsec_" + b64(24),
    "PGPASSWORD": password(20),
    "SMTP_PASS": password(16),
    "VAULT_TOKEN": "hvs." + b64url(72)[:91],
    "CONSUL_HTTP_TOKEN": uuid4(),
    "DD_API_KEY": hexs(32),
    "NEW_RELIC_LICENSE_KEY": hexs(36) + "NRAL",
    "TWILIO_AUTH_TOKEN": hexs(32),
    "OPENAI_API_KEY": "sk-proj-" + b64url(120)[:156],
    "ANTHROPIC_API_KEY": "sk-ant-api03-" + b64url(70)[:93] + "-" + b64url(6)[:6] + "AA",
    "HF_TOKEN": "hf_" + alnum(34),
    "CLOUDFLARE_API_TOKEN": b64url(30)[:40],
}
env94 = "\n".join(["HOSTNAME=orders-api-7c9f8d6b5-x2kqp", "HOME=/home/app", "LANG=C.UTF-8"]
                  + [f"{k}={v}" for k, v in vals94.items()] + ["SHLVL=1", "_=/usr/bin/env"])


def _sens(v: str) -> str:
    for prefix in ("sk_live_", "SG.", "whsec_", "hvs.", "sk-proj-", "sk-ant-api03-", "hf_"):
        if v.startswith(prefix):
            return v[len(prefix):]
    return v


case("env-dump-many", env94, *[_sens(v) for v in vals94.values()])
odd = {
    "DB_PW": password(16), "LDAP_BIND_CREDENTIAL": password(18), "GPG_PASSPHRASE": human_password(),
    "KEYCLOAK_ADMIN_PASSWORD": password(16), "GF_SECURITY_ADMIN_PASSWORD": password(14),
    "MINIO_SECRET_KEY": alnum(40), "RABBITMQ_DEFAULT_PASS": password(18), "APP_KEYS": ",".join(b64(16) for _ in range(4)),
    "ADMIN_JWT_SECRET": b64(16), "MASTER_KEY": alnum(32), "HMAC_KEY": hexs(64), "COOKIE_SECRET": alnum(32),
    "PRIVATE_KEY_PASSPHRASE": password(20), "MYSQL_PWD": password(16), "REDIS_AUTH": alnum(32),
    "AUTH0_CLIENT_SECRET": b64url(48)[:64], "SIGNING_KEY": b64(32), "ENCRYPTION_KEY": b64(32),
}
case("env-dump-unusual-names", "\n".join(f"{k}={v}" for k, v in odd.items()), *odd.values())
pw96 = password(18)
case("systemctl-show-environment", f"""Environment=LOG_LEVEL=info DB_PASSWORD={pw96} PORT=8080""", pw96)
pw97 = password(20)
case("proc-environ-nul", f"""$ sudo cat /proc/22817/environ
PATH=/usr/local/bin:/usr/bin\x00HOME=/var/lib/orders\x00DB_PASSWORD={pw97}\x00LANG=C.UTF-8\x00""", pw97)
pw98 = password(20)
case("spring-actuator-env-old", f"""{{"activeProfiles":["prod"],"propertySources":[{{"name":"applicationConfig: [classpath:/application-prod.yml]","properties":{{"spring.datasource.url":{{"value":"jdbc:postgresql://pg:5432/shop"}},"spring.datasource.password":{{"value":"{pw98}"}}}}}}]}}""", pw98)
pw99 = password(20)
case("application-properties", f"""server.port=8080
spring.datasource.username=shop
spring.datasource.password={pw99}
spring.jpa.open-in-view=false""", pw99)
pw100 = password(20)
case("application-yml", f"""spring:
  datasource:
    url: jdbc:postgresql://pg:5432/shop
    username: shop
    password: "{pw100}"
  jpa:
    hibernate:
      ddl-auto: validate""", pw100)
pw101 = password(20)
case("dotenv-export-quotes", f"""# production
export NODE_ENV=production
export DATABASE_PASSWORD='{pw101}'
export PORT=3000""", pw101)
wpk = password(64, "!#%^*-_+=(@)&$[]{}<>|:;,.?~")
pw102 = password(18, "!#%^*-_+=")
case("wp-config", f"""define( 'DB_NAME', 'wordpress' );
define( 'DB_USER', 'wp_prod' );
define( 'DB_PASSWORD', '{pw102}' );
define( 'DB_HOST', 'mysql.internal' );
define( 'AUTH_KEY',         '{wpk}' );""", pw102, wpk)
dj103 = "django-insecure-" + password(50, "!#%^*-_+=(@)&$")
case("django-settings", f"""DEBUG = False
ALLOWED_HOSTS = ["shop.acme.example"]
SECRET_KEY = '{dj103}'
""", dj103[16:])
ak104 = "base64:" + b64(32)
case("laravel-env", f"""APP_NAME=Shop
APP_ENV=production
APP_KEY={ak104}
APP_DEBUG=false""", ak104[7:])
pw105 = password(18)
case("rails-database-yml", f"""production:
  adapter: postgresql
  database: shop_production
  username: shop
  password: <%= ENV.fetch("DB_PASSWORD") {{ "{pw105}" }} %>""", pw105)
ba106 = b64_of("metrics:" + (p106 := password(16)))
case("nginx-proxy-authorization-header", f"""    location /metrics {{
        proxy_set_header Authorization "Basic {ba106}";
        proxy_pass http://127.0.0.1:9100;
    }}""", ba106)
pw107 = password(16)
case("haproxy-stats-auth", f"""listen stats
    bind :8404
    stats enable
    stats uri /stats
    stats auth admin:{pw107}""", pw107)
pw108 = password(16)
case("pgbouncer-userlist", f""""orders_app" "{pw108}"
"reporting" "SCRAM-SHA-256$4096:{b64(16)}${b64(32)}:{b64(32)}\"""", pw108)
gh109 = "ghp_" + alnum(36)
case("netrc-github", f"""machine github.com
login ci-bot
password {gh109}""", gh109[4:])
gt110 = "glpat-" + b64url(15)[:20]
case("git-credentials", f"""$ cat ~/.git-credentials
https://deploy:{gt110}@gitlab.acme.example""", gt110[6:])
psk111 = password(16, "!#%*-_.")
case("wpa-supplicant", f"""network={{
	ssid="acme-lab"
	psk="{psk111}"
	key_mgmt=WPA-PSK
}}""", psk111)
pw112 = password(16, "!#%^*-_+.")
case("fstab-cifs-password", f"""//nas01.acme.example/backups /mnt/backups cifs username=svc-backup,password={pw112},uid=1000,vers=3.0 0 0""", pw112)
pw113, bt113 = password(18), alnum(40)
case("prometheus-basic-auth", f"""scrape_configs:
  - job_name: federate
    basic_auth:
      username: prometheus
      password: {pw113}
  - job_name: partner
    bearer_token: {bt113}""", pw113, bt113)
hook114 = f"T{upper_alnum(8)}/B{upper_alnum(10)}/{alnum(24)}"
pw114 = password(16)
case("alertmanager-config", f"""global:
  slack_api_url: https://hooks.slack.com/services/{hook114}
  smtp_auth_username: alerts@acme.example
  smtp_auth_password: {pw114}""", hook114.split("/")[-1], pw114)
pw115, sk115 = password(16), alnum(20)
case("grafana-ini", f"""[security]
admin_user = admin
admin_password = {pw115}
secret_key = {sk115}""", pw115, sk115)
ht116 = "$apr1$" + alnum(8) + "$" + b64url(16)[:22]
case("traefik-basic-auth-htpasswd", f"""      middlewares:
        dashboard-auth:
          basicAuth:
            users:
              - "admin:{ht116}\"""", ht116[6:])
unseal = [b64(33) for _ in range(5)]
root117 = "hvs." + b64url(20)[:24]
case("vault-operator-init", "\n".join(f"Unseal Key {i + 1}: {u}" for i, u in enumerate(unseal))
     + f"""

Initial Root Token: {root117}

Vault initialized with 5 key shares and a key threshold of 3.""", *unseal, root117[4:])
vt118 = "hvs.CAESI" + b64url(80)[:90]
case("vault-token-create", f"""Key                  Value
---                  -----
token                {vt118}
token_accessor       {alnum(24)}
token_duration       768h
token_renewable      true
token_policies       ["default" "deployer"]""", vt118[9:])
pw119 = password(20)
case("vault-kv-get", f"""====== Secret Path ======
secret/data/orders/db

======= Metadata =======
Key                Value
---                -----
created_time       2026-11-29T10:22:31.118Z
version            4

====== Data ======
Key         Value
---         -----
password    {pw119}
username    orders_app""", pw119)
pw120 = "A1a-" + alnum(16)
case("vault-database-creds", f"""Key                Value
---                -----
lease_id           database/creds/readonly/{alnum(24)}
lease_duration     1h
lease_renewable    true
password           {pw120}
username           v-token-readonly-{alnum(20)}-1764638531""", pw120)
sid121 = uuid4()
case("vault-approle-secret-id", f"""Key                   Value
---                   -----
secret_id             {sid121}
secret_id_accessor    {uuid4()}
secret_id_num_uses    0
secret_id_ttl         0s""", sid121)
sid122 = uuid4()
case("consul-acl-bootstrap", f"""AccessorID:       {uuid4()}
SecretID:         {sid122}
Description:      Bootstrap Token (Global Management)
Local:            false
Create Time:      2026-12-02 01:00:12.481 +0000 UTC""", sid122)
pw123 = password(16)
case("ps-etcdctl-user", f"""etcdctl --endpoints=https://10.0.1.5:2379 --user root:{pw123} get /registry --prefix --keys-only""", pw123)
# --- JWT, OAuth, PEM -------------------------------------------------------------------------------------------
j124, t124 = jwt('{"sub":"' + uuid4() + '","role":"admin","exp":1795920000}')
case("jwt-in-access-log", f"""10.0.3.4 - - [02/Dec/2026:01:10:11 +0000] "GET /api/v1/orders?page=2 HTTP/1.1" 200 1543 "-" "python-requests/2.32.3" auth="Bearer {j124}\"""", t124)
at125, rt125 = alnum(40), b64url(48)
id125, idt125 = jwt('{"iss":"https://sso.acme.example/realms/ops","email":"jdoe@acme.example"}')
case("oauth-token-response", f"""{{"access_token":"{at125}","token_type":"Bearer","expires_in":3600,"refresh_token":"{rt125}","scope":"openid email","id_token":"{id125}"}}""", at125, rt125, idt125)
rsa126 = pem_body(1190)
case("pem-rsa-private-key", f"""$ cat deploy_key
-----BEGIN RSA PRIVATE KEY-----
{rsa126}
-----END RSA PRIVATE KEY-----""", *rsa126.split("\n")[1:-1:4])
ec127 = pem_body(121)
case("pem-ec-private-key", f"""-----BEGIN EC PRIVATE KEY-----
{ec127}
-----END EC PRIVATE KEY-----""", *ec127.split("\n"))
ossh128 = pem_body(400)
case("openssh-private-key", f"""-----BEGIN OPENSSH PRIVATE KEY-----
b3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQAAAAAAAAABAAAAMwAAAAtzc2gtZW
{ossh128}
-----END OPENSSH PRIVATE KEY-----""", *ossh128.split("\n")[1:-1])
enc129 = pem_body(1250)
case("pem-encrypted-pkcs8", f"""-----BEGIN ENCRYPTED PRIVATE KEY-----
{enc129}
-----END ENCRYPTED PRIVATE KEY-----""", *enc129.split("\n")[2:-1:5])
pgp130 = pem_body(900)
case("pgp-private-key-block", f"""-----BEGIN PGP PRIVATE KEY BLOCK-----

{pgp130}
={b64(3)}
-----END PGP PRIVATE KEY BLOCK-----""", *pgp130.split("\n")[1:-1:3])
tls131 = pem_body(1190)
case("cert-manager-stringdata-tls-key", "stringData:\n  tls.crt: |\n    -----BEGIN CERTIFICATE-----\n    MIIDdzCCAl+gAwIBAgIUY\n    -----END CERTIFICATE-----\n  tls.key: |\n    -----BEGIN PRIVATE KEY-----\n"
     + "\n".join("    " + line for line in tls131.split("\n")) + "\n    -----END PRIVATE KEY-----",
     *tls131.split("\n")[1:-1:4])
hv132 = pem_body(1190)
case("helm-values-pem-indented", "ingress:\n  tls:\n    key: |-\n      -----BEGIN RSA PRIVATE KEY-----\n"
     + "\n".join("      " + line for line in hv132.split("\n")) + "\n      -----END RSA PRIVATE KEY-----\n    enabled: true",
     *hv132.split("\n")[2:-1:4])
tf133 = pem_body(1190)
case("terraform-output-tls-private-key", f"""{{
  "ssh_private_key": {{
    "sensitive": true,
    "type": "string",
    "value": "-----BEGIN RSA PRIVATE KEY-----\\n{tf133.replace(chr(10), chr(92) + 'n')}\\n-----END RSA PRIVATE KEY-----\\n"
  }}
}}""", *tf133.split("\n")[3:-1:5])
age134 = "AGE-SECRET-KEY-1" + pick(BECH32, 58).upper()
case("age-secret-key", f"""# created: 2026-11-20T10:11:12Z
# public key: age1{pick(BECH32, 58)}
{age134}""", age134[16:])
wg135, psk135 = b64(32), b64(32)
case("wg-showconf", f"""[Interface]
ListenPort = 51820
PrivateKey = {wg135}

[Peer]
PublicKey = {b64(32)}
PresharedKey = {psk135}
AllowedIPs = 10.99.0.2/32""", wg135, psk135)
# --- vendor tokens ---------------------------------------------------------------------------------------------
xb136 = f"xoxb-{''.join(str(d) for d in range(10, 23))}-{''.join(str(d) for d in range(30, 43))}-{alnum(24)}"
case("slack-bot-token-in-log", f"""WARNING slack_bolt.App: Failed to post (token={xb136}): ratelimited""", xb136.split("-")[-1])
xa137 = f"xapp-1-A0{upper_alnum(9)}-{''.join(str(d % 10) for d in range(13))}-{hexs(64)}"
case("slack-app-token-yaml", f"""slack:
  app_token: {xa137}
  signing_secret: {(ss137 := hexs(32))}""", xa137[-64:], ss137)
rk138 = "rk_live_" + alnum(99)
case("stripe-restricted-key", f"""stripe listen --api-key {rk138} --forward-to localhost:3000/webhooks""", rk138[8:])
ws139 = "whsec_" + alnum(32)
case("stripe-listen-webhook-secret", f"""> Ready! You are using Stripe API Version [2024-06-20]. Your webhook signing secret is {ws139} (^C to quit)""", ws139[6:])
sh140 = "shpat_" + hexs(32)
case("shopify-token-header", f"""> X-Shopify-Access-Token: {sh140}
> Content-Type: application/json""", sh140[6:])
at141 = "ATATT3xFfGF0" + b64url(150)[:180] + "=" + hexs(8).upper()
case("atlassian-api-token", f"""JIRA_API_TOKEN={at141}
JIRA_USER=ops-bot@acme.example""", at141[12:])
pm142 = "PMAK-" + hexs(24) + "-" + hexs(34)
case("postman-api-key", f"""newman run collection.json --env-var "postman_api_key={pm142}\"""", pm142[5:])
dsc143 = f"M{alnum(23)}.{alnum(6)}.{b64url(30)[:38]}"
case("discord-bot-token", f"""DISCORD_TOKEN: "{dsc143}\"""", dsc143[1:])
tg144 = f"{''.join(str((i * 7) % 10) for i in range(10))}:AA{b64url(28)[:33]}"
case("telegram-bot-token-url", f"""POST https://api.telegram.org/bot{tg144}/sendMessage 200 OK""", tg144[11:])
mc145 = hexs(32) + "-us21"
case("mailchimp-api-key", f"""mailchimp:
  api_key: {mc145}
  list_id: 5a4b3c2d1e""", mc145[:32])
lin146 = "lin_api_" + alnum(40)
case("linear-api-key", f"""LINEAR_API_KEY={lin146}""", lin146[8:])
glc147 = "glc_" + b64(120).replace("+", "").replace("/", "")
case("grafana-cloud-token", f"""grafana_cloud_access_policy_token = "{glc147}\"""", glc147[4:])
pul148 = "pul-" + hexs(40)
case("pulumi-access-token", f"""PULUMI_ACCESS_TOKEN={pul148}""", pul148[4:])
dapi149 = "dapi" + hexs(32)
case("databricks-cfg", f"""[DEFAULT]
host  = https://adb-4821516234200.4.azuredatabricks.net
token = {dapi149}""", dapi149[4:])
r8_150 = "r8_" + alnum(37)
case("replicate-token-curl-v", f"""> POST /v1/predictions HTTP/2
> Host: api.replicate.com
> authorization: Bearer {r8_150}
> content-type: application/json""", r8_150[3:])
mb151 = "sk.eyJ1IjoiYWNtZSIsImEiOiJ" + b64url(20)[:20] + "." + b64url(16)[:22]
case("mapbox-secret-token", f"""MAPBOX_DOWNLOADS_TOKEN={mb151}""", mb151[27:])
fcm152 = "AAAA" + b64url(5)[:7] + ":APA91b" + b64url(110)[:134]
case("firebase-server-key-header", f"""Authorization: key={fcm152}""", fcm152[4:11], fcm152[18:])
okta153 = "00" + b64url(30)[:40]
case("okta-ssws-header", f"""DEBUG okta.http: GET /api/v1/users?limit=200 headers={{'Authorization': 'SSWS {okta153}', 'Accept': 'application/json'}}""", okta153[2:])
nr154 = "NRAK-" + upper_alnum(27)
case("newrelic-user-key", f"""{{"headers": {{"API-Key": "{nr154}"}}, "query": "{{ actor {{ user {{ name }} }} }}"}}""", nr154[5:])
sn155 = "sntrys_" + b64url(130)[:170]
case("sentry-auth-token", f"""[auth]
token={sn155}""", sn155[7:])
dh157 = "https://discord.com/api/webhooks/" + "".join(str(i % 10) for i in range(19)) + "/" + b64url(51)[:68]
case("discord-webhook-url", f"""notify:
  discord_webhook: {dh157}""", dh157[-68:])
tw158 = hexs(32)
case("twilio-account-table", f"""ACCOUNT SID                          AUTH TOKEN                        FRIENDLY NAME
AC{hexs(32)}  {tw158}  acme-prod""", tw158)
fig159 = "figd_" + b64url(30)[:40]
case("figma-token", f"""export FIGMA_TOKEN="{fig159}\"""", fig159[5:])
dp160 = "dp.st.prd." + alnum(43)
case("doppler-service-token", f"""DOPPLER_TOKEN={dp160}""", dp160[10:])
# --- URLs with user-info, HTTP debug headers -------------------------------------------------------------------
pw161 = password(16, "!#%^*-_+=.")
ba161 = b64_of("admin:" + pw161)
case("curl-v-basic-from-url", f"""*   Trying 10.0.9.3:3000...
* Connected to grafana.internal (10.0.9.3) port 3000
* Server auth using Basic with user 'admin'
> GET /api/health HTTP/1.1
> Host: grafana.internal:3000
> Authorization: Basic {ba161}
> User-Agent: curl/8.5.0""", ba161)
pw162 = password(14, "-_.~")
case("ftp-url", f"""wget ftp://mirror:{pw162}@ftp.partner.example/outgoing/feed-20261201.csv
--2026-12-02 01:11:02--  ftp://mirror:*password*@ftp.partner.example/outgoing/feed-20261201.csv""", pw162)
pw163 = password(16, "-_.~")
case("smtp-url", f"""EMAIL_URL=smtp+tls://postmaster%40mg.acme.example:{pw163}@smtp.mailgun.org:587""", pw163)
pwe164 = password(8, "-_") + "%40" + password(6, "-_") + "%2F" + password(4, "-_")
case("url-percent-encoded-password", f"""2026-12-02T01:02:03Z INFO connecting upstream=https://sync:{pwe164}@sync.partner.example/v1/feed""", pwe164)
pw165 = password(16, "-_.~")
case("https-proxy-env", f"""HTTPS_PROXY=http://svc-proxy:{pw165}@proxy.corp.acme.example:3128
NO_PROXY=localhost,127.0.0.1,.svc,.cluster.local""", pw165)
ba166 = b64_of("etl:" + (p166 := password(18, "!#%*-_.")))
case("python-requests-http-client-debug", f"""send: b'GET /api/v2/export HTTP/1.1\\r\\nHost: warehouse.internal\\r\\nUser-Agent: python-requests/2.32.3\\r\\nAuthorization: Basic {ba166}\\r\\nConnection: keep-alive\\r\\n\\r\\n'
reply: 'HTTP/1.1 200 OK\\r\\n'""", ba166)
ck167a, ck167b = b64url(32), hexs(40)
case("curl-v-cookies", f"""> GET /admin/ HTTP/1.1
> Host: jenkins.internal
> Cookie: JSESSIONID.4a1b2c3d={ck167a}; remember-me={ck167b}
< HTTP/1.1 200 OK
< Set-Cookie: JSESSIONID.4a1b2c3d={(ck167c := b64url(32))}; Path=/; HttpOnly""", ck167a, ck167b, ck167c)
xk168 = alnum(32)
case("x-api-key-header", f"""DEBUG:urllib3.connectionpool:Starting new HTTPS connection (1): api.vendor.example:443
DEBUG:httpx:request headers: {{'host': 'api.vendor.example', 'x-api-key': '{xk168}', 'accept': '*/*'}}""", xk168)
vt169 = "hvs." + b64url(72)[:91]
case("x-vault-token-header", f"""[DEBUG] GET https://vault.internal:8200/v1/secret/data/app headers: X-Vault-Token: {vt169}""", vt169[4:])
gl170 = "glpat-" + b64url(15)[:20]
case("gitlab-private-token-header", f"""curl --header "PRIVATE-TOKEN: {gl170}" "https://gitlab.acme.example/api/v4/projects/118/pipelines?status=failed\"""", gl170[6:])
st171 = "IQoJb3JpZ2luX2VjE" + b64(400)
case("aws-sigv4-debug", f"""2026-12-02 01:15:41,114 - MainThread - botocore.endpoint - DEBUG - Sending http request: <AWSPreparedRequest stream_output=False, method=POST, url=https://sts.amazonaws.com/, headers={{'X-Amz-Date': b'20261202T011541Z', 'X-Amz-Security-Token': b'{st171}', 'Authorization': b'AWS4-HMAC-SHA256 Credential=ASIA{upper_alnum(16)}/20261202/us-east-1/sts/aws4_request, SignedHeaders=host;x-amz-date;x-amz-security-token, Signature={hexs(64)}'}}>""", st171[17:])
st172 = "IQoJb3JpZ2luX2VjE" + b64(300)
enc172 = st172.replace("+", "%2B").replace("/", "%2F").replace("=", "%3D")
case("s3-presigned-url", f"""https://acme-exports.s3.eu-west-1.amazonaws.com/reports/2026-12.csv?X-Amz-Algorithm=AWS4-HMAC-SHA256&X-Amz-Credential=ASIA{upper_alnum(16)}%2F20261202%2Feu-west-1%2Fs3%2Faws4_request&X-Amz-Date=20261202T012000Z&X-Amz-Expires=3600&X-Amz-Security-Token={enc172}&X-Amz-SignedHeaders=host&X-Amz-Signature={hexs(64)}""", enc172[17:80])
ak173 = "AIzaSy" + b64url(25)[:33]
case("x-goog-api-key", f"""> x-goog-api-key: {ak173}""", ak173[6:])
pa174 = b64_of("svc-crawler:" + (p174 := password(16, "!#%*-_.")))
case("proxy-authorization", f"""> CONNECT api.partner.example:443 HTTP/1.1
> Proxy-Authorization: Basic {pa174}""", pa174)
smtp175 = b64_of("\x00alerts@acme.example\x00" + (p175 := password(16, "!#%*-_.")))
case("smtp-auth-plain-trace", f"""<- 250-AUTH PLAIN LOGIN
-> AUTH PLAIN {smtp175}
<- 235 2.7.0 Authentication successful""", smtp175)
pw176 = password(12, "!#%*-_.")
case("ftp-pass-tcpdump", f"""01:22:41.118203 IP 10.0.8.4.50122 > 10.0.8.9.21: Flags [P.], length 16: FTP: USER mirror
01:22:41.120991 IP 10.0.8.4.50122 > 10.0.8.9.21: Flags [P.], length 18: FTP: PASS {pw176}""", pw176)
jt177 = hexs(48)
case("jupyter-token-url", f"""[I 2026-12-02 01:30:12.441 ServerApp] Jupyter Server 2.14.2 is running at:
[I 2026-12-02 01:30:12.441 ServerApp] http://nb-7f8c9:8888/lab?token={jt177}
[I 2026-12-02 01:30:12.441 ServerApp]     http://127.0.0.1:8888/lab?token={jt177}""", jt177)
at178 = alnum(32)
case("nginx-access-log-access-token", f"""203.0.113.9 - - [02/Dec/2026:01:31:02 +0000] "GET /v1/export?format=csv&access_token={at178}&page=3 HTTP/1.1" 200 88123 "-" "curl/8.5.0\"""", at178)
pw179 = password(14, "!*-_.~")
case("form-post-body-log", f"""DEBUG request body: username=jdoe&password={pw179}&remember=1&csrfmiddlewaretoken={(cs179 := alnum(64))}""", pw179, cs179)
# --- stack traces, debug dumps ---------------------------------------------------------------------------------
pw180 = password(18)
case("python-traceback-locals", f"""Traceback (most recent call last):
  File "/app/orders/db.py", line 42, in connect
    return psycopg.connect(dsn)
           ^^^^^^^^^^^^^^^^^^^^
    dsn = 'postgresql://orders_app:{pw180}@pg-orders:5432/orders'
psycopg.OperationalError: connection failed: Connection refused""", pw180)
pw181 = password(18, "!#%^*-_+=.")
case("node-config-object", f"""Error: connect ECONNREFUSED 10.0.5.12:3306
    at TCPConnectWrap.afterConnect [as oncomplete] (node:net:1607:16) {{
  errno: -111,
  code: 'ECONNREFUSED',
  config: {{ host: 'mysql-billing', user: 'billing', password: '{pw181}', database: 'billing', connectTimeout: 10000 }}
}}""", pw181)
pw182 = password(16, "!#%^*-_+.")
case("go-struct-plus-v", f"""2026/12/02 01:33:10 loaded config: {{Listen::8080 DB:{{Host:pg-orders Port:5432 User:orders_app Password:{pw182} Name:orders SSLMode:require}} Debug:false}}""", pw182)
pw183 = password(16)
case("ruby-inspect", f"""#<Redis client v5.2.0 for redis://redis-cache:6379/0> {{:host=>"redis-cache", :port=>6379, :password=>"{pw183}", :db=>0}}""", pw183)
pw184 = password(16)
case("rust-debug-struct", f"""thread 'main' panicked at src/main.rs:48:10:
failed to connect: DbConfig {{ host: "pg-ledger", port: 5432, user: "ledger", password: "{pw184}", dbname: "ledger" }}""", pw184)
pw185 = password(18)
case("python-repr-settings", f"""INFO settings loaded: Settings(environment='prod', database_url='postgresql://ledger@pg-ledger/ledger', database_password='{pw185}', debug=False)""", pw185)
pw186 = password(15, "!#%^*-_+.")
case("php-pdo-stack-args", f"""PHP Fatal error:  Uncaught PDOException: SQLSTATE[HY000] [2002] Connection refused in /var/www/html/lib/db.php:12
Stack trace:
#0 /var/www/html/lib/db.php(12): PDO->__construct('mysql:host=db;d...', 'shop', '{pw186}')
#1 {{main}}""", pw186)
pw187 = password(18)
case("java-hikari-properties", f"""2026-12-02 01:34:00.102 DEBUG 1 --- [main] com.zaxxer.hikari.HikariConfig : dataSourceProperties............{{password={pw187}, user=shop}}""", pw187)
pw188 = password(18)
case("journalctl-app-password", f"""Dec 02 01:35:12 app-01 orders[2231]: time=2026-12-02T01:35:12Z level=debug msg="dialing db" user=orders_app password={pw188} host=pg-orders""", pw188)
pw189 = password(16)
case("grep-r-password-etc", f"""$ sudo grep -rn password /etc/orders/
/etc/orders/config.ini:14:password = {pw189}
/etc/orders/config.ini:15:# password_min_length = 12""", pw189)
old190, new190 = password(16), password(16)
case("git-log-p-diff", f"""commit {hexs(40)}
Author: Dev <dev@acme.example>

    rotate creds

diff --git a/deploy/.env.prod b/deploy/.env.prod
--- a/deploy/.env.prod
+++ b/deploy/.env.prod
@@ -3,3 +3,3 @@ LOG_LEVEL=info
-REDIS_PASSWORD={old190}
+REDIS_PASSWORD={new190}
 PORT=8080""", old190, new190)
pw191 = password(18)
case("sops-decrypt", f"""$ sops -d secrets/prod.enc.yaml
orders:
  db_password: {pw191}
  feature_flags: on""", pw191)
pw192 = password(20)
case("op-item-get-fields", f"""$ op item get "Orders DB" --fields label=password --reveal
{pw192}""", pw192)
pw193 = password(16)
case("dotnet-user-secrets", f"""ConnectionStrings:Default = Server=sql-dev;Database=Billing;User Id=billing;Password={pw193};TrustServerCertificate=True
Stripe:ApiKey = sk_test_{(st193 := alnum(99))}""", pw193, st193)
pw194 = password(16, "!#%^*-_+.")
case("powershell-securestring", f"""PS C:\\> $pw = ConvertTo-SecureString "{pw194}" -AsPlainText -Force
PS C:\\> $cred = New-Object System.Management.Automation.PSCredential ("ACME\\svc-sql", $pw)""", pw194)
pw195 = password(16, "!#%^*-_+.")
case("powershell-env", f"""PS C:\\deploy> $env:SQL_SA_PASSWORD = '{pw195}'""", pw195)
pw196 = password(20)
case("airflow-connections-get", f"""id | conn_id      | conn_type | host   | schema | login   | password             | port
===+==============+===========+========+========+=========+======================+=====
7  | warehouse_pg | postgres  | pg-dwh | dwh    | airflow | {pw196} | 5432""", pw196)
pw197 = password(18)
case("sqlalchemy-echo-url", f"""2026-12-02 01:40:11,003 INFO sqlalchemy.engine.Engine create_engine('postgresql+psycopg2://ledger:{pw197}@pg-ledger:5432/ledger', pool_size=10)""", pw197)
tok198 = "pypi-AgEIcHlwaS5vcmc" + b64url(100)
case("pip-extra-index-token-user", f"""+ pip install --extra-index-url https://__token__:{tok198}@pypi.acme.example/simple acme-internal==3.2.1""", tok198[20:])
pw199 = password(18)
case("keystore-password-properties", f"""ssl.keystore.location=/etc/kafka/secrets/broker.keystore.jks
ssl.keystore.password={pw199}
ssl.key.password={(pw199b := password(18))}
ssl.truststore.password={(pw199c := password(18))}""", pw199, pw199b, pw199c)
pw200 = password(18)
case("shadow-line", f"""$ sudo getent shadow deploy
deploy:$6${alnum(16)}${(sh200 := b64(64).replace('+', '.').rstrip('='))}:20058:0:99999:7:::""", sh200)
pw201 = password(16)
case("compose-command-requirepass", f"""  redis:
    image: redis:7.4
    command: redis-server --requirepass {pw201} --appendonly yes""", pw201)
pw202 = password(16)
case("rabbitmqctl-add-user", f"""$ rabbitmqctl add_user orders '{pw202}'
Adding user "orders" ...
Done. Don't forget to grant the user permissions to some virtual hosts! See 'rabbitmqctl help set_permissions' to learn more.""", pw202)
pw203 = password(16)
case("helm-repo-add-echo", f"""+ helm repo add acme https://charts.acme.example --username ci --password {pw203}
"acme" has been added to your repositories""", pw203)
pw204 = password(16)
case("kubectl-create-docker-registry", f"""$ kubectl create secret docker-registry regcred --docker-server=harbor.acme.example --docker-username='robot$ci' --docker-password={pw204} -n orders""", pw204)
vt205 = "hvs." + b64url(20)[:24]
case("vault-login-echo", f"""$ vault login {vt205}
Success! You are now authenticated.""", vt205[4:])
pw206 = password(16)
case("gh-actions-masked-and-not", f"""2026-12-02T01:44:00.1234567Z ##[group]Run ./scripts/migrate.sh
2026-12-02T01:44:00.1234990Z env:
2026-12-02T01:44:00.1235011Z   DB_PASSWORD: ***
2026-12-02T01:44:00.1235050Z   MIGRATE_DSN: postgres://migrator:{pw206}@pg-orders:5432/orders
2026-12-02T01:44:00.1235089Z ##[endgroup]""", pw206)
pw207 = password(16)
case("yaml-anchor-password", f"""defaults: &db
  host: pg-orders
  password: &dbpass {pw207}
production:
  <<: *db""", pw207)
pw208 = password(20)
case("toml-password", f"""[database]
host = "pg-orders"
user = "orders_app"
password = "{pw208}"
pool = 20""", pw208)
pw209 = password(20)
case("ini-pass-equals-no-space", f"""[client]
user=backup
pass={pw209}
host=db-primary""", pw209)
pw210 = password(16)
case("xml-attribute-password", f"""<dataSource name="orders" driver="org.postgresql.Driver" url="jdbc:postgresql://pg:5432/orders" username="orders" password="{pw210}" maxActive="20"/>""", pw210)
pw211 = password(16)
case("json-log-nested-password", f"""{{"ts":"2026-12-02T01:45:01.113Z","level":"debug","msg":"login attempt","req":{{"path":"/api/login","body":{{"username":"jdoe","password":"{pw211}"}}}}}}""", pw211)
key212 = alnum(32)
case("json-log-api-key-camel", f"""{{"level":"info","ts":1795920301.11,"caller":"client/client.go:88","msg":"client configured","apiKey":"{key212}","endpoint":"https://api.vendor.example"}}""", key212)
sec213 = b64url(32)
case("client-secret-cli-flag-log", f"""I1202 01:46:02.118   1 main.go:71] flags: --client-id=oauth2-proxy --client-secret={sec213} --cookie-secure=true --upstream=http://127.0.0.1:8080""", sec213)
ck214 = b64(32)
case("oauth2-proxy-cookie-secret", f"""OAUTH2_PROXY_COOKIE_SECRET={ck214}
OAUTH2_PROXY_EMAIL_DOMAINS=acme.example""", ck214)
pw215 = password(16)
case("mid-line-aligned-password", f"""db-primary   user=orders_app    password={pw215}    status=ok""", pw215)
pw216 = human_password()
case("human-password-yaml", f"""smtp:
  host: smtp.office365.com
  username: alerts@acme.example
  password: {pw216}""", pw216)
pw217 = human_password()
case("human-password-env", f"""ADMIN_PASSWORD={pw217}""", pw217)
pw218 = password(16)
case("crlf-env-file", f"""DB_HOST=pg\r\nDB_PASSWORD={pw218}\r\nDB_PORT=5432\r\n""", pw218)
pw219 = password(16)
case("ansi-colored-password", f"""\x1b[32mINFO\x1b[0m config: \x1b[1mpassword\x1b[0m=\x1b[33m{pw219}\x1b[0m""", pw219)
pw220 = password(18)
case("tab-separated-kv", f"""name\tvalue
username\torders_app
password\t{pw220}""", pw220)

# --- more Kubernetes and Azure forms, Go DSNs, htpasswd -------------------------------------------------------------
pw221a, pw221b = password(20), alnum(40)
case("kubectl-get-secrets-list-yaml", f"""apiVersion: v1
items:
- apiVersion: v1
  data:
    password: {b64_of(pw221a)}
    username: {b64_of("billing")}
  kind: Secret
  metadata:
    name: billing-db
    namespace: billing
  type: Opaque
- apiVersion: v1
  data:
    token: {b64_of(pw221b)}
  kind: Secret
  metadata:
    name: billing-partner
    namespace: billing
  type: Opaque
kind: List
metadata:
  resourceVersion: \"\"""", b64_of(pw221a), b64_of(pw221b))
pw222 = password(20)
case("kubectl-go-template-base64decode", f"""$ kubectl -n billing get secret billing-db -o go-template='{{{{range $k,$v := .data}}}}{{{{$k}}}}={{{{$v|base64decode}}}}{{{{"\\n"}}}}{{{{end}}}}'
password={pw222}
username=billing""", pw222)
tlskey223 = b64_of("-----BEGIN EC PRIVATE KEY-----\n" + pem_body(121) + "\n-----END EC PRIVATE KEY-----\n")
case("kubectl-tls-secret-yaml", f"""apiVersion: v1
data:
  tls.crt: {b64_of("-----BEGIN CERTIFICATE-----" + chr(10) + pem_body(600) + chr(10) + "-----END CERTIFICATE-----" + chr(10))}
  tls.key: {tlskey223}
kind: Secret
metadata:
  name: orders-api-tls
  namespace: orders
type: kubernetes.io/tls""", tlskey223[60:140])
rel224 = b64_of(b64(900))
case("helm-release-secret", f"""apiVersion: v1
data:
  release: {rel224}
kind: Secret
metadata:
  labels:
    name: orders
    owner: helm
    status: deployed
    version: "42"
  name: sh.helm.release.v1.orders.v42
  namespace: orders
type: helm.sh/release.v1""", rel224[100:200])
pw225 = password(18)
case("kubectl-view-secret", f"""$ kubectl view-secret -n billing billing-db password
{pw225}""", pw225)
sak226 = b64(32)
case("azure-servicebus-connection-string", f"""ServiceBusConnection=Endpoint=sb://sb-orders-prod.servicebus.windows.net/;SharedAccessKeyName=RootManageSharedAccessKey;SharedAccessKey={sak226}""", sak226)
ck227 = b64(64)
case("azure-cosmos-connection-string", f"""  "CosmosDb": "AccountEndpoint=https://cosmos-orders.documents.azure.com:443/;AccountKey={ck227};\"""", ck227)
iot228 = b64(32)
case("azure-iot-hub-connection-string", f"""az iot hub connection-string show -n iot-prod
{{
  "connectionString": "HostName=iot-prod.azure-devices.net;SharedAccessKeyName=iothubowner;SharedAccessKey={iot228}"
}}""", iot228)
pw229 = password(16, "!#%^*-_+=.")
case("go-mysql-dsn", f"""2026/12/02 01:50:01 db: opening billing:{pw229}@tcp(mysql-billing.db.svc:3306)/billing?parseTime=true&tls=preferred""", pw229)
bc230 = "$2y$05$" + b64(40).replace("+", ".").rstrip("=")[:53]
case("htpasswd-bcrypt-file", f"""$ cat /etc/nginx/.htpasswd
metrics:{bc230}
admin:$apr1${alnum(8)}${(apr230 := b64url(16)[:22])}""", bc230[7:], apr230)
pw231 = password(16)
case("curl-u-in-history", f"""  601  curl -u deploy:{pw231} https://nexus.acme.example/service/rest/v1/status""", pw231)
pw232 = password(16)
case("dotenv-pass-name", f"""SMTP_HOST=smtp.acme.example
SMTP_USER=alerts
PASS={pw232}""", pw232)
dcfg233 = b64_of("ci:" + alnum(24))
case("docker-config-one-line", f"""{{"auths":{{"registry.acme.example":{{"auth":"{dcfg233}","email":"ci@acme.example"}}}}}}""", dcfg233)
pw234 = password(18)
case("secret-json-stringdata", f"""{{"apiVersion":"v1","kind":"Secret","metadata":{{"name":"mailer"}},"stringData":{{"smtp-password":"{pw234}"}},"type":"Opaque"}}""", pw234)
pw235 = password(16)
case("mysql-p-space-quoted-in-ci", f"""+ mysql --host=db-primary --user=root --password='{pw235}' -e 'SHOW SLAVE STATUS\\G'""", pw235)

# --- value shapes at the edges: blanks, quotes, escapes, digits, non-ASCII --------------------------------------
pp236 = " ".join(w.lower() for w in (human_password()[:6], human_password()[:7], human_password()[:5], alnum(3)))
case("passphrase-with-blanks-yaml", f"""backup:
  repository: s3:s3.eu-west-1.amazonaws.com/acme-backups/restic
  password: "{pp236}"
  keep_daily: 7""", *pp236.split(" ")[:3])
pp237 = " ".join(w.lower() for w in (human_password()[:6], human_password()[:6], human_password()[:6]))
case("passphrase-with-blanks-env", f"""GPG_PASSPHRASE="{pp237}"
GPG_KEY_ID=8F3A2C1B9E7D6F5A""", *pp237.split(" "))
pw238 = alnum(6) + "'" + alnum(8)
case("password-with-single-quote-in-json", f"""{{"db":{{"user":"ledger","password":"{pw238}","host":"pg-ledger"}}}}""", pw238[:6], pw238[7:])
pw239 = alnum(7) + '\\"' + alnum(8)
case("password-with-escaped-quote-in-json", f"""{{"smtp":{{"username":"alerts","password":"{pw239}"}}}}""", pw239[:7], pw239[9:])
pw240 = b64(12)
case("password-base64-equals-end", f"""REPLICATION_PASSWORD={pw240}""", pw240)
pw241 = alnum(6) + "%26" + alnum(6)
case("password-urlencoded-ampersand-query", f"""GET /api/v1/login?user=svc-sync&password={pw241}&next=%2F 200""", pw241[:6], pw241[9:])
pw242 = "-" + password(15)
case("password-starting-with-dash", f"""db:
  password: {pw242}""", pw242)
pin243 = "".join(str((i * 7 + 3) % 10) for i in range(8)) + str(len(CASES) % 10)
case("password-all-digits", f"""voicemail:
  password: {pin243}""", pin243)
pw244 = "pässwört-" + alnum(6) + "-Ünï" + alnum(4)
case("password-non-ascii", f"""ADMIN_PASSWORD={pw244}""", pw244)
pw245a, pw245b = alnum(6), alnum(8)
case("password-split-by-ansi", f"""\x1b[36mDEBUG\x1b[0m password={pw245a}\x1b[0m{pw245b} user=orders_app""", pw245a, pw245b)
pw246 = alnum(5) + "#" + alnum(9)
case("yaml-password-with-hash", f"""ldap:
  bind_dn: cn=svc-sync,ou=services,dc=acme,dc=example
  bind_password: {pw246}""", pw246[:5], pw246[6:])
pw247 = alnum(8) + ";" + alnum(8)
case("env-password-with-semicolon", f"""SFTP_PASSWORD='{pw247}'""", pw247[:8], pw247[9:])

# --- encodings, YAML shapes, argv inside manifests --------------------------------------------------------------
pw248 = password(16, "#%^*-_+=.")
# UTF-16LE as PowerShell writes a file: the secret's characters are NUL-separated in the bytes, joined once the
# NULs are dropped, so the secret listed is the joined one (it is not in the text as is).
CASES.append(Leak("utf16le-env-file", "$ cat .env.prod  # saved by PowerShell\n" + "\x00".join(f"DB_PASSWORD={pw248}\r\n") + "\x00",
                  (pw248, "\x00".join(pw248))))
tok249 = alnum(32)
case("double-encoded-query-token", f"""203.0.113.50 - - [02/Dec/2026:01:55:02 +0000] "GET /login?next=%2Fapi%2Fv1%2Fexport%3Fformat%3Dcsv%26access_token%3D{tok249}%26page%3D1 HTTP/1.1" 302 0 "-" "curl/8.5.0\"""", tok249)
pw250a, pw250b = alnum(7), alnum(8)
case("go-json-escaped-ampersand", f"""{{"level":"debug","msg":"smtp config","host":"smtp.acme.example","user":"alerts","password":"{pw250a}\\u0026{pw250b}"}}""", pw250a, pw250b)
pw251 = password(24)
case("yaml-block-scalar-password", f"""smtp:
  username: alerts
  password: |
    {pw251}
  port: 587""", pw251)
pw252 = password(16)
case("yaml-flow-mapping-password", f"""  - name: create app user
    community.postgresql.postgresql_user: {{name: orders_app, password: {pw252}, db: orders}}""", pw252)
pw253 = password(16)
case("windows-unattend-xml", f"""            <AdministratorPassword>
                <Value>{pw253}</Value>
                <PlainText>true</PlainText>
            </AdministratorPassword>""", pw253)
key254 = alnum(32)
case("nginx-api-key-header", f"""        proxy_set_header X-Api-Key "{key254}";""", key254)
pw255 = password(20)
case("secret-last-applied-annotation", f"""apiVersion: v1
data:
  password: {b64_of(pw255)}
kind: Secret
metadata:
  annotations:
    kubectl.kubernetes.io/last-applied-configuration: |
      {{"apiVersion":"v1","kind":"Secret","metadata":{{"annotations":{{}},"name":"reports-db","namespace":"reports"}},"stringData":{{"password":"{pw255}"}},"type":"Opaque"}}
  name: reports-db
  namespace: reports
type: Opaque""", pw255, b64_of(pw255))
pw256 = password(16)
case("docker-inspect-cmd-array", f"""        "Cmd": [
            "server",
            "--db-user",
            "ledger",
            "--db-password",
            "{pw256}"
        ],""", pw256)
tok257 = alnum(40)
case("pod-args-separate-items", f"""    args:
    - --listen=:8080
    - --api-token
    - {tok257}
    - --log-level=info""", tok257)
tok258 = alnum(40)
case("systemd-execstart-token", f"""ExecStart=/usr/local/bin/node_exporter --web.listen-address=:9100 --collector.textfile.directory=/var/lib/node_exporter
ExecStart=/usr/local/bin/cloudflared tunnel run --token {tok258}""", tok258)
pw259 = password(16)
case("ps-password-space", f"""app       9912  0.1  0.4 /usr/bin/java -jar /opt/reports/reports.jar --spring.datasource.username=reports --password {pw259}""", pw259)
tok260 = alnum(32)
case("kubectl-describe-args", f"""    Args:
      --upstream=http://127.0.0.1:8080
      --cookie-secret={tok260}
      --email-domain=acme.example""", tok260)

LEAKS_ACCEPT3: tuple[Leak, ...] = tuple(CASES)

_MARKER = re.compile(r"\[REDACTED:[^\]\s]*\]")


def shown_part(secret: str, original: str, output: str, width: int = 6) -> str | None:
    """The first ``width`` characters of ``secret`` that ``output`` shows and that appear nowhere else in
    ``original`` (so a shared prefix or a word beside the secret is no leak), None if there are none; markers are
    taken out of ``output`` first (a marker's kind or fingerprint is no part of a secret)."""
    rest = original.replace(secret, "\0")
    output = _MARKER.sub("\0", output)
    if len(secret) < width:
        return secret if secret in output else None
    for i in range(len(secret) - width + 1):
        part = secret[i:i + width]
        if part in output and part not in rest:
            return part
    return None


def leaked(leak: Leak, output: str) -> list[str]:
    """The secrets of ``leak`` that ``output`` shows, wholly or partly."""
    return [secret for secret in leak.secrets if shown_part(secret, leak.text, output) is not None]

# --- what this check found open (filled from the run on main after `git rebase main`, see the report) ----------

# Cases whose secret sanitize_output (and fisk-chatops exec, one case per call) still shows, wholly or partly.
# Found at 02:57 on main a694b17 (each case alone through `fisk-chatops exec` gave the same output as directly);
# 20 closed by leaks6 (context_services.py and the cases in tests/test_sanitize_leaks6.py), the last 7 by leaks7.
OPEN_CASES: frozenset[str] = frozenset({
    # az-keyvault-secret-show, env-dump-unusual-names, rails-database-yml, windows-unattend-xml, php-pdo-stack-args,
    # argocd-initial-password, elasticsearch-reset-password: hidden since leaks7 (bot/sanitize/context_programs.py,
    # the plural of a key's compound, an environment line's *_PW; look-alikes in tests/test_sanitize_leaks7.py)
})
ACCEPT3_LEAKS: tuple[Leak, ...] = tuple(leak for leak in CASES if leak.family not in OPEN_CASES)
ACCEPT3_OPEN: tuple[Leak, ...] = tuple(leak for leak in CASES if leak.family in OPEN_CASES)

# Ordinary snippets (a line, or the lines a verdict depends on) that come out changed: kept out of
# tests/corpora/accept3/benign/ while open.
BENIGN_OPEN: tuple[str, ...] = (
    # all fixed by cardfix3 and moved to tests/corpora/accept3/benign/accept3_fixed.txt (an aws list-secrets table,
    # a Vault audit entry's HMACs, an Ansible lookup, nginx's proxy_pass and key path, systemd's LoadCredential,
    # vault's @file, .env.example placeholders; look-alikes in tests/test_sanitize_accept3_benign.py)
)

# Card cases (tests/corpora/cards_accept3.py) whose card or result message shows the secret.
CARD_OPEN: frozenset[str] = frozenset({
    # az-login-sp, gh-secret-set-body, htpasswd-b, ldapsearch-w, sqlcmd-P: hidden since cardfix3 (a client's
    # password flag per tool, gh's secret set --body, htpasswd -b's last argument; tests/test_sanitize_accept3_cards.py)
})

# Card cases whose card shows an invisible character raw.
INVISIBLE_OPEN: frozenset[str] = frozenset({
})
