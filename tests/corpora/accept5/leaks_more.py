# ruff: noqa: E501  (output lines as tools print them; splitting them would change their shape)
"""Leak cases, second round: cluster bootstrap tokens, tunnels and agents, PaaS env listings, XML/TOML/INI
configuration of servers and package managers, Windows shells."""

CASES: list[tuple[str, str]] = [
    ("kubeadm-join-command", """$ kubeadm token create --print-join-command
kubeadm join 10.0.0.10:6443 --token {{~id8}}.{{b62_32}} --discovery-token-ca-cert-hash sha256:{{~sha256}}
"""),
    ("k3s-node-token", """$ sudo cat /var/lib/rancher/k3s/server/node-token
K10{{~sha256}}::server:{{hex32}}
"""),
    ("tailscale-up-authkey", """+ tailscale up --authkey=tskey-auth-k{{b62_32}}-{{b62_40}} --hostname=ci-runner-7 --advertise-tags=tag:ci
Success.
"""),
    ("ngrok-config", """$ cat ~/.config/ngrok/ngrok.yml
version: "2"
authtoken: 2{{b62_32}}_{{b62_32}}
tunnels:
  web:
    proto: http
    addr: 8080
"""),
    ("cloudflared-tunnel-token", """$ cloudflared tunnel token prod-edge
eyJhIjoi{{b62_40}}{{b62_40}}{{b62_40}}In0=
"""),
    ("teleport-tokens-add", """$ tctl tokens add --type=node --ttl=1h
The invite token: {{hex32}}
This token will expire in 60 minutes.

Run this on the new node to join the cluster:

> teleport start \\
   --roles=node \\
   --token={{hex32}} \\
   --ca-pin=sha256:{{~sha256}} \\
   --auth-server=teleport.acme.io:443
"""),
    ("supabase-status", """$ supabase status
         API URL: http://127.0.0.1:54321
     GraphQL URL: http://127.0.0.1:54321/graphql/v1
          DB URL: postgresql://postgres:postgres@127.0.0.1:54322/postgres
      JWT secret: {{b64_32}}
        anon key: {{~b62_40}}
service_role key: {{jwt}}
"""),
    ("vercel-env-pull", """$ vercel env pull .env.production --environment=production && cat .env.production
Downloading `production` Environment Variables for Project web
✅  Created .env.production file  [412ms]
# Created by Vercel CLI
DATABASE_URL="postgres://default:{{apw}}@ep-cool-dawn-123456.eu-central-1.aws.neon.tech:5432/verceldb?sslmode=require"
NEXTAUTH_SECRET="{{b64_32}}"
VERCEL_ENV="production"
"""),
    ("netlify-env-list-plain", """$ netlify env:list --plain
CONTENTFUL_DELIVERY_TOKEN={{b62_40}}
CONTENTFUL_SPACE_ID=x1y2z3a4b5c6
GATSBY_ALGOLIA_ADMIN_KEY={{hex32}}
"""),
    ("heroku-config-json", """$ heroku config -a shop-prod --json
{
  "DATABASE_URL": "postgres://u{{~id12}}:p{{hex64}}@ec2-52-1-2-3.compute-1.amazonaws.com:5432/d{{~id12}}",
  "REDIS_URL": "rediss://:p{{hex64}}@ec2-34-5-6-7.compute-1.amazonaws.com:21830",
  "RAILS_MASTER_KEY": "{{hex32}}",
  "WEB_CONCURRENCY": "2"
}
"""),
    ("firebase-functions-config", """$ firebase functions:config:get
{
  "stripe": {
    "secret": "{{sklive}}",
    "webhook": "{{whsec}}"
  },
  "mailchimp": {
    "apikey": "{{hex32}}-us21"
  }
}
"""),
    ("fly-ssh-printenv", """$ fly ssh console -C printenv -a api-prod
Connecting to fdaa:0:1234:a7b:1a2:abcd:ef01:2... complete
FLY_APP_NAME=api-prod
FLY_REGION=fra
PRIMARY_REGION=fra
SECRET_KEY_BASE={{hex64}}
DATABASE_URL=postgres://api_prod:{{apw}}@api-prod-db.flycast:5432/api_prod?sslmode=disable
"""),
    ("tomcat-users-xml", """$ cat /opt/tomcat/conf/tomcat-users.xml
<?xml version="1.0" encoding="UTF-8"?>
<tomcat-users xmlns="http://tomcat.apache.org/xml" version="1.0">
  <role rolename="manager-gui"/>
  <user username="admin" password="{{pw}}" roles="manager-gui,admin-gui"/>
  <user username="deployer" password="{{pw}}" roles="manager-script"/>
</tomcat-users>
"""),
    ("tomcat-context-resource", """$ grep -A8 '<Resource' /opt/tomcat/conf/context.xml
    <Resource name="jdbc/OrdersDB" auth="Container" type="javax.sql.DataSource"
              maxTotal="50" maxIdle="10" maxWaitMillis="10000"
              username="orders" password="{{pw}}"
              driverClassName="org.postgresql.Driver"
              url="jdbc:postgresql://pg-primary.internal:5432/orders"/>
"""),
    ("iis-web-config", """PS C:\\inetpub\\wwwroot\\crm> Get-Content web.config | Select-String -Pattern 'connectionString|appSettings' -Context 0,3
> <connectionStrings>
    <add name="CrmDb" connectionString="Data Source=SQL02;Initial Catalog=Crm;User Id=crm_web;Password={{pw}};" providerName="System.Data.SqlClient" />
> <appSettings>
    <add key="SmtpPassword" value="{{pw}}" />
    <add key="GoogleMapsKey" value="{{gcpapikey}}" />
"""),
    ("cargo-credentials-toml", """$ cat ~/.cargo/credentials.toml
[registry]
token = "cio{{b62_32}}"

[registries.acme]
token = "Bearer {{b62_40}}"
"""),
    ("poetry-auth-toml", """$ cat ~/.config/pypoetry/auth.toml
[http-basic.acme]
username = "deploy"
password = "{{pw}}"
"""),
    ("odbc-ini", """$ cat /etc/odbc.ini
[Warehouse]
Driver      = /opt/snowflake/snowflakeodbc/lib/universal/libSnowflake.dylib
Server      = acme-xy12345.snowflakecomputing.com
UID         = ETL_SVC
PWD         = {{pw}}
Database    = ANALYTICS
"""),
    ("windows-set-env", """C:\\build> set
ALLUSERSPROFILE=C:\\ProgramData
AZURE_CLIENT_SECRET={{b62_40}}
COMPUTERNAME=BUILD-07
NUGET_API_KEY=oy2{{b62_40}}
OS=Windows_NT
"""),
    ("powershell-get-childitem-env", """PS C:\\> Get-ChildItem Env: | Where-Object Name -like '*TOKEN*' | Format-Table -AutoSize

Name                 Value
----                 -----
ARM_ACCESS_TOKEN     {{jwt}}
SONAR_TOKEN          squ_{{hex40}}

"""),
    ("docker-inspect-env", """$ docker inspect --format '{{json .Config.Env}}' billing-worker | jq .
[
  "PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
  "BRAINTREE_PRIVATE_KEY={{hex32}}",
  "BRAINTREE_MERCHANT_ID=acmeeu",
  "LANG=C.UTF-8"
]
"""),
    ("rabbitmqctl-trace", """+ rabbitmqctl add_user shipping {{pw}}
Adding user "shipping" ...
Done. Don't forget to grant the user permissions to some virtual hosts! See 'rabbitmqctl help set_permissions' to learn more.
"""),
    ("etcdctl-user-trace", """+ etcdctl --endpoints=https://10.0.0.11:2379 --user root:{{pw}} member list -w table
+------------------+---------+--------+-------------------------+-------------------------+------------+
|        ID        | STATUS  |  NAME  |       PEER ADDRS        |      CLIENT ADDRS       | IS LEARNER |
+------------------+---------+--------+-------------------------+-------------------------+------------+
| {{~id12}}abcd | started | etcd-1 | https://10.0.0.11:2380  | https://10.0.0.11:2379  |      false |
+------------------+---------+--------+-------------------------+-------------------------+------------+
"""),
    ("nomad-var-get", """$ nomad var get -out json nomad/jobs/billing
{
  "Namespace": "default",
  "Path": "nomad/jobs/billing",
  "CreateIndex": 41122,
  "Items": {
    "db_password": "{{pw}}",
    "stripe_key": "{{rklive}}"
  }
}
"""),
    ("consul-kv-get-recurse", """$ consul kv get -recurse config/billing/
config/billing/db_host:pg-primary.internal
config/billing/db_password:{{pw}}
config/billing/smtp_pass:{{pw12}}
"""),
    ("certbot-eab", """+ certbot register --agree-tos -m ops@acme.io --server https://acme.zerossl.com/v2/DV90 --eab-kid {{~b62_32}} --eab-hmac-key {{b64_64}}
Account registered.
"""),
    ("wg-show-private-key", """$ sudo wg show wg0 private-key
{{b64_32}}
"""),
    ("step-ca-provisioner-password", """$ cat /etc/step-ca/secrets/password
{{pw24}}
"""),
    ("aws-ecr-login-password", """$ aws ecr get-login-password --region eu-west-1
eyJwYXlsb2FkIjoi{{b62_40}}{{b62_40}}{{b62_40}}{{b62_40}}IiwidmVyc2lvbiI6IjIiLCJ0eXBlIjoiREFUQV9LRVkiLCJleHBpcmF0aW9uIjoxNzY0NzA0MDAwfQ==
"""),
    ("gcloud-adc-json", """$ cat ~/.config/gcloud/application_default_credentials.json
{
  "account": "",
  "client_id": "764086051850-6qr4p6gpi6hn506pt8ejuq83di341hur.apps.googleusercontent.com",
  "client_secret": "d-FL95Q19q7MQmFpd7hHD0Ty",
  "quota_project_id": "acme-prod",
  "refresh_token": "1//0{{b62_40}}{{b62_40}}{{b62_32}}",
  "type": "authorized_user"
}
"""),
    ("putty-ppk", """$ cat deploy.ppk
PuTTY-User-Key-File-3: ssh-ed25519
Encryption: none
Comment: deploy@acme
Public-Lines: 2
AAAAC3NzaC1lZDI1NTE5AAAAI{{~b62_40}}
{{~b62_32}}
Private-Lines: 1
{{b64_32}}
Private-MAC: {{hex64}}
"""),
    ("csv-1password-export", """$ head -3 1password-export.csv
Title,Url,Username,Password,Notes,Type
Prod Postgres,,orders_owner,{{pw}},,Login
Mailgun,https://app.mailgun.com,postmaster@mg.acme.io,{{pw}},,Login
"""),
]
