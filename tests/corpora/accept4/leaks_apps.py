# ruff: noqa: E501  (output lines as tools print them; splitting them would change their shape)
"""Secret-bearing application logs, stack traces, CI logs, credential files, keys, tokens and DSNs."""

from __future__ import annotations

from tests.corpora.accept4.case import B64, HEX, URLSAFE, Case, b64, case, rnd

_JWT = ("eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiI" + rnd("jwt2b", 90, URLSAFE) + "."
        + rnd("jwt2s", 43, URLSAFE))

APPS: list[Case] = [
    case("spring-jdbc-url-password", "jdbc url", """2026-12-02 04:22:10.311  INFO 1 --- [           main] com.zaxxer.hikari.HikariDataSource       : HikariPool-1 - Starting...
2026-12-02 04:22:10.902 ERROR 1 --- [           main] com.zaxxer.hikari.pool.HikariPool        : HikariPool-1 - Exception during pool initialization for jdbc:postgresql://orders-db:5432/orders?user=orders&password=<<pw>>&ssl=true
""", pw=rnd("jdbcpw", 18)),
    case("spring-actuator-env", "actuator env", """{"activeProfiles":["prod"],"propertySources":[{"name":"systemEnvironment","properties":{"SPRING_MAIL_PASSWORD":{"value":"<<pw>>","origin":"System Environment Property \\"SPRING_MAIL_PASSWORD\\""},"JAVA_HOME":{"value":"/opt/java/openjdk"}}}]}
""", pw=rnd("actuator", 16)),
    case("spring-application-yml", "yaml config", """spring:
  datasource:
    url: jdbc:mysql://mysql:3306/shop
    username: shop
    password: <<pw>>
  security:
    oauth2:
      client:
        registration:
          okta:
            client-id: 0oa1b2c3d4e5f6g7h8i9
            client-secret: <<cs>>
""", pw=rnd("springyml", 16), cs=rnd("oktacs", 40, URLSAFE)),
    case("jdbc-sqlserver", "jdbc url", """Caused by: com.microsoft.sqlserver.jdbc.SQLServerException: Login failed for user 'sa'. ClientConnectionId:3c1f0a9e-2b7d-4e6f-8a1b-9c0d2e3f4a5b
	at com.acme.db.Pool.open(Pool.java:88) url=jdbc:sqlserver://mssql-1:1433;databaseName=erp;user=sa;password=<<pw>>;encrypt=true
""", pw=rnd("mssqlpw", 16) + "$"),
    case("java-props-map", "logged map", """04:22:31.118 [main] DEBUG c.a.cfg.ConfigLoader - loaded {mail.host=smtp.acme.io, mail.user=alerts, mail.password=<<pw>>, mail.port=587}
""", pw=rnd("javamap", 16)),
    case("java-keystore-flag", "command line", """root         1  5.2 10.1 5123456 812345 ?      Ssl  Nov30 120:01 java -Xmx2g -Djavax.net.ssl.keyStore=/etc/ssl/app.jks -Djavax.net.ssl.keyStorePassword=<<pw>> -jar /app/app.jar
""", pw=rnd("jkspw", 14)),
    case("node-mongo-error", "url password", """MongoServerSelectionError: connection <monitor> to 10.1.2.3:27017 closed
    at Timeout._onTimeout (/app/node_modules/mongodb/lib/sdam/topology.js:278:38) {
  reason: TopologyDescription { type: 'Unknown' },
  connectionString: 'mongodb://api:<<pw>>@mongo-0.mongo:27017,mongo-1.mongo:27017/api?replicaSet=rs0'
}
""", pw=rnd("nodemongo", 20)),
    case("node-process-env", "logged object", """{
  NODE_ENV: 'production',
  STRIPE_SECRET_KEY: '<<sk>>',
  GITHUB_CLIENT_SECRET: '<<gh>>',
  PORT: '3000'
}
""", sk="sk_" + "live_" + rnd("stripe3", 24), gh=rnd("ghcs", 40, HEX)),
    case("node-config-object", "logged object", """[config] { db: { host: 'pg.internal', port: 5432, user: 'web', password: '<<pw>>' }, cache: { ttl: 60 } }
""", pw=rnd("nodecfg", 16)),
    case("npm-err-authtoken", "npmrc", """npm ERR! code E401
npm ERR! Unable to authenticate, your authentication token seems to be invalid.
npm ERR! To correct this please try logging in again with:
npm ERR!     npm login
npm verb config //npm.pkg.github.com/:_authToken=<<tok>>
""", tok="ghp" + "_" + rnd("ghp3", 36)),
    case("python-traceback-locals", "traceback locals", """Traceback (most recent call last):
  File "/app/sync.py", line 41, in main
    client = connect(host, user, password)
    host = 'sftp.partner.example'
    user = 'acme'
    password = '<<pw>>'
  File "/app/sync.py", line 12, in connect
    raise ConnectionError("auth failed")
ConnectionError: auth failed
""", pw=rnd("pytb", 14)),
    case("django-settings", "python settings", """$ python manage.py diffsettings | grep -i -E 'secret|password'
SECRET_KEY = '<<sk>>'
EMAIL_HOST_PASSWORD = '<<ep>>'
""", sk="django-insecure-" + rnd("djsk", 50, "abcdefghijklmnopqrstuvwxyz0123456789!@#%^&*(-_=+)"), ep=rnd("djep", 16)),
    case("sqlalchemy-error", "url password", """sqlalchemy.exc.OperationalError: (psycopg2.OperationalError) connection to server at "10.3.0.5", port 5432 failed: timeout expired
(Background on this error at: https://sqlalche.me/e/20/e3q8)
engine url: postgresql+psycopg2://reporting:<<pw>>@10.3.0.5:5432/reports
""", pw=rnd("sqlapw", 18)),
    case("python-dict-repr", "logged object", """INFO:root:settings={'region': 'eu-west-1', 'api_key': '<<k>>', 'timeout': 30, 'client_secret': '<<cs>>'}
""", k=rnd("pydict", 32), cs=rnd("pydictcs", 40)),
    case("go-panic-dsn", "url password", """panic: failed to connect: dial tcp 10.2.0.9:5432: connect: connection refused (dsn="host=10.2.0.9 port=5432 user=ledger password=<<pw>> dbname=ledger sslmode=verify-full")

goroutine 1 [running]:
main.main()
	/src/cmd/ledger/main.go:57 +0x1c5
""", pw=rnd("godsn", 18)),
    case("go-struct-dump", "logged struct", """2026/12/02 04:24:00 config: {Listen::8080 DB:{Host:db User:ledger Password:<<pw>> Name:ledger} Redis:{Addr:redis:6379 Password:<<rp>>}}
""", pw=rnd("gostruct", 16), rp=rnd("gostruct2", 16)),
    case("gha-curl-token", "CI log", """2026-12-02T04:25:01.0000000Z ##[group]Run curl -sS -H "Authorization: token <<tok>>" https://api.github.com/repos/acme/api/releases
2026-12-02T04:25:01.0000000Z curl -sS -H "Authorization: token <<tok>>" https://api.github.com/repos/acme/api/releases
2026-12-02T04:25:01.0000000Z shell: /usr/bin/bash -e {0}
2026-12-02T04:25:01.0000000Z ##[endgroup]
""", tok="github" + "_pat_" + rnd("ghpat", 22) + "_" + rnd("ghpat2", 59)),
    case("gitlab-clone-job-token", "url password", """Fetching changes with git depth set to 20...
Initialized empty Git repository in /builds/acme/api/.git/
Created fresh repository.
$ git clone https://gitlab-ci-token:<<tok>>@gitlab.acme.io/acme/shared-config.git
Cloning into 'shared-config'...
""", tok="glcbt-64_" + rnd("glcbt2", 20, URLSAFE)),
    case("gitlab-pat-echo", "CI log", """$ export GITLAB_TOKEN=<<tok>>
$ glab mr list
""", tok="glpat-" + rnd("glpat", 20, URLSAFE)),
    case("jenkins-curl-u", "command line in CI log", """[Pipeline] sh
+ curl -X POST -u deploy-bot:<<tok>> https://jenkins.acme.io/job/deploy/buildWithParameters?ENV=prod
""", tok="11" + rnd("jenkins", 32, HEX)),
    case("jenkins-credentials-xml", "xml password", """<com.cloudbees.plugins.credentials.impl.UsernamePasswordCredentialsImpl>
  <scope>GLOBAL</scope>
  <id>nexus</id>
  <username>deployer</username>
  <password><<pw>></password>
</com.cloudbees.plugins.credentials.impl.UsernamePasswordCredentialsImpl>
""", pw=rnd("jenkxml", 18)),
    case("dotenv", "dotenv", """$ cat .env
APP_ENV=production
APP_KEY=base64:<<appkey>>
DB_CONNECTION=mysql
DB_PASSWORD=<<dbpw>>
MAIL_PASSWORD=<<mail>>
PUSHER_APP_SECRET=<<pusher>>
AWS_DEFAULT_REGION=eu-west-1
""", appkey=rnd("laravel", 43, B64) + "=", dbpw=rnd("dotdb", 16), mail=rnd("dotmail", 16), pusher=rnd("dotpush", 20, HEX)),
    case("dotenv-exported-quoted", "dotenv", """export SENDGRID_API_KEY='SG.<<a>>.<<b>>'
export ENCRYPTION_KEY="<<enc>>"
export HMAC_SECRET=<<hmac>>
""", a=rnd("sg3", 22, URLSAFE), b=rnd("sg4", 43, URLSAFE), enc=rnd("enckey", 64, HEX), hmac=rnd("hmac", 48)),
    case("npmrc", "npmrc", """$ cat ~/.npmrc
@acme:registry=https://npm.pkg.github.com/
//npm.pkg.github.com/:_authToken=<<gh>>
//registry.npmjs.org/:_authToken=<<npm>>
always-auth=true
""", gh="ghp" + "_" + rnd("ghp4", 36), npm="npm" + "_" + rnd("npm3", 36)),
    case("npmrc-legacy-auth", "npmrc", """registry=https://nexus.acme.io/repository/npm-group/
_auth=<<a>>
email=ci@acme.io
""", a=b64("ci:" + rnd("nexusnpm", 16))),
    case("pypirc", "pypirc", """[distutils]
index-servers =
    pypi
    internal

[pypi]
username = __token__
password = pypi-<<tok>>

[internal]
repository = https://pypi.acme.io/
username = ci
password = <<pw>>
""", tok="AgEIcHlwaS5vcmc" + rnd("pypi", 140, URLSAFE), pw=rnd("pypirc", 16)),
    case("netrc", "netrc", """$ cat ~/.netrc
machine github.com login acme-bot password <<gh>>
machine artifactory.acme.io
  login ci
  password <<pw>>
""", gh="ghp" + "_" + rnd("ghp5", 36), pw=rnd("netrc", 20)),
    case("git-credentials", "url password", """$ cat ~/.git-credentials
https://oauth2:<<gl>>@gitlab.acme.io
https://acme-bot:<<gh>>@github.com
""", gl="glpat-" + rnd("glpat2", 20, URLSAFE), gh="ghp" + "_" + rnd("ghp6", 36)),
    case("pip-conf", "url password", """$ pip config list
global.extra-index-url='https://ci:<<pw>>@pypi.acme.io/simple/'
global.timeout='60'
""", pw=rnd("pipconf", 18)),
    case("maven-settings", "xml password", """<settings>
  <servers>
    <server>
      <id>acme-releases</id>
      <username>deployer</username>
      <password><<pw>></password>
    </server>
    <server>
      <id>ossrh</id>
      <username>acme</username>
      <password>{<<enc>>}</password>
    </server>
  </servers>
</settings>
""", pw=rnd("mvn", 18), enc=rnd("mvnenc", 44, B64)),
    case("gradle-properties", "properties", """$ cat ~/.gradle/gradle.properties
org.gradle.jvmargs=-Xmx2g
ossrhUsername=acme
ossrhPassword=<<pw>>
signing.keyId=24875D73
signing.password=<<sp>>
""", pw=rnd("gradle", 16), sp=rnd("gradlesign", 16)),
    case("composer-auth", "json credentials", """{
    "http-basic": {
        "repo.packagist.com": {
            "username": "token",
            "password": "<<pw>>"
        }
    },
    "github-oauth": {
        "github.com": "<<gh>>"
    }
}
""", pw=rnd("composer", 40, HEX), gh="gho" + "_" + rnd("gho1", 36)),
    case("s3cfg", "ini password", """[default]
access_key = <<ak>>
secret_key = <<sk>>
host_base = s3.eu-west-1.amazonaws.com
""", ak="AKIA" + rnd("s3cfgak", 16, "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567"), sk=rnd("s3cfgsk", 40, B64)),
    case("minio-alias-list", "cloud credentials", """local
  URL       : http://localhost:9000
  AccessKey : minioadmin
  SecretKey : <<sk>>
  API       : s3v4
  Path      : auto
""", sk=rnd("miniosk", 40)),
    case("openssh-private-key", "private key", """$ cat ~/.ssh/id_ed25519
-----BEGIN OPENSSH PRIVATE KEY-----
b3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQAAAAAAAAABAAAAMwAAAAtzc2gtZW
<<k1>>
<<k2>>
-----END OPENSSH PRIVATE KEY-----
""", k1=rnd("ossh1", 70, B64), k2=rnd("ossh2", 70, B64)),
    case("rsa-private-key", "private key", """-----BEGIN RSA PRIVATE KEY-----
MIIEpAIBAAKCAQEA<<k1>>
<<k2>>
<<k3>>
-----END RSA PRIVATE KEY-----
""", k1=rnd("rsa1", 48, B64), k2=rnd("rsa2", 64, B64), k3=rnd("rsa3", 64, B64)),
    case("encrypted-pkcs8", "private key", """-----BEGIN ENCRYPTED PRIVATE KEY-----
MIIFHDBOBgkqhkiG9w0BBQ0wQTApBgkqhkiG9w0BBQwwHAQI<<k1>>
<<k2>>
-----END ENCRYPTED PRIVATE KEY-----
""", k1=rnd("p8a", 16, B64), k2=rnd("p8b", 64, B64)),
    case("putty-key", "private key", """PuTTY-User-Key-File-3: ssh-ed25519
Encryption: none
Comment: oncall@laptop
Public-Lines: 2
AAAAC3NzaC1lZDI1NTE5AAAAIBm1Zl7pQm2qFqV6Xzq0r9pJt0n7zB1cQ5sKq8dF3hY1
Private-Lines: 1
<<k>>
Private-MAC: <<mac>>
""", k=rnd("putty", 44, B64), mac=rnd("puttymac", 64, HEX)),
    case("jwt-in-log", "jwt", """{"level":"debug","ts":"2026-12-02T04:26:00Z","msg":"upstream request","headers":{"authorization":"Bearer <<jwt>>","x-request-id":"5f3c"}}
""", jwt=_JWT),
    case("curl-v-basic", "basic auth", """*   Trying 10.0.4.7:443...
* Connected to registry.internal (10.0.4.7) port 443
> GET /v2/_catalog HTTP/1.1
> Host: registry.internal
> Authorization: Basic <<b>>
> User-Agent: curl/8.5.0
>
< HTTP/1.1 200 OK
""", b=b64("admin:" + rnd("curlv", 14))),
    case("slack-webhook", "webhook url", """alertmanager.yml:
  slack_configs:
  - api_url: https://hooks.slack.com/services/T0AB12CDE/B0FG34HIJ/<<wh>>
    channel: '#alerts'
""", wh=rnd("slackwh2", 24)),
    case("discord-webhook", "webhook url", """POST https://discord.com/api/webhooks/1123456789012345678/<<wh>> 204
""", wh=rnd("discord", 68, URLSAFE)),
    case("teams-webhook", "webhook url", """notify: https://acme.webhook.office.com/webhookb2/7c1e0f2a-1b2c-4d5e-8f90-a1b2c3d4e5f6@72f988bf-86f1-41af-91ab-2d7cd011db47/IncomingWebhook/<<a>>/0b5f6a1e-3c2d-4d8e-9f10-7a6b5c4d3e2f/V2<<b>>
""", a=rnd("teams1", 32, HEX), b=rnd("teams2", 43, URLSAFE)),
    case("slack-bot-token", "slack token", """SLACK_BOT_TOKEN=<<t>>
""", t="xox" + "b-" + rnd("xoxb1", 12, "0123456789") + "-" + rnd("xoxb2", 13, "0123456789") + "-" + rnd("xoxb3", 24)),
    case("anthropic-key", "api key", """[agent] using model claude-sonnet with key <<k>>
""", k="sk-" + "ant-api03-" + rnd("ant", 95, URLSAFE) + "AA"),
    case("sendgrid-in-yaml", "api key", """smtp:
  host: smtp.sendgrid.net
  user: apikey
  pass: SG.<<a>>.<<b>>
""", a=rnd("sg5", 22, URLSAFE), b=rnd("sg6", 43, URLSAFE)),
    case("datadog-agent-yaml", "api key", """$ grep -E '^(api_key|site)' /etc/datadog-agent/datadog.yaml
api_key: <<k>>
site: datadoghq.eu
""", k=rnd("ddagent", 32, HEX)),
    case("age-secret-key", "private key", """# created: 2026-11-01T10:00:00Z
# public key: age1ql3z7hjy54pw3hyww5ayyfg7zqgvc7w3j2elw8zmrj2kg5sfn9aqmcac8p
AGE-SECRET-KEY-1<<k>>
""", k=rnd("age", 58, "QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L")),
    case("wireguard-conf", "private key", """[Interface]
Address = 10.8.0.2/24
PrivateKey = <<k>>
DNS = 10.8.0.1

[Peer]
PublicKey = xTIBA5rboUvnH4htodjb6e697QjLERt1NAB4mZqp8Dg=
PresharedKey = <<psk>>
Endpoint = vpn.acme.io:51820
""", k=rnd("wgpriv", 43, B64) + "=", psk=rnd("wgpsk", 43, B64) + "="),
    case("adonet-conn", "connection string", """Unhandled exception. System.Data.SqlClient.SqlException (0x80131904): A network-related error occurred.
   ConnectionString: Server=tcp:acme-sql.database.windows.net,1433;Initial Catalog=erp;User ID=erp_app;Password=<<pw>>;Encrypt=True;
""", pw=rnd("adonet", 16) + "!"),
    case("odbc-pwd", "connection string", """DRIVER={ODBC Driver 18 for SQL Server};SERVER=mssql-2;DATABASE=hr;UID=hr_ro;PWD=<<pw>>;TrustServerCertificate=yes
""", pw=rnd("odbc", 14)),
    case("oracle-easy-connect", "oracle credentials", """$ sqlplus -S scott/<<pw>>@//oracle-1.corp:1521/ORCLPDB1 @report.sql
""", pw=rnd("oracle", 12)),
    case("perl-dbi", "connection string", """DBI connect('dbname=crm;host=pg-crm','crm','<<pw>>',...) failed: FATAL:  password authentication failed for user "crm" at /opt/crm/lib/DB.pm line 22.
""", pw=rnd("perldbi", 14)),
    case("ecto-config", "elixir config", """config :acme, Acme.Repo,
  username: "acme",
  password: "<<pw>>",
  hostname: "db.internal",
  pool_size: 10
""", pw=rnd("ecto", 18)),
    case("rails-database-yml", "yaml config", """production:
  adapter: postgresql
  database: shop_production
  username: shop
  password: <%= ENV.fetch("DB_PASSWORD", "<<pw>>") %>
""", pw=rnd("railsdb", 16)),
    case("kafka-jaas", "jaas password", """sasl.mechanism=SCRAM-SHA-512
security.protocol=SASL_SSL
sasl.jaas.config=org.apache.kafka.common.security.scram.ScramLoginModule required username="events" password="<<pw>>";
""", pw=rnd("kafka", 20)),
    case("nats-creds", "nats credentials", """-----BEGIN NATS USER JWT-----
eyJ0eXAiOiJKV1QiLCJhbGciOiJlZDI1NTE5LW5rZXkifQ.<<jwt>>
------END NATS USER JWT------

************************* IMPORTANT *************************
NKEY Seed printed below can be used to sign and prove identity.
NKEYs are sensitive and should be treated as secrets.

-----BEGIN USER NKEY SEED-----
SUA<<seed>>
------END USER NKEY SEED------
""", jwt=rnd("natsjwt", 200, URLSAFE), seed=rnd("nkey", 55, "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567")),
    case("elastic-setup-passwords", "printed password", """Changed password for user apm_system
PASSWORD apm_system = <<p1>>

Changed password for user elastic
PASSWORD elastic = <<p2>>
""", p1=rnd("es1", 20), p2=rnd("es2", 20)),
    case("elastic-reset-password", "printed password", """Password for the [elastic] user successfully reset.
New value: <<pw>>
""", pw=rnd("esreset", 20, URLSAFE + "*=")),
    case("grafana-ini", "ini password", """[security]
admin_user = admin
admin_password = <<pw>>
secret_key = <<sk>>
""", pw=rnd("grafini", 16), sk=rnd("grafsk", 32)),
    case("argocd-initial-password", "printed password", """$ argocd admin initial-password -n argocd
<<pw>>

 This password must be only used for first time login. We strongly recommend you update the password using `argocd account update-password`.
""", pw=rnd("argo2", 16, URLSAFE)),
    case("gh-auth-token", "github token", """$ gh auth token
<<t>>
""", t="gho" + "_" + rnd("gho2", 36)),
    case("swarm-join-token", "bootstrap token", """To add a worker to this swarm, run the following command:

    docker swarm join --token SWMTKN-1-<<a>>-<<b>> 10.0.0.20:2377
""", a=rnd("swarm1", 50, "abcdefghijklmnopqrstuvwxyz0123456789"), b=rnd("swarm2", 25, "abcdefghijklmnopqrstuvwxyz0123456789")),
    case("jupyter-token-url", "url query token", """[I 2026-12-02 04:27:00.000 ServerApp] Jupyter Server 2.14.2 is running at:
[I 2026-12-02 04:27:00.000 ServerApp] http://notebook-0:8888/lab?token=<<t>>
""", t=rnd("jupyter", 48, HEX)),
    case("ngrok-config", "api key", """version: "2"
authtoken: <<t>>
""", t=rnd("ngrok1", 27) + "_" + rnd("ngrok2", 21)),
    case("heroku-auth-token", "printed token", """$ heroku auth:token
 ›   Warning: token will expire 01/01/2027
 ›   Use heroku authorizations:create to generate a long-term token
HRKU-<<t>>
""", t=rnd("heroku", 60, URLSAFE)),
    case("rabbitmq-definitions", "password hash", """{"users":[{"name":"orders","password_hash":"<<h>>","hashing_algorithm":"rabbit_password_hashing_sha256","tags":["management"]}]}
""", h=rnd("rmqhash", 48, B64)),
    case("rclone-conf", "ini password", """[b2]
type = b2
account = 0012a3b4c5d6e7f0000000001
key = <<k>>
""", k="K001" + rnd("b2key", 27)),
    case("openvpn-static-key", "private key", """-----BEGIN OpenVPN Static key V1-----
<<k1>>
<<k2>>
-----END OpenVPN Static key V1-----
""", k1=rnd("ovpn1", 32, HEX), k2=rnd("ovpn2", 32, HEX)),
    case("twilio-env-table", "environment table", """NAME                     VALUE
TWILIO_ACCOUNT_SID       AC5f1c2b3a4d6e7f80910a1b2c3d4e5f6a7
TWILIO_AUTH_TOKEN        <<tok>>
""", tok=rnd("twtok", 32, HEX)),
    case("cloudflare-wrangler", "api key", """$ cat ~/.wrangler/config/default.toml
oauth_token = "<<t>>"
refresh_token = "<<r>>"
expiration_time = "2026-12-02T05:27:00.000Z"
""", t=rnd("wrangler", 43, URLSAFE), r=rnd("wranglerr", 43, URLSAFE)),
]
