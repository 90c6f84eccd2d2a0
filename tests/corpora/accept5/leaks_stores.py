# ruff: noqa: E501  (output lines as tools print them; splitting them would change their shape)
"""Leak cases: password managers and secret stores (vault, sops, 1password, bitwarden, doppler, infisical, gcp/aws
secret managers, age, pass) and private keys of several formats."""

CASES: list[tuple[str, str]] = [
    ("vault-kv-get-table", """$ vault kv get secret/prod/payments
======= Secret Path =======
secret/data/prod/payments

======= Metadata =======
Key                Value
---                -----
created_time       2026-11-28T10:41:22.118211Z
custom_metadata    <nil>
deletion_time      n/a
destroyed          false
version            12

====== Data ======
Key                    Value
---                    -----
adyen_api_key          AQE{{b62_40}}{{b62_32}}
hmac_secret            {{hex64}}
merchant_account       AcmeShopEU
"""),
    ("vault-kv-get-json", """$ vault kv get -format=json secret/prod/mq
{
  "request_id": "{{~uuid}}",
  "lease_duration": 0,
  "data": {
    "data": {
      "password": "{{pw}}",
      "username": "mq-admin"
    },
    "metadata": {
      "created_time": "2026-11-01T12:00:00Z",
      "version": 3
    }
  }
}
"""),
    ("vault-login-output", """$ vault login -method=oidc role=oncall
Success! You are now authenticated. The token information displayed below
is already stored in the token helper. You do NOT need to run "vault login"
again. Future Vault requests will automatically use this token.

Key                  Value
---                  -----
token                {{hvs}}
token_accessor       {{~b62_32}}
token_duration       8h
token_renewable      true
token_policies       ["default" "oncall"]
"""),
    ("vault-database-creds", """$ vault read database/creds/readonly
Key                Value
---                -----
lease_id           database/creds/readonly/{{~b62_32}}
lease_duration     1h
lease_renewable    true
password           {{apw}}
username           v-oidc-oncall-readonly-{{~id8}}-1764660000
"""),
    ("vault-operator-init", """$ vault operator init -key-shares=3 -key-threshold=2
Unseal Key 1: {{b64_32}}
Unseal Key 2: {{b64_32}}
Unseal Key 3: {{b64_32}}

Initial Root Token: {{hvs}}

Vault initialized with 3 key shares and a key threshold of 2.
"""),
    ("vault-batch-token-create", """$ vault token create -type=batch -policy=ci -format=json
{"request_id":"{{~uuid}}","auth":{"client_token":"{{hvb}}","accessor":"","policies":["ci","default"],"lease_duration":1200,"renewable":false}}
"""),
    ("sops-decrypt-yaml", """$ sops -d secrets/prod.enc.yaml
db:
    user: app
    password: {{pw}}
oauth:
    google_client_secret: GOCSPX-{{b62_32}}
sentry_dsn: {{~sentrydsn}}
"""),
    ("sops-decrypt-dotenv", """$ sops -d --output-type dotenv .env.prod.enc
ALGOLIA_KEY={{hex32}}
INTERCOM_TOKEN=dG9rOj{{b62_40}}=
LOG_LEVEL=warn
"""),
    ("op-item-get", """$ op item get "Prod Postgres" --vault Infra
ID:          {{~b62_32}}
Title:       Prod Postgres
Vault:       Infra ({{~b62_32}})
Created:     3 months ago
Updated:     2 days ago by Ops Bot
Favorite:    false
Version:     4
Category:    DATABASE
Fields:
  type:        postgresql
  server:      pg-primary.internal
  port:        5432
  database:    orders
  username:    orders_owner
  password:    {{pw}}
"""),
    ("op-read-and-service-token", """$ env | grep OP_
OP_SERVICE_ACCOUNT_TOKEN={{opsvc}}
$ op read "op://Infra/Cloudflare/credential"
{{b62_40}}
"""),
    ("bw-get-item-json", """$ bw get item "mailgun prod" --session "{{bwsession}}"
{"object":"item","id":"{{~uuid}}","organizationId":null,"folderId":null,"type":1,"name":"mailgun prod","notes":null,"login":{"uris":[{"match":null,"uri":"https://app.mailgun.com"}],"username":"postmaster@mg.acme.io","password":"{{pw}}","totp":null},"revisionDate":"2026-11-02T10:11:12.000Z"}
"""),
    ("bw-unlock", """$ bw unlock
? Master password: [hidden]
Your vault is now unlocked!

To unlock your vault, set your session key to the `BW_SESSION` environment variable. ex:
$ export BW_SESSION="{{bwsession#s}}"
> $env:BW_SESSION="{{bwsession#s}}"
"""),
    ("doppler-secrets-download", """$ doppler secrets download --no-file --format env
DOPPLER_CONFIG="prd"
DOPPLER_ENVIRONMENT="prd"
DOPPLER_PROJECT="api"
MAILCHIMP_API_KEY="{{hex32}}-us21"
TWILIO_AUTH_TOKEN="{{hex32}}"
"""),
    ("doppler-configure", """$ doppler configure --all
┌──────────────┬───────────────────────┬─────────────────────┐
│ NAME         │ VALUE                 │ SCOPE               │
├──────────────┼───────────────────────┼─────────────────────┤
│ token        │ {{doppler}} │ /                   │
│ project      │ api                   │ /srv/api            │
└──────────────┴───────────────────────┴─────────────────────┘
"""),
    ("infisical-export", """$ infisical export --env=prod --format=json
[
  {"key": "RESEND_API_KEY", "value": "re_{{b62_32}}"},
  {"key": "CLERK_SECRET_KEY", "value": "sk_live_{{b62_40}}"},
  {"key": "FEATURE_FLAGS", "value": "checkout_v2,search_v3"}
]
"""),
    ("infisical-service-token-env", """$ systemctl show api -p Environment
Environment=INFISICAL_TOKEN={{infisical}} NODE_ENV=production
"""),
    ("gcp-secret-manager-json", """$ gcloud secrets versions access 3 --secret=slack-signing --format=json
{
  "name": "projects/812345678901/secrets/slack-signing/versions/3",
  "payload": {
    "data": "{{k8s}}",
    "dataCrc32c": "2841790155"
  }
}
"""),
    ("aws-secretsmanager-text", """$ aws secretsmanager get-secret-value --secret-id prod/github-app --query SecretString --output text
{"app_id":"381224","installation_id":"44102233","webhook_secret":"{{hex40}}","private_key":"{{rsaesc}}"}
"""),
    ("pass-show", """$ pass show infra/ldap/bind
{{pw24}}
user: cn=svc-bind,ou=services,dc=acme,dc=io
url: ldaps://ldap.acme.io
"""),
    ("age-keygen", """$ age-keygen
# created: 2026-12-02T07:33:10Z
# public key: age1{{~sha256}}
{{age}}
"""),
    ("ssh-private-key-cat", """$ cat ~/.ssh/id_ed25519
{{openssh}}
"""),
    ("ec-key-openssl", """$ openssl ecparam -name prime256v1 -genkey -noout
{{ec}}
"""),
    ("pkcs8-encrypted-with-pass", """$ cat /etc/ssl/private/api.key
{{encpkcs8}}
$ cat /etc/ssl/private/api.pass
{{pw}}
"""),
    ("pgp-export-secret", """$ gpg --armor --export-secret-keys releases@acme.io
{{pgp}}
"""),
    ("rsa-in-json-escaped", """{"kid":"acme-signing-2026","alg":"RS256","pem":"{{rsaesc}}"}
"""),
    ("k8s-tls-key-decoded", """$ kubectl get secret webhook-tls -o jsonpath='{.data.tls\\.key}' | base64 -d
{{pkcs8}}
"""),
]
