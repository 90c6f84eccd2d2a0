# ruff: noqa: E501  (output lines as tools print them; splitting them would change their shape)
"""Leak cases: cloud CLIs (aws, gcloud, az, oci, doctl, linode-cli) printing credentials."""

CASES: list[tuple[str, str]] = [
    ("aws-configure-export", """$ aws configure export-credentials --profile prod-admin --format env
export AWS_ACCESS_KEY_ID={{asia}}
export AWS_SECRET_ACCESS_KEY={{awssecret}}
export AWS_SESSION_TOKEN={{awssession}}
export AWS_CREDENTIAL_EXPIRATION=2026-12-02T09:14:07+00:00
"""),
    ("aws-sts-assume-role", """{
    "Credentials": {
        "AccessKeyId": "{{asia}}",
        "SecretAccessKey": "{{awssecret}}",
        "SessionToken": "{{awssession}}",
        "Expiration": "2026-12-02T08:59:41+00:00"
    },
    "AssumedRoleUser": {
        "AssumedRoleId": "AROA{{~id12}}:oncall-session",
        "Arn": "arn:aws:sts::{{~num12}}:assumed-role/OrganizationAccountAccessRole/oncall-session"
    }
}
"""),
    ("aws-iam-create-access-key", """-------------------------------------------------------------------------------------------------
|                                        CreateAccessKey                                        |
+-----------------------------------------------------------------------------------------------+
||                                          AccessKey                                          ||
|+----------------------+-------------------------------------------+---------+----------------+|
||      AccessKeyId     |              SecretAccessKey              | Status  |   UserName     ||
|+----------------------+-------------------------------------------+---------+----------------+|
||  {{akia}}  |  {{awssecret}} |  Active |  ci-deployer   ||
|+----------------------+-------------------------------------------+---------+----------------+|
"""),
    ("aws-cat-credentials", """$ cat ~/.aws/credentials
[default]
aws_access_key_id = {{akia}}
aws_secret_access_key = {{awssecret}}

[staging]
aws_access_key_id={{akia}}
aws_secret_access_key={{awssecret}}
region=eu-west-1
"""),
    ("aws-secretsmanager-get", """{
    "ARN": "arn:aws:secretsmanager:us-east-1:{{~num12}}:secret:prod/billing/db-AbCdEf",
    "Name": "prod/billing/db",
    "VersionId": "{{~uuid}}",
    "SecretString": "{\\"username\\":\\"billing_app\\",\\"password\\":\\"{{pw}}\\",\\"engine\\":\\"postgres\\",\\"host\\":\\"billing.cluster-c9x2.us-east-1.rds.amazonaws.com\\",\\"port\\":5432}",
    "VersionStages": [
        "AWSCURRENT"
    ],
    "CreatedDate": "2026-11-04T12:01:44.512000+00:00"
}
"""),
    ("aws-ssm-get-parameter", """{
    "Parameter": {
        "Name": "/prod/payments/stripe_api_key",
        "Type": "SecureString",
        "Value": "{{sklive}}",
        "Version": 7,
        "LastModifiedDate": "2026-10-21T15:22:03.001000+00:00",
        "ARN": "arn:aws:ssm:eu-central-1:{{~num12}}:parameter/prod/payments/stripe_api_key",
        "DataType": "text"
    }
}
"""),
    ("aws-ssm-get-parameters-by-path-table", """-----------------------------------------------------------------------------------------------
|                                   GetParametersByPath                                       |
+------------------------------------+--------------------------------------------------------+
|  /app/prod/DATABASE_PASSWORD        |  {{pw}}                                     |
|  /app/prod/REDIS_AUTH               |  {{apw}}                                 |
|  /app/prod/LOG_LEVEL                |  info                                                   |
+------------------------------------+--------------------------------------------------------+
"""),
    ("aws-lambda-get-function-configuration", """{
    "FunctionName": "invoice-render",
    "Runtime": "python3.12",
    "Role": "arn:aws:iam::{{~num12}}:role/invoice-render-exec",
    "Handler": "app.handler",
    "Environment": {
        "Variables": {
            "SENDGRID_API_KEY": "{{sg}}",
            "PDF_BUCKET": "invoices-prod-eu",
            "DB_URL": "postgresql://render:{{upw}}@invoices.cluster-xyz.eu-west-1.rds.amazonaws.com:5432/invoices"
        }
    },
    "MemorySize": 1024
}
"""),
    ("aws-ecs-describe-task-definition", """{
    "taskDefinition": {
        "family": "checkout-api",
        "containerDefinitions": [
            {
                "name": "api",
                "image": "{{~num12}}.dkr.ecr.us-east-1.amazonaws.com/checkout-api:v2.14.3",
                "environment": [
                    {"name": "NODE_ENV", "value": "production"},
                    {"name": "JWT_SIGNING_SECRET", "value": "{{b64_32}}"},
                    {"name": "DATADOG_API_KEY", "value": "{{hex32}}"}
                ]
            }
        ]
    }
}
"""),
    ("aws-ec2-user-data", """$ aws ec2 describe-instance-attribute --instance-id i-{{~id17}} --attribute userData --query UserData.Value --output text | base64 -d
#!/bin/bash
set -euo pipefail
cat > /etc/default/agent <<EOT
AGENT_TOKEN={{b62_40}}
CONSUL_HTTP_TOKEN={{~uuid}}
EOT
echo "registering" && curl -sf -H "X-Vault-Token: {{hvs}}" https://vault.internal:8200/v1/sys/health
"""),
    ("aws-rds-create-db-trace", """+ aws rds create-db-instance --db-instance-identifier reports-replica --db-instance-class db.r6g.large --engine postgres --master-username reports_admin --master-user-password '{{pw}}' --allocated-storage 200
{
    "DBInstance": {
        "DBInstanceIdentifier": "reports-replica",
        "DBInstanceStatus": "creating"
    }
}
"""),
    ("gcloud-sa-key-create", """$ gcloud iam service-accounts keys create /dev/stdout --iam-account deployer@acme-prod.iam.gserviceaccount.com
{
  "type": "service_account",
  "project_id": "acme-prod",
  "private_key_id": "{{~sha1}}",
  "private_key": "{{pkcs8esc}}",
  "client_email": "deployer@acme-prod.iam.gserviceaccount.com",
  "client_id": "10{{~num12}}",
  "auth_uri": "https://accounts.google.com/o/oauth2/auth",
  "token_uri": "https://oauth2.googleapis.com/token"
}
created key [{{~sha1}}] of type [json] as [/dev/stdout] for [deployer@acme-prod.iam.gserviceaccount.com]
"""),
    ("gcloud-print-access-token", """$ gcloud auth print-access-token
ya29.a0AfB_by{{b62_40}}{{b62_40}}{{~id8}}0171
"""),
    ("gcloud-secrets-versions-access", """$ gcloud secrets versions access latest --secret=smtp-relay-password --project=acme-prod
{{pw24}}
"""),
    ("gcloud-sql-users-set-password", """+ gcloud sql users set-password app_rw --instance=orders-pg15 --password={{pw}} --project acme-prod
Updating Cloud SQL user...done.
"""),
    ("gcloud-functions-describe", """availableMemoryMb: 512
buildId: {{~uuid}}
entryPoint: handle_webhook
environmentVariables:
  GITHUB_WEBHOOK_SECRET: {{hex40}}
  SLACK_BOT_TOKEN: {{xoxb}}
  LOG_LEVEL: debug
httpsTrigger:
  url: https://europe-west1-acme-prod.cloudfunctions.net/github-hook
name: projects/acme-prod/locations/europe-west1/functions/github-hook
runtime: python311
status: ACTIVE
"""),
    ("gcloud-api-keys-get-key-string", """$ gcloud services api-keys get-key-string projects/812345678901/locations/global/keys/{{~uuid}}
keyString: {{gcpapikey}}
"""),
    ("az-storage-keys-list", """[
  {
    "creationTime": "2026-06-11T09:12:33.418761+00:00",
    "keyName": "key1",
    "permissions": "FULL",
    "value": "{{azkey}}"
  },
  {
    "creationTime": "2026-06-11T09:12:33.418761+00:00",
    "keyName": "key2",
    "permissions": "FULL",
    "value": "{{azkey}}"
  }
]
"""),
    ("az-storage-connection-string", """$ az storage account show-connection-string -g rg-data-prod -n acmedataprod
{
  "connectionString": "DefaultEndpointsProtocol=https;EndpointSuffix=core.windows.net;AccountName=acmedataprod;AccountKey={{azkey}};BlobEndpoint=https://acmedataprod.blob.core.windows.net/"
}
"""),
    ("az-sp-create-for-rbac", """Creating 'Contributor' role assignment under scope '/subscriptions/{{~uuid}}'
The output includes credentials that you must protect. Be sure that you do not include these credentials in your code or check the credentials into your source control. For more information, see https://aka.ms/azadsp-cli
{
  "appId": "{{~uuid}}",
  "displayName": "gh-actions-deployer",
  "password": "{{b62_40}}",
  "tenant": "{{~uuid}}"
}
"""),
    ("az-keyvault-secret-show-tsv", """$ az keyvault secret show --vault-name kv-acme-prod --name cosmos-primary-key --query value -o tsv
{{azkey}}
"""),
    ("az-webapp-config-appsettings", """Name                               Value                                                         SlotSetting
---------------------------------  ------------------------------------------------------------  -------------
WEBSITE_RUN_FROM_PACKAGE           1                                                             False
APPINSIGHTS_INSTRUMENTATIONKEY     {{~uuid}}                          False
SQL_PASSWORD                       {{pw}}                                            False
SERVICEBUS_CONNECTION              Endpoint=sb://acme-prod.servicebus.windows.net/;SharedAccessKeyName=RootManageSharedAccessKey;SharedAccessKey={{b64_32}}  False
"""),
    ("az-sas-url", """$ az storage blob generate-sas --account-name acmedataprod -c backups -n db-2026-12-01.dump --permissions r --expiry 2026-12-03 --full-uri -o tsv
https://acmedataprod.blob.core.windows.net/backups/db-2026-12-01.dump?se=2026-12-03&sp=r&sv=2022-11-02&sr=b&sig={{sassig}}
"""),
    ("az-acr-credential-show", """{
  "passwords": [
    {
      "name": "password",
      "value": "{{b62_40}}"
    },
    {
      "name": "password2",
      "value": "{{b62_40}}"
    }
  ],
  "username": "acmeregistry"
}
"""),
    ("oci-config-cat", """$ cat ~/.oci/config
[DEFAULT]
user=ocid1.user.oc1..aaaaaaaa{{~id12}}{{~id12}}
fingerprint=4f:1e:0c:92:7a:3b:55:de:18:0a:9c:41:fe:7b:22:80
key_file=~/.oci/oci_api_key.pem
tenancy=ocid1.tenancy.oc1..aaaaaaaa{{~id12}}
region=eu-frankfurt-1
pass_phrase={{pw}}
"""),
    ("oci-api-key-cat", """$ cat ~/.oci/oci_api_key.pem
{{rsa}}
"""),
    ("oci-vault-secret-bundle", """{
  "data": {
    "secret-bundle-content": {
      "content": "{{b64_32}}",
      "content-type": "BASE64"
    },
    "secret-id": "ocid1.vaultsecret.oc1.eu-frankfurt-1.amaaaaaa{{~id12}}",
    "version-number": 3
  }
}
"""),
    ("doctl-auth-cat-config", """$ cat ~/.config/doctl/config.yaml
access-token: {{dop}}
context: default
auth-contexts:
  staging: {{dop}}
output: text
"""),
    ("doctl-db-connection", """$ doctl databases connection 9cc10173-e9ea-4176-9dbc-a4cee4c4ff30 --format URI,User,Password
URI                                                                                                     User       Password
postgresql://doadmin:{{apw#p}}@db-pg-fra1-31337-do-user-1234567-0.b.db.ondigitalocean.com:25060/defaultdb?sslmode=require    doadmin    {{apw#p}}
"""),
    ("linode-cli-config", """$ cat ~/.config/linode-cli
[DEFAULT]
default-user = ops-acme

[ops-acme]
token = {{linode}}
region = eu-central
type = g6-standard-2
image = linode/debian12
"""),
    ("linode-obj-keys-create", """┌────────┬──────────────┬──────────────────────┬──────────────────────────────────────────┐
│ id     │ label        │ access_key           │ secret_key                               │
├────────┼──────────────┼──────────────────────┼──────────────────────────────────────────┤
│ 418822 │ backup-agent │ {{~id17}}0A1 │ {{b62_40}} │
└────────┴──────────────┴──────────────────────┴──────────────────────────────────────────┘
"""),
]
