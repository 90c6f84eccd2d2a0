# ruff: noqa: E501
"""Cloud CLIs: aws, gcloud, az, oci, doctl, linode-cli, as they print credentials."""

from __future__ import annotations

import json

from tests.corpora.accept6.values import (
    ALNUM,
    HEX,
    Family,
    Secret,
    aws_key_id,
    aws_secret,
    aws_session_token,
    b64,
    b64url,
    hexs,
    human_password,
    ip,
    jwt,
    password,
    pem,
    pick,
    uuid,
)


def build() -> Family:
    F = Family("cloud")
    rs = F.rng("aws-export-credentials")
    sk, st = aws_secret(rs), aws_session_token(rs)
    F.add("aws-export-credentials", f"""$ aws configure export-credentials --profile prod-admin --format env
export AWS_ACCESS_KEY_ID={aws_key_id(rs, 'ASIA')}
export AWS_SECRET_ACCESS_KEY={sk}
export AWS_SESSION_TOKEN={st}
export AWS_CREDENTIAL_EXPIRATION=2026-12-02T13:41:07+00:00
""", Secret("aws-secret", sk), Secret("aws-session", st))

    rs = F.rng("aws-sts-assume-role")
    sk, st = aws_secret(rs), aws_session_token(rs)
    F.add("aws-sts-assume-role", f"""{{
    "Credentials": {{
        "AccessKeyId": "{aws_key_id(rs, 'ASIA')}",
        "SecretAccessKey": "{sk}",
        "SessionToken": "{st}",
        "Expiration": "2026-12-02T13:55:12+00:00"
    }},
    "AssumedRoleUser": {{
        "AssumedRoleId": "AROA{pick(rs, 'ABCDEFGHIJKLMNOPQRSTUVWXYZ234567', 17)}:oncall-session",
        "Arn": "arn:aws:sts::481516234200:assumed-role/OpsBreakGlass/oncall-session"
    }}
}}
""", Secret("aws-secret", sk), Secret("aws-session", st))

    rs = F.rng("aws-credentials-file")
    s1, s2 = aws_secret(rs), aws_secret(rs)
    F.add("aws-credentials-file", f"""$ cat ~/.aws/credentials
[default]
aws_access_key_id = {aws_key_id(rs)}
aws_secret_access_key = {s1}

[billing-readonly]
aws_access_key_id={aws_key_id(rs)}
aws_secret_access_key={s2}
region=eu-west-1
""", Secret("aws-secret", s1), Secret("aws-secret", s2))

    rs = F.rng("aws-secretsmanager-get")
    pw = password(rs, 24)
    inner = json.dumps({"username": "orders_app", "password": pw, "engine": "postgres", "host": "orders.cluster-c8x.eu-west-1.rds.amazonaws.com", "port": 5432})
    F.add("aws-secretsmanager-get", json.dumps({
        "ARN": "arn:aws:secretsmanager:eu-west-1:481516234200:secret:prod/orders/db-AbC123",
        "Name": "prod/orders/db", "VersionId": uuid(rs), "SecretString": inner,
        "VersionStages": ["AWSCURRENT"], "CreatedDate": "2026-11-30T09:12:44.118000+00:00"}, indent=4),
        Secret("password", pw))

    rs = F.rng("aws-ssm-get-parameter")
    pw = human_password(rs)
    F.add("aws-ssm-get-parameter", f"""{{
    "Parameter": {{
        "Name": "/payments/prod/smtp/password",
        "Type": "SecureString",
        "Value": "{pw}",
        "Version": 7,
        "LastModifiedDate": "2026-10-14T08:02:19.551000+00:00",
        "ARN": "arn:aws:ssm:eu-west-1:481516234200:parameter/payments/prod/smtp/password",
        "DataType": "text"
    }}
}}
""", Secret("password", pw))

    rs = F.rng("aws-iam-create-access-key-table")
    sk = aws_secret(rs)
    kid = aws_key_id(rs)
    F.add("aws-iam-create-access-key-table", f"""$ aws iam create-access-key --user-name ci-deployer --output table
--------------------------------------------------------------------------------------------------------------
|                                              CreateAccessKey                                               |
+------------------------------------------------------------------------------------------------------------+
||                                                AccessKey                                                 ||
|+---------------------------+-----------------------+------------------------------------------+----------+|
||        AccessKeyId        |      CreateDate       |             SecretAccessKey              | Status   ||
|+---------------------------+-----------------------+------------------------------------------+----------+|
||  {kid}     |  2026-12-02T12:01:09Z |  {sk}  |  Active  ||
|+---------------------------+-----------------------+------------------------------------------+----------+|
""", Secret("aws-secret", sk))

    rs = F.rng("aws-lambda-config")
    pw, sk = password(rs, 20), "sk_live_" + pick(rs, ALNUM, 99)
    F.add("aws-lambda-config", json.dumps({
        "FunctionName": "invoice-renderer", "Runtime": "python3.12", "Role": "arn:aws:iam::481516234200:role/invoice-renderer",
        "Handler": "app.handler", "CodeSize": 18233411, "Timeout": 30, "MemorySize": 1024,
        "Environment": {"Variables": {"LOG_LEVEL": "info", "DB_HOST": "invoices.cluster-ro.eu-west-1.rds.amazonaws.com",
                                      "DB_PASSWORD": pw, "STRIPE_KEY": sk, "FEATURE_PDF_V2": "true"}},
        "TracingConfig": {"Mode": "Active"}, "RevisionId": uuid(rs)}, indent=4),
        Secret("password", pw), Secret("stripe", sk))

    rs = F.rng("aws-ecs-task-definition")
    pw, js = password(rs, 22), hexs(rs, 64)
    F.add("aws-ecs-task-definition", f"""            "environment": [
                {{
                    "name": "DATABASE_URL",
                    "value": "postgres://catalog:{pw}@catalog-db.internal:5432/catalog"
                }},
                {{
                    "name": "JWT_SIGNING_SECRET",
                    "value": "{js}"
                }},
                {{
                    "name": "PORT",
                    "value": "8080"
                }}
            ],
            "secrets": [
                {{
                    "name": "SENTRY_DSN",
                    "valueFrom": "arn:aws:ssm:eu-west-1:481516234200:parameter/catalog/sentry_dsn"
                }}
            ],
""", Secret("url-password", pw), Secret("jwt-secret", js))

    rs = F.rng("gcloud-print-access-token")
    tok = "ya29.a0" + pick(rs, ALNUM + "-_", 210)
    F.add("gcloud-print-access-token", f"""$ gcloud auth print-access-token --impersonate-service-account=deployer@acme-prod.iam.gserviceaccount.com
WARNING: This command is using service account impersonation. All API calls will be executed as [deployer@acme-prod.iam.gserviceaccount.com].
{tok}
""", Secret("gcp-access-token", tok))

    rs = F.rng("gcloud-sa-key-json")
    block, body = pem(rs, "PRIVATE KEY", 1190)
    kid = hexs(rs, 40)
    escaped = block.replace("\n", "\\n") + "\\n"
    F.add("gcloud-sa-key-json", f"""$ cat deployer-key.json
{{
  "type": "service_account",
  "project_id": "acme-prod",
  "private_key_id": "{kid}",
  "private_key": "{escaped}",
  "client_email": "deployer@acme-prod.iam.gserviceaccount.com",
  "client_id": "10{pick(rs, '0123456789', 19)}",
  "auth_uri": "https://accounts.google.com/o/oauth2/auth",
  "token_uri": "https://oauth2.googleapis.com/token"
}}
""", *(Secret("gcp-private-key", line) for line in body.splitlines()[3:5]))

    rs = F.rng("gcloud-secrets-access")
    pw = password(rs, 32)
    F.add("gcloud-secrets-access", f"""$ gcloud secrets versions access latest --secret=billing-api-signing-key --project=acme-prod
{pw}
""", Secret("bare-secret", pw))

    rs = F.rng("az-get-access-token")
    tok, core = jwt(rs)
    F.add("az-get-access-token", f"""{{
  "accessToken": "{tok}",
  "expiresOn": "2026-12-02 13:52:10.000000",
  "expires_on": 1764683530,
  "subscription": "{uuid(rs)}",
  "tenant": "{uuid(rs)}",
  "tokenType": "Bearer"
}}
""", Secret("jwt", core))

    rs = F.rng("az-storage-connection-string")
    key = b64(rs, 64)
    F.add("az-storage-connection-string", f"""$ az storage account show-connection-string -g rg-data-prod -n stacmeexports
{{
  "connectionString": "DefaultEndpointsProtocol=https;EndpointSuffix=core.windows.net;AccountName=stacmeexports;AccountKey={key};BlobEndpoint=https://stacmeexports.blob.core.windows.net/"
}}
""", Secret("azure-account-key", key))

    rs = F.rng("az-sp-create-for-rbac")
    secret = pick(rs, ALNUM, 3) + "8Q~" + pick(rs, ALNUM + "~._-", 31)
    F.add("az-sp-create-for-rbac", f"""Creating 'Contributor' role assignment under scope '/subscriptions/{uuid(rs)}/resourceGroups/rg-aks-prod'
The output includes credentials that you must protect. Be sure that you do not include these credentials in your code or check the credentials into your source control. For more information, see https://aka.ms/azadsp-cli
{{
  "appId": "{uuid(rs)}",
  "displayName": "gha-aks-deployer",
  "password": "{secret}",
  "tenant": "{uuid(rs)}"
}}
""", Secret("azure-client-secret", secret))

    rs = F.rng("az-sas-token")
    sig = b64(rs, 32).replace("+", "%2B").replace("/", "%2F").replace("=", "%3D")
    F.add("az-sas-token", f"""$ az storage container generate-sas --account-name stacmeexports -n nightly --permissions rl --expiry 2026-12-09 -o tsv
se=2026-12-09&sp=rl&sv=2022-11-02&sr=c&sig={sig}
""", Secret("sas-sig", sig))

    rs = F.rng("az-publishing-profile")
    pw = pick(rs, ALNUM, 60)
    F.add("az-publishing-profile", f"""[
  {{
    "SQLServerDBConnectionString": "",
    "controlPanelLink": "https://portal.azure.com",
    "msdeploySite": "acme-status-prod",
    "profileName": "acme-status-prod - Web Deploy",
    "publishMethod": "MSDeploy",
    "publishUrl": "acme-status-prod.scm.azurewebsites.net:443",
    "userName": "$acme-status-prod",
    "userPWD": "{pw}",
    "webSystem": "WebSites"
  }}
]
""", Secret("publish-password", pw))

    rs = F.rng("oci-config-and-key")
    pp = human_password(rs)
    block, body = pem(rs, "RSA PRIVATE KEY", 900)
    F.add("oci-config-and-key", f"""$ cat ~/.oci/config
[DEFAULT]
user=ocid1.user.oc1..aaaaaaaa{pick(rs, 'abcdefghijklmnopqrstuvwxyz234567', 52)}
fingerprint={':'.join(hexs(rs, 2) for _ in range(16))}
tenancy=ocid1.tenancy.oc1..aaaaaaaa{pick(rs, 'abcdefghijklmnopqrstuvwxyz234567', 52)}
region=eu-frankfurt-1
key_file=~/.oci/oci_api_key.pem
pass_phrase={pp}
$ cat ~/.oci/oci_api_key.pem
{block}
""", Secret("passphrase", pp), Secret("rsa-key", body))

    rs = F.rng("doctl-config")
    tok = "dop_v1_" + hexs(rs, 64)
    F.add("doctl-config", f"""$ cat ~/.config/doctl/config.yaml
access-token: {tok}
auth-contexts:
  default: ""
context: default
output: text
""", Secret("do-token", tok))

    rs = F.rng("aws-ecr-login-password")
    tok = b64(rs, 1500)
    F.add("aws-ecr-login-password", f"""$ aws ecr get-login-password --region eu-west-1
{tok}
""", Secret("ecr-token", tok))

    rs = F.rng("aws-cognito-client")
    cs = pick(rs, "abcdefghijklmnopqrstuvwxyz0123456789", 52)
    F.add("aws-cognito-client", f"""{{
    "UserPoolClient": {{
        "UserPoolId": "eu-west-1_{pick(rs, ALNUM, 9)}",
        "ClientName": "backoffice-web",
        "ClientId": "{pick(rs, 'abcdefghijklmnopqrstuvwxyz0123456789', 26)}",
        "ClientSecret": "{cs}",
        "RefreshTokenValidity": 30,
        "AllowedOAuthFlows": ["code"]
    }}
}}
""", Secret("client-secret", cs))

    rs = F.rng("linode-cli-config")
    tok = hexs(rs, 64)
    F.add("linode-cli-config", f"""$ cat ~/.config/linode-cli
[DEFAULT]
default-user = ops-acme

[ops-acme]
token = {tok}
region = eu-central
type = g6-standard-2
""", Secret("linode-token", tok))

    rs = F.rng("gcloud-sql-connect-uri")
    pw = password(rs, 16)
    F.add("gcloud-sql-connect-uri", f"""2026-12-02 12:10:44 cloud-sql-proxy[812]: Listening on 127.0.0.1:5432
2026-12-02 12:10:45 migrate[931]: applying 0042_add_refunds using postgresql://migrator:{pw}@127.0.0.1:5432/payments?sslmode=disable
2026-12-02 12:10:46 migrate[931]: done in 0.84s
""", Secret("url-password", pw))

    rs = F.rng("aws-rds-generate-db-auth-token")
    sig = hexs(rs, 64)
    tok = (f"orders.cluster-c8x.eu-west-1.rds.amazonaws.com:5432/?Action=connect&DBUser=iam_reader&X-Amz-Algorithm=AWS4-HMAC-SHA256"
           f"&X-Amz-Credential={aws_key_id(rs, 'ASIA')}%2F20261202%2Feu-west-1%2Frds-db%2Faws4_request&X-Amz-Date=20261202T121500Z"
           f"&X-Amz-Expires=900&X-Amz-SignedHeaders=host&X-Amz-Security-Token={b64url(rs, 200)}&X-Amz-Signature={sig}")
    F.add("aws-rds-generate-db-auth-token", f"""$ aws rds generate-db-auth-token --hostname orders.cluster-c8x.eu-west-1.rds.amazonaws.com --port 5432 --username iam_reader
{tok}
""", Secret("presigned-signature", sig))

    rs = F.rng("az-cosmos-keys")
    k1, k2 = b64(rs, 64), b64(rs, 64)
    F.add("az-cosmos-keys", f"""$ az cosmosdb keys list -g rg-data-prod -n cosmos-acme-prod -o table
PrimaryMasterKey                                                                          PrimaryReadonlyMasterKey
----------------------------------------------------------------------------------------  ----------------------------------------------------------------------------------------
{k1}  {k2}
""", Secret("cosmos-key", k1), Secret("cosmos-key", k2))
    _ = (HEX, ip)
    return F
