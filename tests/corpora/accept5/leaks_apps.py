# ruff: noqa: E501  (output lines as tools print them; splitting them would change their shape)
"""Leak cases: application logs that print secrets, and vendors' tokens in the places they turn up (webhooks,
HTTP traces, SDK debug output, shell history)."""

CASES: list[tuple[str, str]] = [
    ("slack-bot-token-log", """2026-12-02 07:44:01,223 DEBUG slack_sdk.web.base_client: Sending a request - url: https://slack.com/api/chat.postMessage, query_params: {}, body_params: {}, files: {}, json_body: {'channel': 'C0123ABCD', 'text': 'deploy done'}, headers: {'Content-Type': 'application/json;charset=utf-8', 'Authorization': '(redacted)', 'User-Agent': 'Python/3.12.7 slackclient/3.33.1'}
2026-12-02 07:44:01,224 DEBUG app.notify: using token={{xoxb}} for workspace T0ACME
"""),
    ("slack-user-and-app-tokens-env", """$ cat /etc/slack-relay/env
SLACK_USER_TOKEN={{xoxp}}
SLACK_APP_TOKEN={{xapp}}
SLACK_SIGNING_SECRET={{hex32}}
"""),
    ("slack-webhook-in-alertmanager", """$ kubectl -n monitoring get secret alertmanager-main -o jsonpath='{.data.alertmanager\\.yaml}' | base64 -d
global:
  resolve_timeout: 5m
  slack_api_url: '{{slackhook}}'
route:
  receiver: oncall
receivers:
- name: oncall
  pagerduty_configs:
  - routing_key: {{hex32}}
"""),
    ("github-token-in-git-error", """fatal: unable to access 'https://x-access-token:{{ghs}}@github.com/acme/private-charts.git/': The requested URL returned error: 403
"""),
    ("github-fine-grained-pat-history", """$ history | tail -4
 1021  export GH_TOKEN={{ghpat}}
 1022  gh repo list acme --limit 5
 1023  kubectl get pods -n web
 1024  history | tail -4
"""),
    ("gitlab-api-curl-verbose", """> GET /api/v4/projects/412/pipelines?status=failed HTTP/2
> Host: gitlab.acme.io
> user-agent: curl/8.5.0
> accept: */*
> private-token: {{glpat}}
>
< HTTP/2 200
< content-type: application/json
"""),
    ("stripe-cli-config", """$ cat ~/.config/stripe/config.toml
[default]
  device_name = "oncall-laptop"
  live_mode_api_key = "{{rklive}}"
  live_mode_pub_key = "pk_live_51{{~sha256}}"
  test_mode_api_key = "sk_test_51{{b62_40}}{{b62_40}}"
"""),
    ("stripe-webhook-secret-log", """[2026-12-02 07:51:10] production.INFO: Webhook verified {"endpoint":"we_1QabCDeFGhiJKlmn","secret":"{{whsec}}","event":"invoice.paid"}
"""),
    ("twilio-cli-profiles", """$ twilio profiles:list
┌──────────┬────────────────────────────────────┬────────┐
│ ID       │ Account SID                        │ Active │
├──────────┼────────────────────────────────────┼────────┤
│ prod     │ AC{{~hex32}}  │ true   │
└──────────┴────────────────────────────────────┴────────┘
$ cat ~/.twilio-cli/config.json
{"profiles":{"prod":{"accountSid":"AC{{~hex32}}","apiKey":"{{twsk}}","apiSecret":"{{b62_32}}"}}}
"""),
    ("twilio-auth-token-python", """Traceback (most recent call last):
  File "/srv/sms/send.py", line 14, in <module>
    client = Client("AC{{~hex32}}", "{{hex32}}")
  File "/usr/lib/python3/dist-packages/twilio/rest/__init__.py", line 54, in __init__
twilio.base.exceptions.TwilioRestException: HTTP 401 error: Unable to create record: Authenticate
"""),
    ("sendgrid-curl-trace", """+ curl --request POST --url https://api.sendgrid.com/v3/mail/send --header 'Authorization: Bearer {{sg}}' --header 'Content-Type: application/json' --data @mail.json
{"errors":[{"message":"The from address does not match a verified Sender Identity.","field":"from","help":null}]}
"""),
    ("datadog-agent-status", """$ sudo datadog-agent config | grep -E 'api_key|app_key|site'
api_key: {{hex32}}
app_key: {{hex40}}
site: datadoghq.eu
"""),
    ("datadog-curl-headers", """$ curl -sv -X GET "https://api.datadoghq.com/api/v1/validate" -H "DD-API-KEY: {{hex32#a}}" -H "DD-APPLICATION-KEY: {{hex40#b}}" 2>&1 | grep -i '^> dd-'
> DD-API-KEY: {{hex32#a}}
> DD-APPLICATION-KEY: {{hex40#b}}
"""),
    ("pagerduty-api-and-routing", """$ cat ~/.pd.yml
subdomain: acme
api_key: {{pdkey}}
default_escalation: PX1ZZ9Q
$ curl -s -X POST https://events.pagerduty.com/v2/enqueue -d '{"routing_key":"{{hex32}}","event_action":"trigger","payload":{"summary":"disk 95%","severity":"critical","source":"db01"}}'
{"status":"success","message":"Event processed","dedup_key":"{{~hex32}}"}
"""),
    ("npm-publish-debug", """npm verb cli /usr/local/bin/node /usr/local/bin/npm
npm verb title npm publish
npm verb argv "publish" "--access" "public"
npm verb config //registry.npmjs.org/:_authToken={{npm}}
npm http fetch PUT 200 https://registry.npmjs.org/@acme%2fui 1520ms
"""),
    ("twine-upload-env", """+ export TWINE_USERNAME=__token__
+ TWINE_USERNAME=__token__
+ export TWINE_PASSWORD={{pypi#x}}
+ TWINE_PASSWORD={{pypi#x}}
+ twine upload dist/*
Uploading distributions to https://upload.pypi.org/legacy/
"""),
    ("shopify-app-log", """[shopify-app] 07:52:12 │ graphql  │ POST https://acme-shop.myshopify.com/admin/api/2024-10/graphql.json
[shopify-app] 07:52:12 │ graphql  │ X-Shopify-Access-Token: {{shpat}}
[shopify-app] 07:52:13 │ graphql  │ 200 OK (314ms)
"""),
    ("openai-key-in-error", """openai.AuthenticationError: Error code: 401 - {'error': {'message': 'Incorrect API key provided: {{openai}}. You can find your API key at https://platform.openai.com/account/api-keys.', 'type': 'invalid_request_error', 'param': None, 'code': 'invalid_api_key'}}
"""),
    ("anthropic-key-env-print", """>>> import os; print({k: v for k, v in os.environ.items() if 'KEY' in k})
{'ANTHROPIC_API_KEY': '{{anthropic}}', 'GPG_KEY': 'A035C8C19219BA821ECEA86B64E628F8D684696D'}
"""),
    ("jwt-in-access-log", """10.42.7.19 - - [02/Dec/2026:07:45:11 +0000] "GET /api/v2/orders?limit=50&access_token={{jwt}} HTTP/1.1" 200 18231 "-" "okhttp/4.12.0"
"""),
    ("jwt-bearer-in-debug", """DEBUG [http-nio-8080-exec-7] o.s.w.f.CommonsRequestLoggingFilter: Before request [GET /internal/metrics, headers=[host:"api.internal", authorization:"Bearer {{jwt}}", accept:"*/*"]]
"""),
    ("mailgun-smtp-log", """Dec  2 07:40:21 mx1 postfix/smtp[22911]: connect to smtp.mailgun.org[34.160.11.2]:587
Dec  2 07:40:21 mx1 app[3001]: mail transport configured: smtps://postmaster%40mg.acme.io:{{upw}}@smtp.mailgun.org:465
Dec  2 07:40:22 mx1 app[3001]: using MAILGUN_API_KEY={{mailgun}}
"""),
    ("newrelic-config", """$ cat newrelic.yml | head -5
common: &default_settings
  license_key: '{{hex40}}'
  app_name: checkout
  api_key: {{nrak}}
"""),
    ("sentry-cli-properties", """$ cat sentry.properties
defaults.url=https://sentry.io/
defaults.org=acme
defaults.project=web
auth.token=sntrys_{{b62_40}}{{b62_40}}
$ grep dsn src/sentry.ts
  dsn: "{{~sentrydsn}}",
"""),
    ("python-repr-settings", """>>> from django.conf import settings; settings.DATABASES['default']
{'ENGINE': 'django.db.backends.postgresql', 'NAME': 'web', 'USER': 'web', 'PASSWORD': '{{pw}}', 'HOST': 'pg.internal', 'PORT': '5432'}
>>> settings.SECRET_KEY
'django-insecure-{{b62_40}}'
"""),
    ("java-spring-env-dump", """2026-12-02 07:22:11.442 DEBUG 1 --- [main] o.s.c.e.PropertySourcesPropertyResolver : Found key 'spring.mail.password' in PropertySource 'systemEnvironment' with value of type String: {{pw}}
2026-12-02 07:22:11.443 DEBUG 1 --- [main] o.s.c.e.PropertySourcesPropertyResolver : Found key 'app.jwt.secret' in PropertySource 'applicationConfig' with value of type String: {{b64_64}}
"""),
    ("node-config-console-log", """[api] config loaded {
[api]   port: 3000,
[api]   mongoUri: 'mongodb://api:{{upw}}@mongo-0.mongo:27017,mongo-1.mongo:27017/api?replicaSet=rs0',
[api]   stripe: { secretKey: '{{sklive}}', webhookSecret: '{{whsec}}' },
[api]   session: { secret: '{{hex64}}' }
[api] }
"""),
    ("go-struct-dump", """2026/12/02 07:41:09 config: &{Listen::8443 DB:{Host:pg.internal User:svc Password:{{pw}}} S3:{Bucket:acme-media AccessKey:{{akia}} SecretKey:{{awssecret}}}}
"""),
    ("ruby-rails-credentials-show", """$ bin/rails credentials:show
aws:
  access_key_id: {{akia}}
  secret_access_key: {{awssecret}}
secret_key_base: {{hex64}}{{hex64}}
"""),
    ("php-artisan-tinker-config", """> config('services')
= [
    "mailgun" => [
      "domain" => "mg.acme.io",
      "secret" => "{{mailgun}}",
    ],
    "stripe" => [
      "key" => "pk_live_51{{~sha256}}",
      "secret" => "{{sklive}}",
    ],
  ]
"""),
    ("dotnet-user-secrets-list", """$ dotnet user-secrets list
Authentication:Google:ClientSecret = GOCSPX-{{b62_32}}
ConnectionStrings:Redis = redis.internal:6380,password={{apw}},ssl=True,abortConnect=False
Logging:LogLevel:Default = Information
"""),
    ("powershell-credential-trace", """PS C:\\> $cred = New-Object System.Management.Automation.PSCredential('CORP\\svc-sql', (ConvertTo-SecureString '{{pw}}' -AsPlainText -Force))
PS C:\\> Invoke-Sqlcmd -ServerInstance sql01 -Credential $cred -Query "SELECT @@VERSION"
"""),
    ("basic-auth-header-curl-v", """* Connected to artifactory.acme.io (10.1.2.3) port 443
* Server auth using Basic with user 'ci-reader'
> GET /artifactory/api/storage/libs-release HTTP/1.1
> Host: artifactory.acme.io
> Authorization: Basic {{b64_32}}
> User-Agent: curl/8.5.0
"""),
    ("artifactory-api-key", """$ jf config show
Server ID:                      acme
JFrog Platform URL:             https://acme.jfrog.io/
Artifactory URL:                https://acme.jfrog.io/artifactory/
User:                           ci-bot
Access token:                   {{jwt}}
Default:                        true
"""),
    ("cloudflare-wrangler-whoami", """$ cat ~/.wrangler/config/default.toml
oauth_token = "{{b62_40}}"
expiration_time = "2026-12-02T08:45:12.871Z"
refresh_token = "{{b62_40}}"
scopes = [ "account:read", "user:read", "workers:write" ]
"""),
    ("consul-acl-bootstrap", """$ consul acl bootstrap
AccessorID:       {{~uuid}}
SecretID:         {{uuid}}
Description:      Bootstrap Token (Global Management)
Local:            false
Create Time:      2026-12-02 07:40:00.118 +0000 UTC
Policies:
   00000000-0000-0000-0000-000000000001 - global-management
"""),
    ("ldapsearch-trace", """+ ldapsearch -x -H ldaps://ldap.acme.io -D 'cn=admin,dc=acme,dc=io' -w '{{pw}}' -b 'ou=people,dc=acme,dc=io' '(uid=jdoe)' mail
# jdoe, people, acme.io
dn: uid=jdoe,ou=people,dc=acme,dc=io
mail: jdoe@acme.io
"""),
    ("smtp-auth-swaks", """$ swaks --to ops@acme.io --server smtp.office365.com:587 --tls --auth LOGIN --auth-user alerts@acme.io --auth-password '{{pw}}'
=== Trying smtp.office365.com:587...
=== Connected to smtp.office365.com.
<-  220 AM0PR02CA0001.outlook.office365.com Microsoft ESMTP MAIL Service ready
"""),
    ("htpasswd-plain-and-bcrypt", """$ cat /etc/nginx/.htpasswd
ops:$apr1${{~id8}}${{~b62_32}}
$ cat /root/htpasswd-notes.txt
ops / {{pw}}
"""),
]
